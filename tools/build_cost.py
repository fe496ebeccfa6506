#!/usr/bin/env python3
"""The binary's compile cost as a count, with no clock in it: the preprocessed lines (`-E -P`) of
every translation unit of src/, each run with its own compile command from compile_commands.json.
A header parsed by many units costs each of them again, so this total moves with what the build
really does and not with how busy the machine is (docs/architecture.md, "Compile cost").

  tools/build_cost.py BUILD                     the total and the ten dearest units
  tools/build_cost.py BUILD --budget FILE       ... and exit 1 when the total passes FILE's by more
                                                than its tolerance (tools/build_budget.json)
  tools/build_cost.py BUILD --tap               the budget check as one TAP case (the unit suite)

BUILD must be configured file by file (not -Dunity=on): a unity build's units are its merged files.
Only meson's configuration is needed, not a build.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_root(build: str) -> str:
    """The source tree BUILD was configured from (meson-info), so a build of another checkout
    counts that checkout's units."""
    try:
        with open(os.path.join(build, "meson-info", "meson-info.json")) as file:
            return json.load(file)["directories"]["source"]
    except (OSError, ValueError, KeyError):
        return ROOT


def binary_units(build: str) -> list:
    """The compile commands of src/'s units (the tests' own units are not the binary's)."""
    path = os.path.join(build, "compile_commands.json")
    try:
        with open(path) as file:
            commands = json.load(file)
    except (OSError, ValueError) as error:
        sys.exit(f"cannot read {path}: {error}")
    src = os.path.join(source_root(build), "src") + os.sep
    units = []
    for entry in commands:
        source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        if "-unity" in os.path.basename(source):
            sys.exit(f"{build} is a unity build: configure one file by file (-Dunity=off) to count units")
        if source.startswith(src) and source.endswith(".cpp"):
            units.append((os.path.relpath(source, src), entry))
    if not units:
        sys.exit(f"no unit of src/ in {path}")
    return units


def preprocessed_lines(entry: dict) -> int:
    """The unit's lines after the preprocessor, with line markers left out (-P)."""
    words = shlex.split(entry["command"])
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if word in ("-c", "-MD", "-MMD"):
            continue
        kept.append(word)
    result = subprocess.run(kept + ["-E", "-P", "-o", "-"], cwd=entry["directory"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if result.returncode != 0:
        sys.exit(f"the preprocessor failed on {entry['file']}:\n{result.stderr.decode(errors='replace')}")
    return result.stdout.count(b"\n")


def measure(build: str) -> list:
    """[(lines, unit)] for every unit, dearest first."""
    units = binary_units(build)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        counts = list(pool.map(lambda unit: preprocessed_lines(unit[1]), units))
    return sorted(zip(counts, (name for name, _ in units)), reverse=True)


def read_budget(path: str) -> tuple:
    try:
        with open(path) as file:
            budget = json.load(file)
        return int(budget["preprocessed_lines"]), float(budget.get("tolerance", 0.05))
    except (OSError, ValueError, KeyError, TypeError) as error:
        sys.exit(f"cannot read the budget {path}: {error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("--budget", help="a JSON file with preprocessed_lines and tolerance")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--tap", action="store_true", help="print the budget check as TAP")
    parser.add_argument("--json", action="store_true", help="the figures as one JSON document")
    args = parser.parse_args()
    if args.tap and not args.budget:
        args.budget = os.path.join(ROOT, "tools", "build_budget.json")

    counts = measure(args.build)
    total = sum(lines for lines, _ in counts)
    if args.json:
        print(json.dumps({"units": len(counts), "preprocessed_lines": total,
                          "top": [{"unit": unit, "lines": lines} for lines, unit in counts[:args.top]]}))
    elif not args.tap:
        print(f"{len(counts)} units, {total:,} preprocessed lines (median {counts[len(counts) // 2][0]:,})")
        for lines, unit in counts[:args.top]:
            print(f"  {lines:>9,}  {unit}")
    if not args.budget:
        return 0

    budget, tolerance = read_budget(args.budget)
    ceiling = int(budget * (1 + tolerance))
    over = total > ceiling
    verdict = (f"{total:,} preprocessed lines in {len(counts)} units against a budget of {budget:,} "
               f"(at most {ceiling:,} with {tolerance:.0%})")
    if args.tap:
        print("TAP version 13\n1..1")
        print(f"{'not ok' if over else 'ok'} 1 - build cost: {verdict}")
        if over:
            print("  # dearest: " + ", ".join(f"{unit} {lines:,}" for lines, unit in counts[:5]))
        return 0
    print(("over budget: " if over else "within budget: ") + verdict)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

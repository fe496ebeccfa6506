#!/usr/bin/env python3
"""The binary's compile cost as a count, with no clock in it: the preprocessed lines (`-E -P`) of
every translation unit of src/, each run with its own compile command from compile_commands.json.
A header parsed by many units costs each of them again, so this total moves with what the build
really does and not with how busy the machine is (docs/architecture.md, "Compile cost").

  tools/build_cost.py BUILD                     the total and the ten dearest units
  tools/build_cost.py BUILD --budget FILE       ... and exit 1 when the total passes FILE's by more
                                                than its tolerance (tools/build_budget.json)
  tools/build_cost.py BUILD --tap               the budget check as one TAP case
  tools/build_cost.py --configure [--tap ...]   BUILD made for the count and removed after: meson
                                                setup of this tree in a temporary directory, file
                                                by file, tests off (the 'build_cost' test)
  ... --as-built                                the units as the project's default unity build
                                                compiles them (8 files a run): what `ninja testio`
                                                parses; the budget's as_built_lines

Without --as-built BUILD must be configured file by file (-Dunity=off), so the count shows what
each file pays for; with it, BUILD is a unity build. Only meson's configuration is needed, not a
build (meson writes the merged files as it configures). Bad input (no such build, the wrong kind
of build, an unreadable budget) is one sentence and exit 2.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What --configure sets up, as tools/build_budget.json was measured: the project's defaults (release,
# MPI when installed) file by file, without the tests' units.
CONFIGURE_OPTIONS = ["-Dunity=off", "-Dtests=disabled"]
# --as-built: the project's defaults as they are (a unity build), without the tests' units.
AS_BUILT_OPTIONS = ["-Dtests=disabled"]


def bad_input(sentence: str):
    """Bad input: one sentence on stderr, exit 2."""
    print(sentence, file=sys.stderr)
    sys.exit(2)


def source_root(build: str) -> str:
    """The source tree BUILD was configured from (meson-info), so a build of another checkout
    counts that checkout's units."""
    try:
        with open(os.path.join(build, "meson-info", "meson-info.json")) as file:
            return json.load(file)["directories"]["source"]
    except (OSError, ValueError, KeyError):
        return ROOT


def binary_units(build: str, as_built: bool) -> list:
    """The compile commands of src/'s units (the tests' own units are not the binary's); as built,
    those of the merged files meson wrote for src/'s targets too."""
    path = os.path.join(build, "compile_commands.json")
    try:
        with open(path) as file:
            commands = json.load(file)
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not JSON"
        bad_input(f"cannot read {path} ({reason}): is {build} a meson build directory?")
    src = os.path.join(source_root(build), "src") + os.sep
    merged_src = os.path.join(os.path.abspath(build), "src") + os.sep
    units, merged = [], 0
    for entry in commands:
        source = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        if "-unity" in os.path.basename(source):
            merged += 1
            if as_built and source.startswith(merged_src):
                units.append((os.path.basename(source), entry))
        elif source.startswith(src) and source.endswith(".cpp"):
            units.append((os.path.relpath(source, src), entry))
    if merged and not as_built:
        bad_input(f"{build} is a unity build: configure one file by file (-Dunity=off) to count units, "
                  "or count it as built with --as-built")
    if as_built and not merged:
        bad_input(f"{build} is configured file by file: --as-built counts a unity build's units")
    if not units:
        bad_input(f"no unit of src/ in {path}")
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


def measure(build: str, as_built: bool) -> list:
    """[(lines, unit)] for every unit, dearest first."""
    units = binary_units(build, as_built)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        counts = list(pool.map(lambda unit: preprocessed_lines(unit[1]), units))
    return sorted(zip(counts, (name for name, _ in units)), reverse=True)


def read_budget(path: str, key: str) -> tuple:
    try:
        with open(path) as file:
            budget = json.load(file)
        return int(budget[key]), float(budget.get("tolerance", 0.05))
    except OSError as error:
        bad_input(f"cannot read the budget {path}: {error.strerror}")
    except (ValueError, KeyError, TypeError):
        bad_input(f"the budget {path} is not JSON with a number {key} and a tolerance")


def configured(scratch: str, options: list) -> str:
    """A build directory of this tree under SCRATCH, configured with OPTIONS; exit 1 if meson fails."""
    meson = shutil.which("meson")
    if meson is None:
        bad_input("--configure needs meson on PATH")
    build = os.path.join(scratch, "build")
    result = subprocess.run([meson, "setup", build, ROOT] + options, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False)
    if result.returncode != 0:
        tail = "\n".join(result.stdout.decode(errors="replace").splitlines()[-20:])
        sys.exit(f"meson setup of {ROOT} in {build} failed:\n{tail}")
    return build


def on_term(signum, _frame):
    """A SIGTERM (meson test's timeout) unwinds like an exit, so the scratch directory goes."""
    sys.exit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", nargs="?", help="a meson build directory configured with -Dunity=off")
    parser.add_argument("--as-built", action="store_true",
                        help="count a unity build's units, as `ninja testio` compiles them")
    parser.add_argument("--configure", action="store_true",
                        help="configure a temporary build of this tree for the count, removed after")
    parser.add_argument("--budget", help="a JSON file with preprocessed_lines and tolerance")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--tap", action="store_true", help="print the budget check as TAP")
    parser.add_argument("--json", action="store_true", help="the figures as one JSON document")
    args = parser.parse_args()
    if (args.build is None) == (not args.configure):
        bad_input("give either a build directory or --configure, not both nor neither")
    if args.top < 0:
        bad_input(f"--top is a count of units, not {args.top}")
    if args.tap and not args.budget:
        args.budget = os.path.join(ROOT, "tools", "build_budget.json")
    key = "as_built_lines" if args.as_built else "preprocessed_lines"
    if args.budget:
        read_budget(args.budget, key)  # a bad budget is said before the counting

    if args.configure:
        signal.signal(signal.SIGTERM, on_term)
        with tempfile.TemporaryDirectory(prefix="build_cost.") as scratch:
            options = AS_BUILT_OPTIONS if args.as_built else CONFIGURE_OPTIONS
            counts = measure(configured(scratch, options), args.as_built)
    else:
        counts = measure(args.build, args.as_built)
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

    budget, tolerance = read_budget(args.budget, key)
    ceiling = int(budget * (1 + tolerance))
    over = total > ceiling
    kind = "units as built" if args.as_built else "units"
    verdict = (f"{total:,} preprocessed lines in {len(counts)} {kind} against a budget of {budget:,} "
               f"(at most {ceiling:,} with {tolerance:.0%})")
    if args.tap:
        print("TAP version 13\n1..1")
        print(f"{'not ok' if over else 'ok'} 1 - build cost{' as built' if args.as_built else ''}: {verdict}")
        if over:
            print("  # dearest: " + ", ".join(f"{unit} {lines:,}" for lines, unit in counts[:5]))
        return 0
    print(("over budget: " if over else "within budget: ") + verdict)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

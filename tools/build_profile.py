#!/usr/bin/env python3
"""Where a build's time went, from ninja's own log (BUILD/.ninja_log): the job seconds in all, per
folder of src/ (tests, testio's main), and the slowest units; with a second build directory, the
two side by side, unit by unit. Job seconds are each step's wall time as ninja ran it (with -j4 on
two cores, about twice its CPU time), so compare builds made the same way.

Usage: tools/build_profile.py BUILD [BEFORE_BUILD] [--top N]
"""
import argparse
import collections
import os
import re
import signal
import sys


def read_log(build: str) -> dict:
    """Output path -> job seconds of its newest run (a rebuilt output counts once, as last run)."""
    steps = {}
    path = os.path.join(build, ".ninja_log")
    try:
        with open(path) as log:
            for line in log:
                if line.startswith("#"):
                    continue
                fields = line.rstrip("\n").split("\t")
                if len(fields) < 4:
                    continue
                start, end, output = int(fields[0]), int(fields[1]), fields[3]
                steps[output] = (end - start) / 1000.0
    except OSError as error:
        sys.exit(f"cannot read {path}: {error.strerror}")
    return steps


def unit_name(output: str) -> str:
    """'src/libtestio_lifecycle.a.p/lifecycle_parts.cpp.o' -> 'lifecycle/parts.cpp';
    'src/libtestio_protocols_testio.a.p/protocols_testio_codec.cpp.o' -> 'protocols/testio/codec.cpp'."""
    match = re.match(r"src/libtestio_(\w+)\.a\.p/(.+)\.o$", output)
    if match:
        folder, rest = match.groups()
        unit = rest[len(folder) + 1:] if rest.startswith(folder + "_") else rest
        return folder.replace("protocols_", "protocols/", 1) + "/" + unit
    return output


def group_of(output: str) -> str:
    match = re.match(r"src/libtestio_(\w+)\.a\.p/", output)
    if match:
        return match.group(1).replace("protocols_", "protocols/", 1)
    if output.startswith("tests/"):
        return "tests"
    if output.endswith(".o"):
        return "main"
    return "links and the rest"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build")
    parser.add_argument("before", nargs="?")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    after = read_log(args.build)
    before = read_log(args.before) if args.before else {}

    def totals(steps):
        groups = collections.Counter()
        for output, seconds in steps.items():
            groups[group_of(output)] += seconds
        return groups

    after_groups, before_groups = totals(after), totals(before)
    width = max(len(name) for name in list(after_groups) + list(before_groups) + ["in all"])
    heading = f"{'':{width}}  {'job s':>8}" + (f"  {'before':>8}" if before else "")
    print(heading)
    for name in sorted(set(after_groups) | set(before_groups), key=lambda n: -after_groups.get(n, 0)):
        line = f"{name:{width}}  {after_groups.get(name, 0):8.1f}"
        print(line + (f"  {before_groups.get(name, 0):8.1f}" if before else ""))
    line = f"{'in all':{width}}  {sum(after.values()):8.1f}"
    print(line + (f"  {sum(before.values()):8.1f}" if before else ""))
    print(f"{len(after)} steps" + (f" ({len(before)} before)" if before else ""))

    print(f"\nslowest {args.top} units:")
    units = sorted((s, o) for o, s in after.items() if o.endswith(".o"))[::-1][: args.top]
    for seconds, output in units:
        line = f"  {seconds:6.1f}  {unit_name(output)}"
        if before:
            line += f"  (before {before[output]:.1f})" if output in before else "  (new)"
        print(line)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    sys.exit(main())

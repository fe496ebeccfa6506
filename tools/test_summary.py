#!/usr/bin/env python3
"""Counts test cases in meson's JUnit logs (GoogleTest cases and TAP subtests alike) and prints
'N passed, N failed[, N skipped]'. --passed/--failed add outcomes counted elsewhere (a build
that failed, the fuzz run)."""
import argparse
import sys
import xml.etree.ElementTree as ElementTree


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passed", type=int, default=0)
    parser.add_argument("--failed", type=int, default=0)
    parser.add_argument("logs", nargs="*")
    args = parser.parse_args()
    passed, failed, skipped = args.passed, args.failed, 0
    for path in args.logs:
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            print(f"cannot read the test log {path}: {error}")
            failed += 1
            continue
        for case in root.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    if passed + failed == 0:
        failed = 1  # a run that ran nothing has failed
    line = f"{passed} passed, {failed} failed"
    print(line + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Counts GoogleTest cases in meson's JUnit log and prints 'N passed, N failed[, N skipped]'."""
import sys
import xml.etree.ElementTree as ElementTree


def main(path: str) -> int:
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        print(f"cannot read the test log {path}: {error}")
        print("0 passed, 1 failed")
        return 1
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    if passed + failed == 0:
        failed = 1  # a suite that ran nothing has failed
    line = f"{passed} passed, {failed} failed"
    print(line + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

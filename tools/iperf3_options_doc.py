#!/usr/bin/python3
"""Rewrites docs/iperf3-options.md's table between its markers with what `testio --iperf3-options`
prints (tests/python/iperf3_cli_test.py fails while the two differ).
Usage: tools/iperf3_options_doc.py [TESTIO_BINARY] (default build/testio)."""
import pathlib
import subprocess
import sys

binary = sys.argv[1] if len(sys.argv) > 1 else "build/testio"
page = pathlib.Path(__file__).resolve().parent.parent / "docs" / "iperf3-options.md"
begin, end = "<!-- testio --iperf3-options: begin -->\n", "<!-- testio --iperf3-options: end -->"
text = page.read_text()
table = subprocess.run([binary, "--iperf3-options"], capture_output=True, text=True, check=True).stdout
head, rest = text.split(begin, 1)
page.write_text(head + begin + table + end + rest.split(end, 1)[1])

"""`testio plot`: run as `python3 -m testio_plot plot ...` by the testio binary."""
import sys

from testio_plot.command import main

arguments = sys.argv[1:]
if arguments[:1] == ["plot"]:  # the binary hands over its command word first
    arguments = arguments[1:]
sys.exit(main(arguments))

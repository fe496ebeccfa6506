"""`testio plot`: run as `python3 -m testio_plot` by the testio binary."""
import sys

from testio_plot.command import main

sys.exit(main(sys.argv[1:]))

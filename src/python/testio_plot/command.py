"""testio plot's command line: read the reports, draw what they hold, write OUT whole or not at
all. Exit 0; 2 for a usage error or a file that is not testio's report; 1 when OUT cannot be
written or matplotlib is missing. Each failure is one sentence on stderr."""
import argparse
import os
import sys
import tempfile

from .load import BadInput, read_report

FORMATS = (".png", ".svg", ".html")
EXIT_RUNTIME, EXIT_USAGE = 1, 2
USAGE = """testio plot REPORT.json [REPORT.json...] -o OUT [--label NAME]...
       testio plot CAMPAIGN_DIR [CAMPAIGN_DIR] -o OUT [--label NAME]...

Draws a testio report (--json, --json-stream, a server's JSON, --mesh --json) as OUT: .png or .svg
(every plot, one under another) or .html (one file, no network needed: the test, the plots, the
tables). Several reports are overlaid, each labelled by its file name or --label.
A campaign's directory (testio campaign -o DIR) is drawn cell by cell: medians with their 95%%
intervals and the runs; two campaigns are compared cell by cell, significant differences marked.
  testio -c HOST 8 -t 30 --json > run.json && testio plot run.json -o run.html
  testio plot before.json after.json -o compare.png
  testio plot last-week/ this-week/ -o compare.html"""


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse(argv):
    parser = Parser(prog="testio plot", usage=USAGE, add_help=True)
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write: .png, .svg or .html")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="a report's name in legends, one per report in order (default: its file name)")
    parser.add_argument("--title", default="", help="the heading (default: the reports' names)")
    args = parser.parse_args(argv)
    extension = os.path.splitext(args.output)[1].lower()
    if extension not in FORMATS:
        raise UsageError(f"-o {args.output}: the output must end in .png, .svg or .html")
    if args.label and len(args.label) != len(args.reports):
        raise UsageError(f"{len(args.label)} --label for {len(args.reports)} reports: give one per report, or none")
    args.format = extension[1:]
    return args


def main(argv):
    try:
        args = parse(argv)
    except UsageError as error:
        return fail(str(error), EXIT_USAGE)
    if any(os.path.isdir(path) for path in args.reports):
        from . import campaign_command
        return campaign_command.main(args)
    try:
        reports = [read_report(path, args.label[i] if args.label else None) for i, path in enumerate(args.reports)]
    except BadInput as error:
        return fail(str(error), EXIT_USAGE)
    if matplotlib_missing():
        return fail("matplotlib is not installed: apt-get install python3-matplotlib", EXIT_RUNTIME)
    for report in reports:
        for note in report.notes:
            print(f"testio plot: {note}", file=sys.stderr)
    from . import catalogue, parts
    tests = parts.tests_of(reports)
    plots = catalogue.plots_for(reports, tests)
    if not plots and args.format != "html":
        return fail(f"nothing to plot in {', '.join(args.reports)} (its tables are in an .html report)", EXIT_USAGE)
    return write_out(args.output, lambda: draw(reports, tests, plots, args))


def matplotlib_missing():
    try:
        import matplotlib  # noqa: F401  (the one dependency the binary does not have)
    except ImportError:
        return True
    return False


def write_out(path, make):
    """Writes the bytes make() returns as OUT, whole or not at all; the exit code."""
    try:
        pending = PendingFile(path)
    except OSError as error:
        return fail(f"cannot write {path}: {error.strerror}", EXIT_RUNTIME)
    try:
        data = make()
    except BaseException:
        pending.discard()
        raise
    try:
        pending.write(data)
        pending.commit()
    except OSError as error:
        pending.discard()
        return fail(f"cannot write {path}: {error.strerror}", EXIT_RUNTIME)
    return 0


def draw(reports, tests, plots, args):
    """OUT's bytes."""
    from . import render  # matplotlib is imported here, once it is known to be there
    heading = args.title or "testio: " + ", ".join(r.label for r in reports)
    if args.format == "html":
        from . import html_page, tables
        notes = [note for report in reports for note in report.notes]
        return html_page.page(heading, notes, render.each_svg(plots), tables.tables_for(reports, tests)).encode("utf-8")
    return render.one_image(plots, args.format, heading)


class PendingFile:
    """OUT written beside itself under a temporary name and renamed over it once whole, so a
    failure leaves no partial OUT (and an earlier OUT as it was)."""

    def __init__(self, path):
        self.path = path
        directory = os.path.dirname(os.path.abspath(path))
        descriptor, self.temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".part")
        self.file = os.fdopen(descriptor, "wb")

    def write(self, data):
        self.file.write(data)

    def commit(self):
        self.file.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.temporary, 0o666 & ~umask)
        os.replace(self.temporary, self.path)

    def discard(self):
        self.file.close()
        try:
            os.unlink(self.temporary)
        except OSError:
            pass


def fail(sentence, code):
    print(f"testio plot: {sentence}", file=sys.stderr)
    return code

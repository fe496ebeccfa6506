"""`testio plot DIR -o OUT` and `testio plot A_DIR B_DIR -o OUT`: a campaign's pictures, or two
campaigns compared cell by cell. The same OUT formats, exits and one-sentence failures as the
reports' (command.py)."""
import os
import sys

from .command import EXIT_RUNTIME, EXIT_USAGE, fail, matplotlib_missing, write_out
from .load import BadInput


def main(args):
    """`args` as command.parse made them, with at least one directory among the inputs."""
    directories = args.reports
    if not all(os.path.isdir(path) for path in directories):
        return fail("give campaign directories or report files, not both", EXIT_USAGE)
    if len(directories) > 2:
        return fail(f"{len(directories)} campaign directories: testio plot draws one campaign, or compares two",
                    EXIT_USAGE)
    from . import campaigns
    try:
        found = [campaigns.read(path, args.label[i] if args.label else None) for i, path in enumerate(directories)]
    except BadInput as error:
        return fail(str(error), EXIT_USAGE)
    if len(found) == 2 and found[0].label == found[1].label:
        return fail(f"both campaigns are named {found[0].label}: tell them apart with --label", EXIT_USAGE)
    if matplotlib_missing():
        return fail("matplotlib is not installed: apt-get install python3-matplotlib", EXIT_RUNTIME)
    notes = [note for campaign in found for note in campaign.notes]
    for note in notes:
        print(f"testio plot: {note}", file=sys.stderr)
    from . import campaign_plots, campaign_tables
    if len(found) == 1:
        plots, tables = campaign_plots.plots_for(found[0]), lambda: campaign_tables.campaign_tables(found[0])
        heading, empty = f"testio campaign {found[0].label}", "no run of it finished with figures"
    else:
        comparison = campaigns.Comparison(*found)
        plots, tables = campaign_plots.plots_for_comparison(comparison), lambda: campaign_tables.comparison_tables(comparison)
        heading = f"testio campaigns {found[0].label} (A) against {found[1].label} (B)"
        empty = "no cell of one has the settings of a cell of the other" if not comparison.pairs else \
            "no figure was measured in both"
    if not plots and args.format != "html":
        return fail(f"nothing to plot in {' and '.join(directories)}: {empty} (its tables are in an .html report)",
                    EXIT_USAGE)
    return write_out(args.output, lambda: draw(args.title or heading, notes, plots, tables, args.format))


def draw(heading, notes, plots, tables, fmt):
    """OUT's bytes; `tables` makes the HTML's tables."""
    from . import render  # matplotlib is imported here, once it is known to be there
    if fmt == "html":
        from . import html_page
        return html_page.page(heading, notes, render.each_svg(plots), tables()).encode("utf-8")
    return render.one_image(plots, fmt, heading)

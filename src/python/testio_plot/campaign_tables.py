"""A campaign's tables for the HTML page: what it ran (its axes, repeats and environment), each
cell's statistics figure by figure, and for two campaigns each matched cell's difference."""
from .campaigns import LEVEL, flatten, unit_of
from .tables import Table, number

STATISTICS_COLUMNS = ["cell", "n", "failed", "median", "95% interval", "mean", "stdev", "min", "max", "cv",
                      "outlier rounds"]


def campaign_tables(campaign):
    found = [definition_table(campaign)]
    for group in campaign.groups():
        found.extend(statistics_table(campaign, figure) for figure in group.figures)
    environment = flatten(campaign.definition.get("environment") or {})
    if environment:
        found.append(Table(f"{campaign.label}: the environment", ["", ""], [[k, v] for k, v in sorted(environment.items())]))
    return found


def definition_table(campaign):
    """Key-value rows: the campaign's name, options, axes and how many runs it holds."""
    definition = campaign.definition
    measured = sum(len(cell.runs) for cell in campaign.cells)
    failed = sum(cell.failed for cell in campaign.cells)
    rows = [["name", str(definition.get("name", ""))], ["directory", campaign.path],
            ["created", str(definition.get("created", ""))], ["options", " ".join(map(str, definition.get("base_args") or []))]]
    for axis in definition.get("axes") or []:
        rows.append([f"axis {axis.get('name')}", f"{axis.get('option', '')} {', '.join(map(str, axis.get('values') or []))}".strip()])
    rows += [["repeat", number(definition.get("repeat"))], ["warm-up rounds", number(definition.get("warmup"))],
             ["shuffled", number(bool(definition.get("shuffle")))],
             ["runs", f"{measured} measured, {failed} failed, {campaign.warmups} warm-up"]]
    return Table(f"{campaign.label}: the campaign", ["", ""], rows)


def statistics_table(campaign, figure):
    divisor, unit = unit_of(figure, campaign.cells)
    rows = []
    for cell in campaign.cells:
        described = cell.describe(figure)
        rows.append([cell.label(", "), number(described["n"]), number(cell.failed), *_described(described, divisor),
                     number(described["cv"]), ", ".join(map(str, cell.outlier_rounds(figure)))])
    inexact = [cell.label(", ") for cell in campaign.cells
               if cell.describe(figure)["n"] and not cell.describe(figure).get("ci95_exact", True)]
    note = f"too few runs for a 95% interval of the median (shown: min to max): {'; '.join(inexact)}" if inexact else ""
    return Table(f"{campaign.label}: {_per_cell(figure, unit)}", STATISTICS_COLUMNS, rows, note)


def _described(described, divisor):
    """median, interval, mean, stdev, min and max of a describe() in the table's unit."""
    def scaled(value):
        return number(value / divisor if value is not None else None)
    interval = described.get("ci95")
    shown_interval = f"{scaled(interval[0])} – {scaled(interval[1])}" if interval else "-"
    return [scaled(described["median"]), shown_interval, scaled(described["mean"]), scaled(described["stdev"]),
            scaled(described["min"]), scaled(described["max"])]


def _per_cell(figure, unit):
    """A figure's table title: "goodput per cell (Gbit/s)", "sender CPU-s/GB per cell"."""
    return f"{figure.title} per cell" + ("" if unit in figure.title else f" ({unit})")


def comparison_tables(comparison):
    found = [definition_table(comparison.a), definition_table(comparison.b)]
    for group in comparison.groups():
        found.extend(difference_table(comparison, figure) for figure in group.figures)
    alone = [[cell.label(", "), campaign.label] for campaign, cells in ((comparison.a, comparison.only_a),
                                                                        (comparison.b, comparison.only_b)) for cell in cells]
    if alone:
        found.append(Table(f"{comparison.a.label} against {comparison.b.label}: cells in one campaign only",
                           ["cell", "only in"], alone))
    differences = comparison.environment_differences()
    found.append(Table(f"{comparison.a.label} against {comparison.b.label}: environment differences",
                       ["", comparison.a.label, comparison.b.label], [list(row) for row in differences],
                       "" if differences else "none: the two environments are the same"))
    return found


def difference_table(comparison, figure):
    cells = [cell for pair in comparison.pairs for cell in pair]
    divisor, unit = unit_of(figure, cells)
    rows = []
    for index, (cell, _) in enumerate(comparison.pairs):
        difference = comparison.difference(index, figure)
        interval = difference.ratio_ci95
        rows.append([cell.label(", "), number(difference.a["n"]), number(difference.b["n"]),
                     _described(difference.a, divisor)[0], _described(difference.b, divisor)[0],
                     number(difference.ratio), f"{number(interval[0])} – {number(interval[1])}" if interval else "-",
                     number(difference.p), difference.verdict() + (" *" if difference.significant else "")])
    a, b = comparison.a.label, comparison.b.label
    return Table(f"{a} against {b}: {_per_cell(figure, unit)}",
                 ["cell", f"n {a}", f"n {b}", f"median {a}", f"median {b}", "B/A", "B/A 95% interval",
                  "p (Mann-Whitney U)", f"difference at p < {LEVEL:g}"], rows)

"""A campaign's pictures: each cell's median as a bar with its 95% interval, and the runs of each
cell as a box with its points; two campaigns' cells side by side, a significant difference marked
with an asterisk and the ratio of medians B/A. Cells are named by their settings on the x axis."""
from testio_campaign import compare

from . import style
from .campaigns import LEVEL, unit_of
from .catalogue import Plot

BAR_WIDTH = 0.6
PAIR_OFFSET, PAIR_WIDTH = 0.2, 0.38  # each campaign's bar in a compared cell
INTERVAL_NOTE = "error bars: the median's 95% interval (min to max where a cell has too few runs for one)"
BOX_NOTE = "boxes: quartiles, whiskers to 1.5 IQR; dots: the runs in round order, red rings: outliers"
MARK_NOTE = (f"* B differs from A as testio compare says it (Mann-Whitney U, p < {LEVEL:g}, a change above "
             f"{compare.NOISE_PERCENT:g}%); ×: B's median / A's")


def plots_for(campaign):
    """The plots of one campaign: bars for each group of figures its runs have, boxes of the first."""
    groups = campaign.groups()
    height = _height(campaign.cells)
    found = [Plot(f"campaign-{group.key}", f"{campaign.label}: {group.title} per cell, median and 95% interval",
                  height * len(group.figures), lambda figure, group=group: draw_bars(figure, campaign, group)) for group in groups]
    if groups:
        first = groups[0].figures[0]
        found.insert(1, Plot(f"campaign-{groups[0].key}-runs", f"{campaign.label}: {first.title} of each run, per cell",
                             height, lambda figure: draw_boxes(figure, campaign, first)))
    return found


def plots_for_comparison(comparison):
    """The plots of two campaigns: their matched cells side by side, group by group."""
    groups = comparison.groups()
    cells = [a for a, _ in comparison.pairs]
    height = _height(cells)
    title = f"{comparison.a.label} (A) against {comparison.b.label} (B)"
    found = [Plot(f"compare-{group.key}", f"{title}: {group.title} per cell, median and 95% interval",
                  height * len(group.figures), lambda figure, group=group: draw_compared_bars(figure, comparison, group)) for group in groups]
    if groups:
        first = groups[0].figures[0]
        found.insert(1, Plot(f"compare-{groups[0].key}-runs", f"{title}: {first.title} of each run, per cell", height,
                             lambda figure: draw_compared_boxes(figure, comparison, first)))
    return found


def _height(cells):
    lines = max((len(cell.settings) for cell in cells), default=1)
    return 3.4 + 0.16 * lines


def draw_bars(figure, campaign, group):
    cells = campaign.cells
    for axes, shown in zip(figure.subplots(len(group.figures), 1, squeeze=False)[:, 0], group.figures):
        divisor, unit = unit_of(shown, cells)
        for x, cell in enumerate(cells):
            described = cell.describe(shown)
            if not described["n"]:
                axes.annotate("no runs" + _failed(cell), (x, 0), ha="center", va="bottom", fontsize="small", color="grey")
                continue
            top = _bar(axes, x, BAR_WIDTH, described, divisor, style.colour(0))
            words = f"n={described['n']}" + ("" if described.get("ci95_exact", True) else " (min–max)") + _failed(cell)
            axes.annotate(words, (x, top), xytext=(0, 3), textcoords="offset points", ha="center", fontsize="x-small")
        _finish(axes, cells, shown, unit, len(group.figures) > 1)
    figure.supxlabel(INTERVAL_NOTE, fontsize="x-small")


def draw_boxes(figure, campaign, shown):
    """One box per cell (quartiles, whiskers to 1.5 IQR) with every run a point over it, left to
    right in round order; a run outside Tukey's fences is a red ring."""
    axes = figure.subplots()
    cells = campaign.cells
    divisor, unit = unit_of(shown, cells)
    for x, cell in enumerate(cells):
        _box(axes, x, BAR_WIDTH * 0.8, cell, shown, divisor, style.colour(0))
    _finish(axes, cells, shown, unit, False, bars=False)
    figure.supxlabel(BOX_NOTE, fontsize="x-small")


def draw_compared_bars(figure, comparison, group):
    cells = [a for a, _ in comparison.pairs]
    for axes, shown in zip(figure.subplots(len(group.figures), 1, squeeze=False)[:, 0], group.figures):
        divisor, unit = unit_of(shown, cells + [b for _, b in comparison.pairs])
        for x, (cell_a, cell_b) in enumerate(comparison.pairs):
            difference = comparison.difference(x, shown)
            tops = [0.0]
            for side, described, campaign in ((0, difference.a, comparison.a), (1, difference.b, comparison.b)):
                if described["n"]:
                    offset = PAIR_OFFSET * (2 * side - 1)
                    tops.append(_bar(axes, x + offset, PAIR_WIDTH, described, divisor, style.colour(side),
                                     label=f"{'AB'[side]}: {campaign.label}" if x == 0 else None))
            _mark(axes, x, max(tops), difference)
        _finish(axes, cells, shown, unit, len(group.figures) > 1)
    figure.supxlabel(INTERVAL_NOTE + "\n" + MARK_NOTE, fontsize="x-small")


def draw_compared_boxes(figure, comparison, shown):
    axes = figure.subplots()
    cells = [a for a, _ in comparison.pairs]
    divisor, unit = unit_of(shown, cells + [b for _, b in comparison.pairs])
    for x, pair in enumerate(comparison.pairs):
        for side, cell in enumerate(pair):
            campaign = (comparison.a, comparison.b)[side]
            _box(axes, x + PAIR_OFFSET * (2 * side - 1), PAIR_WIDTH * 0.8, cell, shown, divisor, style.colour(side),
                 label=f"{'AB'[side]}: {campaign.label}" if x == 0 else None)
    _finish(axes, cells, shown, unit, False, bars=False)
    figure.supxlabel(BOX_NOTE, fontsize="x-small")


def _bar(axes, x, width, described, divisor, colour, label=None):
    """The median as a bar with its interval as an error bar; the top of what was drawn."""
    median = described["median"] / divisor
    axes.bar(x, median, width, color=colour, alpha=0.85, label=label)
    interval = described.get("ci95")
    if not interval:
        return median
    low, high = interval[0] / divisor, interval[1] / divisor
    axes.errorbar(x, median, yerr=[[median - low], [high - median]], fmt="none", ecolor="black", capsize=4, lw=1)
    return max(high, median)


def _box(axes, x, width, cell, shown, divisor, colour, label=None):
    values = [value / divisor for value in cell.values(shown)]
    if not values:
        return
    axes.boxplot([values], positions=[x], widths=width, showfliers=False, patch_artist=True,
                 boxprops={"facecolor": colour, "alpha": 0.35}, medianprops={"color": "black"})
    spread = [x + width * 0.5 * (2 * i / (len(values) - 1) - 1) * 0.6 if len(values) > 1 else x
              for i in range(len(values))]
    axes.scatter(spread, values, s=12, color=colour, edgecolors="black", linewidths=0.4, zorder=3, label=label)
    outliers = cell.describe(shown).get("outliers") or []
    axes.scatter([spread[i] for i in outliers], [values[i] for i in outliers], s=60, facecolors="none",
                 edgecolors="red", linewidths=1.2, zorder=4)


def _mark(axes, x, top, difference):
    """Above a compared cell: the ratio B/A, bold with an asterisk when the difference is significant."""
    if difference.ratio is None:
        return
    words = f"×{difference.ratio:.2f}" + (" *" if difference.significant else "")
    axes.annotate(words, (x, top), xytext=(0, 4), textcoords="offset points", ha="center", fontsize="small",
                  fontweight="bold" if difference.significant else "normal",
                  color="black" if difference.significant else "grey")


def _failed(cell):
    return f", {cell.failed} failed" if cell.failed else ""


def _finish(axes, cells, shown, unit, several, bars=True):
    """The cells' names under the axes; `several`: the axes is one of a group's (titled by its
    figure). Bars stand on zero; boxes keep the runs' own range, whose spread they show."""
    axes.set_xticks(range(len(cells)))
    crowded = len(cells) > 8
    axes.set_xticklabels([cell.label() for cell in cells], fontsize="small", rotation=30 if crowded else 0,
                         ha="right" if crowded else "center")
    axes.set_xlim(-0.6, len(cells) - 0.4)
    if several:
        axes.set_title(shown.name, fontsize="medium")
    if bars:
        style.from_zero(axes)
        axes.set_ylim(0, axes.get_ylim()[1] * 1.08)  # room for the words over the bars
    style.finish_axes(axes, unit if several else f"{shown.name} ({unit})")

"""Drawing the plots to bytes: all of them stacked in one PNG or SVG, or each apart as SVG for the
HTML report. matplotlib's Agg backend: no display, no window."""
import io

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.titlesize": "medium",
                            "figure.titlesize": "large", "svg.hashsalt": "testio"})
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)

from . import style  # noqa: E402

DPI = 110


def one_image(plots, fmt, heading):
    """Every plot, one under another, in one PNG or SVG; bytes."""
    height = sum(plot.height_in for plot in plots) + 0.6
    figure = Figure(figsize=(style.WIDTH_IN, height), layout="constrained")
    figure.suptitle(heading, fontsize="large")
    subfigures = figure.subfigures(len(plots), 1, height_ratios=[p.height_in for p in plots], squeeze=False)[:, 0]
    for plot, subfigure in zip(plots, subfigures):
        subfigure.suptitle(plot.title, fontsize="medium", fontweight="bold")
        plot.draw(subfigure)
    return _bytes(figure, fmt)


def each_svg(plots):
    """[(plot, SVG bytes)], each plot a figure of its own."""
    drawn = []
    for plot in plots:
        figure = Figure(figsize=(style.WIDTH_IN, plot.height_in), layout="constrained")
        plot.draw(figure)
        drawn.append((plot, _bytes(figure, "svg")))
    return drawn


def _bytes(figure, fmt):
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=DPI, metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()

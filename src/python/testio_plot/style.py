"""What every plot shares: the reports' colours, the time axis, omitted intervals shaded, and the
figure sizes. Drawing helpers only; matplotlib's objects are made by the callers."""

# A report's colour in overlays (matplotlib's default cycle, which colour-blind readers can tell
# apart better than a rainbow).
REPORT_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"]
OMITTED_SHADE = "#bbbbbb"
WIDTH_IN = 10


def colour(index):
    return REPORT_COLOURS[index % len(REPORT_COLOURS)]


def steps(intervals, value):
    """x and y for a step line over `intervals` (each with start and end), `value(interval)` held
    through each."""
    return step_values(intervals, [value(interval) for interval in intervals])


def step_values(intervals, values):
    """x and y for a step line holding values[i] through intervals[i]."""
    xs = [interval["start"] for interval in intervals]
    ys = list(values)
    if intervals:
        xs.append(intervals[-1]["end"])
        ys.append(ys[-1])
    return xs, ys


def shade_omitted(axes, sums, first):
    """Grey over the intervals left out of the totals (-O); labelled once per figure (`first`)."""
    labelled = not first
    for interval in sums:
        if interval.get("omitted"):
            axes.axvspan(interval["start"], interval["end"], color=OMITTED_SHADE, alpha=0.35, lw=0,
                         label=None if labelled else "omitted (-O)")
            labelled = True


def finish_axes(axes, ylabel, legend=True):
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    if legend and axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize="small", loc="best", ncol=2)


def gbit(bits_per_second):
    return (bits_per_second or 0) / 1e9


def from_zero(axes):
    """The y axis from 0 to a little above the highest line, so no line runs along the frame."""
    axes.relim()
    axes.autoscale_view()
    top = axes.get_ylim()[1]
    axes.set_ylim(0, top * 1.08 if top > 0 else 1)

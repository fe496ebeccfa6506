"""Streams: throughput per interval, summed and per connection, one plot per direction, with the
omitted intervals shaded and each interval's balance (the slowest and fastest connection, Jain's
index) under it. Several reports overlay, each in its colour."""
from . import style

# The workloads whose intervals are bulk data worth a throughput plot.
BULK_WORKLOADS = ("stream", "udp", "http", "rpm")
DIRECTION_NAMES = {"forward": "client → server", "reverse": "server → client"}


def jain(values):
    total, squares = sum(values), sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def balance(interval):
    """(min, max) Gbit/s of the interval's connections and Jain's fairness index over them."""
    rates = [style.gbit(s.get("bits_per_second")) for s in interval.get("streams") or []]
    if not rates:
        return 0.0, 0.0, 1.0
    return min(rates), max(rates), jain(rates)


def groups(parts):
    """The bulk parts grouped by (workload, direction), in the order first seen."""
    grouped = {}
    for part in parts:
        if part.workload in BULK_WORKLOADS and part.intervals:
            grouped.setdefault((part.workload, part.direction), []).append(part)
    return grouped


def title(workload, direction):
    if workload == "rpm":  # one report, the download's load and then the upload's
        return "rpm: the load's goodput, download then upload"
    return f"{workload}: throughput {direction} ({DIRECTION_NAMES.get(direction, direction)})"


def draw(figure, parts):
    """Three stacked axes into `figure` (a Figure or SubFigure) for `parts` of one group."""
    axes = figure.subplots(3, 1, sharex=True, gridspec_kw={"height_ratios": [2, 2, 1.4]})
    summed, each, balanced = axes
    fairness = balanced.twinx()
    one = len(parts) == 1
    for index, part in enumerate(parts):
        sums = part.sums
        colour = style.colour(index)
        style.shade_omitted(summed, sums, index == 0)
        xs, ys = style.steps(sums, lambda s: style.gbit(s.get("bits_per_second")))
        summed.plot(xs, ys, drawstyle="steps-post", color=colour, lw=2, label=f"{part.label}: sum")
        _draw_connections(each, part, colour if not one else None)
        _draw_balance(balanced, fairness, part, colour, one)
    style.finish_axes(summed, "Gbit/s, all")
    style.finish_axes(each, "Gbit/s, each", legend=one and len(each.get_lines()) <= 16)
    style.finish_axes(balanced, "Gbit/s min–max", legend=False)
    fairness.set_ylim(0, 1.05)
    fairness.set_ylabel("Jain")
    band, index = balanced.get_legend_handles_labels(), fairness.get_legend_handles_labels()
    balanced.legend(band[0] + index[0], band[1] + index[1], fontsize="small", loc="lower left", ncol=2)
    balanced.set_xlabel("seconds")
    style.from_zero(summed)
    style.from_zero(each)
    style.from_zero(balanced)


def _connections(part):
    """{socket: [its stream entry in each interval]}, in socket order; one pass over the intervals."""
    series = {}
    for interval in part.intervals:
        for stream in interval.get("streams") or []:
            series.setdefault(stream.get("socket") or 0, []).append(stream)
    return dict(sorted(series.items()))


def _draw_connections(axes, part, colour):
    """One thin line per connection: in the report's colour when overlaid, else each its own."""
    for socket, series in _connections(part).items():
        xs, ys = style.steps(series, lambda s: style.gbit(s.get("bits_per_second")))
        axes.plot(xs, ys, drawstyle="steps-post", lw=0.9, alpha=0.55 if colour else 0.9, color=colour,
                  label=None if colour else f"connection {socket}")


def _draw_balance(axes, index_axes, part, colour, one):
    """The band between each interval's slowest and fastest connection; Jain's index on `index_axes`."""
    timed = [i for i in part.intervals if "sum" in i and i.get("streams")]
    if not timed:
        return
    figures = [balance(i) for i in timed]
    sums = [i["sum"] for i in timed]
    xs, low = style.step_values(sums, [f[0] for f in figures])
    _, high = style.step_values(sums, [f[1] for f in figures])
    _, fairness = style.step_values(sums, [f[2] for f in figures])
    axes.fill_between(xs, low, high, step="post", color=colour, alpha=0.25, lw=0,
                      label="slowest to fastest connection" if one else f"{part.label}: slowest to fastest")
    index_axes.plot(xs, fairness, drawstyle="steps-post", color=colour, lw=1.2, ls="--",
                    label="Jain's index" if one else f"{part.label}: Jain")

"""rr, transfers and HTTP: their latency and duration distributions as CDFs, one axes per
distribution (rr's round trip; a transfer's time and its connect; HTTP's first byte), reports
overlaid by colour. Each summary's `cdf` gives the curve; an older report's percentiles stand in."""
from . import style

SUMMARY_POINTS = (("min", 0), ("p50", 50), ("p90", 90), ("p99", 99), ("p99_9", 99.9), ("max", 100))


def distributions(part):
    """[(name, unit, summary)] of the part's end: each a {min, p50, ..., cdf} object."""
    testio = (part.end or {}).get("testio") or {}
    found = []
    rr = testio.get("rr") or {}
    if rr.get("latency_us"):
        found.append(("rr round trip", "µs", rr["latency_us"]))
    transfers = testio.get("transfers") or {}
    http = transfers.get("http") or {}
    if http.get("first_byte_us"):
        found.append(("HTTP time to first byte", "µs", http["first_byte_us"]))
    if transfers.get("transfer_ms"):
        found.append(("HTTP transfer time" if http else "transfer time", "ms", transfers["transfer_ms"]))
    if transfers.get("connect_us"):
        found.append(("connect (handshake RTT)", "µs", transfers["connect_us"]))
    return [(name, unit, summary) for name, unit, summary in found if cdf_points(summary)]


def cdf_points(summary):
    """[(percent, value)] to draw: the summary's cdf, else its percentiles."""
    if summary.get("cdf"):
        return [(p, v) for p, v in summary["cdf"]]
    return [(p, summary[key]) for key, p in SUMMARY_POINTS if summary.get(key) is not None]


def named(parts):
    """{distribution name: [(part, unit, summary)]} in the order first seen."""
    grouped = {}
    for part in parts:
        for name, unit, summary in distributions(part):
            grouped.setdefault(name, []).append((part, unit, summary))
    return grouped


def draw(figure, grouped):
    names = list(grouped)
    columns = min(2, len(names))
    rows = (len(names) + columns - 1) // columns
    axes_grid = figure.subplots(rows, columns, squeeze=False)
    for slot, axes in enumerate(axes_grid.flat):
        if slot >= len(names):
            axes.set_visible(False)
            continue
        name = names[slot]
        for index, (part, unit, summary) in enumerate(grouped[name]):
            points = cdf_points(summary)
            xs = [max(v, 1e-3) for _, v in points]
            axes.plot(xs, [p for p, _ in points], color=style.colour(index), lw=1.6,
                      marker=".", ms=3, label=part.label)
            axes.axvline(summary.get("p99", 0) or float("nan"), color=style.colour(index), lw=0.7, ls=":")
        axes.set_xscale("log")
        axes.set_title(name + " (dotted: p99)", fontsize="medium")
        axes.set_xlabel(grouped[name][0][1])
        axes.set_ylim(0, 100.5)
        style.finish_axes(axes, "% of all" if slot % columns == 0 else "")

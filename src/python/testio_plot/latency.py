"""Latency under load (--latency): the probes' round trips and UDP's one-way delays over time with
the phases marked, and each phase's distribution as a CDF per probe kind. The timeline is each
interval's p50 (and max, dotted) from the probes' intervals; the CDFs are the phases' `cdf_ms`."""
from . import style

KINDS = ("udp", "tcp", "connect", "load")
KIND_COLOURS = {"udp": "#1f77b4", "tcp": "#2ca02c", "connect": "#9467bd", "load": "#d62728",
                "udp_up": "#17becf", "udp_down": "#ff7f0e"}
PHASE_COLOURS = {"idle": "#f0f0f0", "download": "#dbe9f6", "upload": "#fde2cc", "bidir": "#e5dcef"}
REPORT_STYLES = ["-", "--", ":", "-."]


class LatencyRun:
    """One test's latency figures: `intervals` (the probes' own, with testio.figures) and `phases`
    (end.latency's entries; from the spec when a stream stopped before its end)."""

    def __init__(self, label, intervals, phases):
        self.label = label
        self.intervals = intervals
        self.phases = phases


def runs_of(tests):
    """[(label, test, parts)] -> the LatencyRuns among them."""
    runs = []
    for label, test, parts in tests:
        probes = [p for p in parts if p.workload == "latency"]
        if not probes:
            continue
        phases = (test.get("end") or {}).get("latency") or _phases_from_spec(parts)
        intervals = probes[0].own_intervals
        # A server's report of the probes it answered has no round trips to draw.
        if any(_figure(i, "udp_count") is not None or _figure(i, "tcp_count") is not None for i in intervals):
            runs.append(LatencyRun(label, intervals, phases))
    return runs


def _phases_from_spec(parts):
    names = {"forward": "upload", "reverse": "download", "bidir": "bidir"}
    phases = []
    for part in parts:
        spec = part.spec
        if part.workload == "latency" or not spec.get("ends_s"):
            continue
        name = names.get(spec.get("direction", part.direction), part.direction)
        if all(p["begins_s"] != spec.get("begins_s", 0) for p in phases):
            phases.append({"name": name, "begins_s": spec.get("begins_s", 0), "ends_s": spec["ends_s"]})
    return sorted(phases, key=lambda p: p["begins_s"])


def _figure(interval, key):
    return ((interval.get("testio") or {}).get("figures") or {}).get(key)


def mark_phases(axes, phases, label_them):
    for phase in phases:
        axes.axvspan(phase["begins_s"], phase["ends_s"], color=PHASE_COLOURS.get(phase["name"], "#eeeeee"), lw=0,
                     zorder=0)
        if label_them:
            axes.text((phase["begins_s"] + phase["ends_s"]) / 2, 0.98, phase["name"], transform=axes.get_xaxis_transform(),
                      ha="center", va="top", fontsize="small", color="#444444")


def draw_timeline(figure, runs):
    axes = figure.subplots(1, 1)
    mark_phases(axes, runs[0].phases, True)
    for index, run in enumerate(runs):
        line = REPORT_STYLES[index % len(REPORT_STYLES)]
        owned = [i for i in run.intervals if "sum" in i]
        timed = [i["sum"] for i in owned]
        for key in (*KINDS, "udp_up", "udp_down"):
            p50 = [_figure(i, key + "_p50_ms") for i in owned]
            if not any(p50):
                continue
            name = {"udp_up": "udp one-way up", "udp_down": "udp one-way down"}.get(key, key + " round trip")
            label = name if len(runs) == 1 else f"{run.label}: {name}"
            xs, ys = style.step_values(timed, [v if v else float("nan") for v in p50])
            axes.plot(xs, ys, drawstyle="steps-post", color=KIND_COLOURS[key], ls=line, lw=1.6, label=label + " p50")
            peaks = [_figure(i, key + "_max_ms") for i in owned]
            if key in KINDS and any(peaks):
                xs, ys = style.step_values(timed, [v if v else float("nan") for v in peaks])
                axes.plot(xs, ys, drawstyle="steps-post", color=KIND_COLOURS[key], ls=":", lw=0.9, alpha=0.8)
    axes.set_yscale("log")
    axes.set_xlabel("seconds (dotted: each interval's max)")
    style.finish_axes(axes, "ms")


def kinds_in(runs):
    return [k for k in KINDS if any(isinstance(p.get(k), dict) and p[k].get("count") for r in runs for p in r.phases)]


def draw_cdfs(figure, runs):
    kinds = kinds_in(runs)
    axes_list = figure.subplots(1, len(kinds), squeeze=False)[0]
    for axes, kind in zip(axes_list, kinds):
        for index, run in enumerate(runs):
            for phase in run.phases:
                points = _cdf_points(phase.get(kind) or {})
                if not points:
                    continue
                name = f"{phase['name']} {phase['begins_s']:g}–{phase['ends_s']:g} s"
                label = name if len(runs) == 1 else f"{run.label}: {name}"
                colour = _phase_line_colour(phase["name"])
                axes.plot([v for _, v in points], [p for p, _ in points], color=colour,
                          ls=REPORT_STYLES[index % len(REPORT_STYLES)], lw=1.5, label=label)
        axes.set_xscale("log")
        axes.set_title(kind if kind != "load" else "load (TCP_INFO)", fontsize="medium")
        axes.set_xlabel("ms")
        style.finish_axes(axes, "% of probes" if axes is axes_list[0] else "", legend=False)
        axes.set_ylim(0, 100)
    # One legend for the row, on the axes that has every phase, in its emptiest corner.
    fullest = max(axes_list, key=lambda axes: len(axes.get_legend_handles_labels()[0]))
    fullest.legend(fontsize="x-small", loc="lower right")


def _cdf_points(kind):
    """[(percent, ms)]: the phase's cdf_ms, or its percentiles in a report from before it had one."""
    if kind.get("cdf_ms"):
        return [(p, v) for p, v in kind["cdf_ms"] if v > 0]
    points = [(p, kind.get(key)) for p, key in ((50, "p50_ms"), (90, "p90_ms"), (99, "p99_ms"), (100, "max_ms"))]
    return [(p, v) for p, v in points if v]


def _phase_line_colour(name):
    return {"idle": "#555555", "download": "#1f77b4", "upload": "#ff7f0e", "bidir": "#9467bd"}.get(name, "#2ca02c")

"""A campaign's summary: per cell, statistics.describe of every figure its measured runs have
(goodput's at the top level), as the --json document (and summary.json), a text table of one row
per cell, and a Prometheus textfile."""
import json
import math
import os
import re
import tempfile

from . import campaign_dir, statistics

TOP_FIGURE = "goodput_bps"
# Columns of the text table beside goodput, when a cell's runs have them: (figure, heading).
EXTRA_COLUMNS = (("sender_cpu_s_per_gb", "snd CPU-s/GB"), ("receiver_cpu_s_per_gb", "rcv CPU-s/GB"),
                 ("receiver_calls_per_gb", "rcv calls/GB"), ("rr_messages_per_s", "msg/s"),
                 ("latency_p99_us", "p99 us"), ("transfers_per_s", "transfers/s"), ("transfer_p99_ms", "p99 ms"))


def cell_summary(cell):
    """One cell of campaign_dir.cells(): describe() of each figure over its measured runs."""
    runs = cell["runs"]
    names = []
    for run in runs:
        names += [name for name in (run.get("figures") or {}) if name not in names]
    described = {name: statistics.describe([run["figures"][name] for run in runs if name in run["figures"]])
                 for name in names}
    goodputs = [(run.get("figures") or {}).get(TOP_FIGURE) for run in runs]
    top = described.get(TOP_FIGURE) or statistics.describe([])
    rounds_with_goodput = [run.get("round") for run in runs if TOP_FIGURE in (run.get("figures") or {})]
    summary = {"id": cell["id"], "settings": cell["settings"], "n": len(runs), "failed": cell["failed"]}
    summary.update({key: top[key] for key in ("median", "ci95", "mean", "stdev", "cv", "min", "max")})
    summary["ci95_exact"] = top.get("ci95_exact", False)
    summary["outliers"] = [rounds_with_goodput[index] for index in top.get("outliers", [])]
    summary["runs"] = goodputs
    summary["figures"] = described
    return summary


def document(definition, runs, state):
    """The --json summary. `state`: directory, runs_total, interrupted, environment_warnings,
    peer_versions."""
    cells = campaign_dir.cells({"definition": definition, "runs": runs})
    environment = dict(definition.get("environment") or {})
    if state.get("peer_versions"):
        environment["peer_versions"] = state["peer_versions"]
    return {"campaign": {"name": definition.get("name", ""), "directory": state["directory"],
                         "environment": environment,
                         "environment_warnings": list(state.get("environment_warnings", [])),
                         "runs_done": len(runs), "runs_total": state["runs_total"],
                         "interrupted": bool(state.get("interrupted")),
                         "cells": [cell_summary(cell) for cell in cells]}}


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path, text):
    """Writes `text` to a temporary file beside `path` and renames it over `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".")
    try:
        os.fchmod(descriptor, 0o666 & ~current_umask())  # mkstemp's 0600 is for secrets, not results
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def rate_text(bits_per_second):
    if bits_per_second is None:
        return "-"
    for scale, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "Kbit/s")):
        if abs(bits_per_second) >= scale:
            return f"{bits_per_second / scale:.3g} {unit}"
    return f"{bits_per_second:.3g} bit/s"


def figure_text(value):
    if value is None:
        return "-"
    return f"{value:.3g}" if abs(value) < 1e6 else f"{value:.4g}"


def table_rows(summary):
    cells = summary["campaign"]["cells"]
    axes = []
    for cell in cells:
        axes += [name for name in cell["settings"] if name not in axes]
    extras = [column for column in EXTRA_COLUMNS if any(column[0] in cell["figures"] for cell in cells)]
    heading = ["cell", *axes, "n", "failed", "median", "95% CI", "cv", "outliers", *[c[1] for c in extras]]
    rows = [heading]
    for cell in cells:
        low, high = cell["ci95"]
        interval = "-" if low is None else f"{rate_text(low)} .. {rate_text(high)}" + ("" if cell["ci95_exact"] else "*")
        row = [cell["id"], *[cell["settings"].get(name, "") for name in axes], str(cell["n"]), str(cell["failed"]),
               rate_text(cell["median"]), interval, "-" if cell["cv"] is None else f"{cell['cv'] * 100:.1f}%",
               ",".join(str(r) for r in cell["outliers"]) or "-"]
        row += [figure_text((cell["figures"].get(name) or {}).get("median")) for name, _ in extras]
        rows.append(row)
    return rows


def aligned(rows):
    """Rows of strings as lines with each column as wide as its widest value, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip() for row in rows]


def text(summary):
    """The text table, one row per cell, and the notes under it."""
    lines = aligned(table_rows(summary))
    campaign = summary["campaign"]
    lines.append(f"{campaign['runs_done']} of {campaign['runs_total']} runs done"
                 + (" (interrupted: --resume continues it)" if campaign["interrupted"] else "")
                 + "; median goodput per cell over its measured runs; other columns are medians.")
    if any(not cell["ci95_exact"] and cell["n"] for cell in campaign["cells"]):
        lines.append("* fewer than 6 runs: no order-statistic interval reaches 95%, so the interval is min .. max.")
    lines += [f"warning: {warning}" for warning in campaign["environment_warnings"]]
    return "\n".join(lines) + "\n"


def label_name(name):
    return re.sub(r"[^a-zA-Z0-9_]", "_", name) if re.match(r"[a-zA-Z_]", name) else "_" + re.sub(r"\W", "_", name)


def label_value(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def labels(pairs):
    return "{" + ",".join(f'{label_name(k)}="{label_value(v)}"' for k, v in pairs) + "}"


def prometheus(summary):
    """A textfile for node_exporter's collector: the campaign's progress, and per cell its run
    counts and each figure's median, mean, stdev, min, max, cv and interval."""
    campaign = summary["campaign"]
    name = [("campaign", campaign["name"])]
    out = ["# HELP testio_campaign_runs Runs of the campaign, by state (done, total).",
           "# TYPE testio_campaign_runs gauge",
           f"testio_campaign_runs{labels(name + [('state', 'done')])} {campaign['runs_done']}",
           f"testio_campaign_runs{labels(name + [('state', 'total')])} {campaign['runs_total']}",
           "# HELP testio_campaign_interrupted 1 when the campaign was stopped before its last run.",
           "# TYPE testio_campaign_interrupted gauge",
           f"testio_campaign_interrupted{labels(name)} {int(campaign['interrupted'])}",
           "# HELP testio_campaign_cell_runs A cell's runs: measured (counted in statistics) and failed.",
           "# TYPE testio_campaign_cell_runs gauge"]
    figures = []
    for cell in campaign["cells"]:
        cell_labels = name + [("cell", cell["id"])] + [(k, v) for k, v in cell["settings"].items()]
        out.append(f"testio_campaign_cell_runs{labels(cell_labels + [('state', 'measured')])} {cell['n']}")
        out.append(f"testio_campaign_cell_runs{labels(cell_labels + [('state', 'failed')])} {cell['failed']}")
        for figure, described in cell["figures"].items():
            stats = {key: described.get(key) for key in ("median", "mean", "stdev", "min", "max", "cv")}
            stats["ci95_low"], stats["ci95_high"] = described.get("ci95", [None, None])
            figures += [f"testio_campaign_figure{labels(cell_labels + [('figure', figure), ('stat', stat)])} {value!r}"
                        for stat, value in stats.items()
                        if isinstance(value, (int, float)) and math.isfinite(value)]
    out += ["# HELP testio_campaign_figure A statistic of a figure over a cell's measured runs "
            "(figure names end in their unit: _bps bits/s, _us, _ms, _per_gb).",
            "# TYPE testio_campaign_figure gauge", *figures]
    return "\n".join(out) + "\n"


def write(directory, summary):
    """summary.json and campaign.prom, each written whole or not at all."""
    write_atomically(os.path.join(directory, "summary.json"), json.dumps(summary, indent=1) + "\n")
    write_atomically(os.path.join(directory, "campaign.prom"), prometheus(summary))

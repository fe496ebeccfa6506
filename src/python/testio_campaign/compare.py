"""testio compare A B: whether B's results differ from A's, cell by cell (docs/compare.md).

A and B are each a campaign directory, one testio --json report, a directory of reports, or a
quoted glob of reports. Cells match by their settings; each matched cell gets the ratio of
medians B/A with a bootstrap interval, the Mann-Whitney p value and a verdict. Exit 0, or 1 when
--fail-if-slower finds a cell slower by more than its percentage with significance, or 2 with one
sentence when the command line or an input is wrong."""
import argparse
import glob
import json
import os
import sys

from . import campaign_dir, environment, summary
from . import figures as report_figures
from . import statistics

EXIT_OK, EXIT_SLOWER, EXIT_USAGE = 0, 1, 2

# --figure NAME -> (the run's figure key, whether more is better, unit for the table). For the
# costs (CPU, calls, latency) more is worse: "slower" then means B costs more than A.
FIGURES = {
    "goodput": ("goodput_bps", True, "bit/s"),
    "sender-cpu": ("sender_cpu_s_per_gb", False, "CPU-s/GB"),
    "receiver-cpu": ("receiver_cpu_s_per_gb", False, "CPU-s/GB"),
    "sender-calls": ("sender_calls_per_gb", False, "calls/GB"),
    "receiver-calls": ("receiver_calls_per_gb", False, "calls/GB"),
    "latency-p50": ("latency_p50_us", False, "us"),
    "latency-p90": ("latency_p90_us", False, "us"),
    "latency-p99": ("latency_p99_us", False, "us"),
}

# The fields of start.testio.spec that make a report's settings; the rest (interval, omit, ...)
# shape what is printed, not what is measured.
SPEC_SETTINGS = ("workload", "direction", "connections", "threads", "buffer", "window", "recv_mode",
                 "send_mode", "engine", "duration_s", "total_bytes", "rate_bps", "fq_rate_bps",
                 "congestion", "no_delay", "hash", "tos", "cpus")


class InputError(ValueError):
    """Bad input: the text is one sentence for the user, and the exit is 2."""


def report_settings(report):
    """What a report measured, from start.testio.spec and the target: the workload's own
    settings flattened as settings.NAME."""
    start = report.get("start") or {}
    spec = (start.get("testio") or {}).get("spec") or {}
    settings = {name: spec[name] for name in SPEC_SETTINGS if name in spec}
    for name, value in (spec.get("settings") or {}).items():
        settings[f"settings.{name}"] = value
    target = start.get("connecting_to") or {}
    if target:
        settings["target"] = f"{target.get('host')}:{target.get('port')}"
    return settings


def report_environment(report):
    start = report.get("start") or {}
    return {"version": start.get("version"), "system": start.get("system_info"),
            "peer_version": report_figures.peer_version(report)}


def read_report(path):
    try:
        with open(path, encoding="utf-8") as text:
            report = json.load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"cannot read {path} as a testio --json report: {error}") from None
    if not isinstance(report, dict) or not ("start" in report or "error" in report):
        raise InputError(f"{path} is not a testio --json report")
    return report


def report_run(report):
    """A report as a run of runs.jsonl: ok when it measured something and names no error."""
    figures = report_figures.figures(report)
    return {"ok": not report.get("error") and bool(figures), "figures": figures, "report": report}


def report_paths(path):
    """The report files that `path` names: itself, the *.json of a directory, or a glob's matches."""
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(path, "*.json")))
        if not found:
            raise InputError(f"{path} is neither a campaign directory (it has no campaign.json) "
                             "nor a directory of testio --json reports")
        return found
    if os.path.isfile(path):
        return [path]
    if glob.has_magic(path):
        found = sorted(name for name in glob.glob(path) if os.path.isfile(name))
        if not found:
            raise InputError(f"{path} matches no file")
        return found
    raise InputError(f"{path} does not exist")


def load_side(path):
    """{"path", "kind" ("campaign" or "reports"), "runs", "campaign" (or None)}: every run,
    failed and warm-up ones included, each with its figures and report."""
    if os.path.isdir(path) and campaign_dir.is_campaign(path):
        try:
            campaign = campaign_dir.read_campaign(path)
        except campaign_dir.CampaignError as error:
            raise InputError(str(error)) from None
        return {"path": path, "kind": "campaign", "runs": campaign["runs"], "campaign": campaign}
    runs = [report_run(read_report(name)) for name in report_paths(path)]
    if not any(run["ok"] for run in runs):
        raise InputError(f"{path} holds no report of a test that measured something")
    return {"path": path, "kind": "reports", "runs": runs, "campaign": None}


def campaign_cells(side):
    """Cells of a campaign, keyed by their settings: the axes' values."""
    return {settings_key(cell["settings"]): cell for cell in campaign_dir.cells(side["campaign"])}


def report_cells(side, axes):
    """Cells of runs grouped by their reports' settings on `axes`: the settings that vary within
    A or within B. Runs without a report (failed before it) are counted against no cell."""
    cells = {}
    for run in side["runs"]:
        if run.get("warmup") or not run.get("report"):
            continue
        full = report_settings(run["report"])
        if not full:
            continue  # a run refused before it started: no settings to place it by
        settings = {name: full.get(name) for name in sorted(axes)}
        cell = cells.setdefault(settings_key(settings), {"settings": settings, "runs": [], "failed": 0})
        if run.get("ok"):
            cell["runs"].append(run)
        else:
            cell["failed"] += 1
    return cells


def settings_key(settings):
    return json.dumps(settings, sort_keys=True)


def settings_values(side):
    """Each report setting's distinct values within a side (as JSON texts); a setting that some
    reports lack (a workload's own) has the value null in those."""
    measured = [report_settings(run["report"]) for run in side["runs"]
                if run.get("report") and not run.get("warmup")]
    measured = [settings for settings in measured if settings]  # refused before it started: none
    names = {name for settings in measured for name in settings}
    return {name: {json.dumps(settings.get(name), sort_keys=True) for settings in measured} for name in names}


def side_environment(side):
    """A report side's environment: each key's value, or its distinct values joined by " | "
    when the side's reports disagree."""
    seen = {}
    for run in side["runs"]:
        if run.get("report") and (run["report"].get("start") or {}):
            for name, value in report_environment(run["report"]).items():
                seen.setdefault(name, [])
                if value not in seen[name]:
                    seen[name].append(value)
    return {name: values[0] if len(values) == 1 else " | ".join(map(str, values)) for name, values in seen.items()}


def match(a, b):
    """(cells of A, cells of B, environment differences). Two campaigns match by their axes'
    settings and differ by environment and base_args; anything else matches by the reports'
    settings that vary within a side, the settings fixed on each side listed as differences."""
    if a["kind"] == b["kind"] == "campaign":
        definition_a, definition_b = a["campaign"]["definition"], b["campaign"]["definition"]
        found = environment.differences(environment.comparable(definition_a.get("environment") or {}),
                                        environment.comparable(definition_b.get("environment") or {}))
        if definition_a.get("base_args") != definition_b.get("base_args"):
            found.append({"key": "base_args", "a": definition_a.get("base_args"), "b": definition_b.get("base_args")})
        return campaign_cells(a), campaign_cells(b), found
    values_a, values_b = settings_values(a), settings_values(b)
    axes = {name for values in (values_a, values_b) for name, seen in values.items() if len(seen) > 1}
    fixed_a = {name: json.loads(next(iter(seen))) for name, seen in values_a.items() if name not in axes}
    fixed_b = {name: json.loads(next(iter(seen))) for name, seen in values_b.items() if name not in axes}
    found = environment.differences(side_environment(a), side_environment(b))
    found += [dict(row, key=f"setting {row['key']}") for row in environment.differences(fixed_a, fixed_b)]
    return report_cells(a, axes), report_cells(b, axes), found


def figure_values(cell, key):
    return [float(run["figures"][key]) for run in cell["runs"] if (run.get("figures") or {}).get(key) is not None]


# A change within this many percent is noise however significant: runs through a shaper vary by
# hundredths of a percent, so a rank test calls a 0.2% drift between two campaigns of one system
# significant (the testbed's same-rate pairs did, 1 in 10). Criterion.rs's noise threshold is the
# same idea, at the same default.
NOISE_PERCENT = 1.0


def verdict_of(test, a, b, level, more_is_better, ratio=None, noise_percent=NOISE_PERCENT):
    """faster / slower / no difference: significant when p < level and the ratio of medians B/A
    moved more than noise_percent, B's side by U (U of A below half the pairs means B's values rank
    higher)."""
    if test["p"] is None:
        return "no data"
    if test["p"] >= level:
        return "no difference"
    if ratio is not None and abs(ratio - 1) * 100 <= noise_percent:
        return "no difference"
    b_higher = test["u"] < len(a) * len(b) / 2
    if b_higher == more_is_better:
        return "faster"
    return "slower"


def compare_cell(cell_a, cell_b, key, more_is_better, options):
    a, b = figure_values(cell_a, key), figure_values(cell_b, key)
    test = statistics.mann_whitney(a, b)
    ratio = statistics.ratio_of_medians(a, b)
    verdict = verdict_of(test, a, b, options.level, more_is_better, ratio["ratio"], options.noise)
    change = None if ratio["ratio"] is None else (ratio["ratio"] - 1) * 100
    slower_by = None if change is None else (-change if more_is_better else change)
    fails = (options.fail_if_slower is not None and verdict == "slower"
             and slower_by is not None and slower_by > options.fail_if_slower)

    def side(values, cell):
        figures = statistics.describe(values)
        return {"n": figures["n"], "failed": cell["failed"], "median": figures["median"],
                "ci95": figures["ci95"], "runs": values}

    return {"settings": cell_a["settings"], "a": side(a, cell_a), "b": side(b, cell_b),
            "ratio": ratio["ratio"], "ratio_ci95": ratio["ci95"], "change_percent": change,
            "u": test["u"], "p": test["p"], "method": test["method"], "verdict": verdict, "fails": fails}


def compare(options):
    a, b = load_side(options.a), load_side(options.b)
    cells_a, cells_b, environment = match(a, b)
    common = [name for name in cells_a if name in cells_b]
    if not common:
        raise InputError(f"{options.a} and {options.b} have no cells in common: "
                         f"A has {describe_cells(cells_a)}, B has {describe_cells(cells_b)}")
    key, more_is_better, _ = FIGURES[options.figure]
    cells = [compare_cell(cells_a[name], cells_b[name], key, more_is_better, options) for name in common]
    if all(cell["a"]["n"] == 0 and cell["b"]["n"] == 0 for cell in cells):
        raise InputError(f"no measured run of {options.a} or {options.b} has the figure {options.figure}")
    return {"compare": {
        "a": side_summary(a, cells_a), "b": side_summary(b, cells_b), "figure": key,
        "level": options.level, "noise_percent": options.noise, "fail_if_slower": options.fail_if_slower,
        "cells": cells,
        "unmatched": {"a": [cells_a[name]["settings"] for name in cells_a if name not in cells_b],
                      "b": [cells_b[name]["settings"] for name in cells_b if name not in cells_a]},
        "environment_differences": environment,
        "failed": any(cell["fails"] for cell in cells)}}


def describe_cells(cells):
    if not cells:
        return "no measured cells"
    return " and ".join(settings_text(cell["settings"]) for cell in list(cells.values())[:3]) + \
        (" ..." if len(cells) > 3 else "")


def side_summary(side, cells):
    campaign = side["campaign"]
    return {"path": side["path"], "kind": side["kind"],
            "name": campaign["definition"].get("name") if campaign else None,
            "cells": len(cells), "runs": len(side["runs"]),
            "failed": sum(cell["failed"] for cell in cells.values()),
            "cut_short": campaign["cut_short"] if campaign else False}


def settings_text(settings):
    """Settings as name=value, leaving out those a cell's workload lacks (null)."""
    return " ".join(f"{name}={value}" for name, value in settings.items() if value is not None) or "(one cell)"


def quantity(value, unit):
    """A figure for the table: bit/s with SI prefixes, the rest to three significant digits."""
    if value is None:
        return "-"
    if unit == "bit/s":
        for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= factor:
                return f"{value / factor:.3f} {prefix}bit/s"
        return f"{value:.0f} bit/s"
    return f"{value:.3g} {unit}"


def number(value, form):
    return "-" if value is None else format(value, form)


def text_table(result, unit):
    found = result["compare"]
    header = ["settings", "n A", "median A", "n B", "median B", "B/A", "95% interval", "p", "verdict"]
    rows = [header]
    for cell in found["cells"]:
        low, high = cell["ratio_ci95"]
        rows.append([settings_text(cell["settings"]), str(cell["a"]["n"]), quantity(cell["a"]["median"], unit),
                     str(cell["b"]["n"]), quantity(cell["b"]["median"], unit), number(cell["ratio"], ".3f"),
                     f"[{number(low, '.3f')}, {number(high, '.3f')}]", number(cell["p"], ".2g"),
                     cell["verdict"] + ("  FAILS" if cell["fails"] else "")])
    lines = [f"{name.upper()}: {found[name]['path']}" + (f" ({found[name]['failed']} failed runs left out)"
                                                        if found[name]["failed"] else "") for name in ("a", "b")]
    lines += [
             f"{found['figure']}, verdicts at p < {found['level']:g} and a change above {found['noise_percent']:g}% "
             "(Mann-Whitney U; ratio of medians "
             "with a bootstrap interval)", ""]
    lines += summary.aligned(rows)
    for side in ("a", "b"):
        for settings in found["unmatched"][side]:
            lines.append(f"only in {side.upper()}: {settings_text(settings)}")
    too_few = [cell for cell in found["cells"]
               if statistics.smallest_p(cell["a"]["n"], cell["b"]["n"]) >= found["level"]]
    if too_few:
        least = min(statistics.smallest_p(cell["a"]["n"], cell["b"]["n"]) for cell in too_few)
        lines += ["", f"{len(too_few)} of {len(found['cells'])} cells have too few runs to reach p < "
                  f"{found['level']:g} whatever they measured (the smallest p their counts allow is {least:.2g}): "
                  "run 5 or more a side."]
    if found["environment_differences"]:
        lines += ["", "environment differences:"]
        lines += [f"  {row['key']}: {row['a']} -> {row['b']}" for row in found["environment_differences"]]
    return "\n".join(lines)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)


def parse(argv):
    parser = Parser(prog="testio compare", description="Whether B's results differ from A's, cell by cell.")
    parser.add_argument("a", help="a campaign directory, a testio --json report, a directory of reports or a quoted glob")
    parser.add_argument("b", help="the same for the results compared with A")
    parser.add_argument("--level", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--noise", type=float, default=NOISE_PERCENT, metavar="PCT",
                        help=f"a change of at most PCT percent is no difference however significant (default {NOISE_PERCENT:g})")
    parser.add_argument("--fail-if-slower", type=float, metavar="PCT",
                        help="exit 1 when a cell of B is slower than A's by more than PCT percent, significantly")
    parser.add_argument("--figure", choices=sorted(FIGURES), default="goodput", help="the figure compared (default goodput)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    options = parser.parse_args(argv)
    if not 0 < options.level < 1:
        raise InputError(f"--level {options.level:g} is not between 0 and 1")
    if options.noise < 0:
        raise InputError(f"--noise {options.noise:g} is negative")
    if options.fail_if_slower is not None and options.fail_if_slower < 0:
        raise InputError(f"--fail-if-slower {options.fail_if_slower:g} is negative")
    return options


def main(argv):
    try:
        options = parse(argv)
        result = compare(options)
    except InputError as error:
        print(f"testio compare: {str(error).rstrip('.')}", file=sys.stderr)
        return EXIT_USAGE
    for side in ("a", "b"):
        if result["compare"][side]["cut_short"]:
            print(f"testio compare: the last line of {result['compare'][side]['path']}'s runs.jsonl was cut short "
                  "and is left out", file=sys.stderr)
    if options.json:
        print(json.dumps(result, indent=2))
    else:
        print(text_table(result, FIGURES[options.figure][2]))
    return EXIT_SLOWER if result["compare"]["failed"] else EXIT_OK

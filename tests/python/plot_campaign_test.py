#!/usr/bin/python3
"""testio plot on campaign directories (testio campaign -o DIR) written here by hand with fixed
figures, as testio campaign writes them: one campaign drawn cell by cell (bars with intervals,
boxes of the runs, CPU and calls when the runs have them), two compared cell by cell with the
significant difference marked. PNG, SVG and HTML, each HTML report checked in headless Chromium as
plot_test.py checks the reports'. Then the bad inputs: one sentence, exit 2, no OUT. No network.
Usage: plot_campaign_test.py TESTIO_BINARY."""
import json
import os
import statistics
import tempfile

import browser
import plot_checks
from harness import Skip, check, test, testio
from plot_checks import check_drawn, table

SCRATCH = tempfile.mkdtemp(prefix="testio-plot-campaign-")
AXES = [{"name": "connections", "option": "-P", "values": ["1", "8"]},
        {"name": "recv-mode", "option": "--recv-mode", "values": ["recv", "recv_into"]}]
CELLS = [{"connections": c, "recv-mode": m} for m in ("recv", "recv_into") for c in ("1", "8")]
# Each cell's goodput run by run (bit/s), five rounds after one warm-up round; cell 3's second
# round failed. Odd counts, so each median is one of the runs.
GOODPUT = [[9.41e9, 9.38e9, 9.52e9, 9.33e9, 9.47e9], [12.1e9, 11.8e9, 12.4e9, 12.0e9, 11.9e9],
           [14.2e9, 14.6e9, 14.4e9, 14.1e9, 14.5e9], [17.3e9, None, 17.1e9, 17.6e9, 16.2e9]]
WARMUP_GOODPUT = 1e9  # far below every measured run: left out of every figure


def plot(*args, code=0):
    return testio("plot", *args, code=code, limit=120)


def write_campaign(name, cells, goodput, further=True, environment=None, warmup=1):
    """A campaign directory as testio campaign leaves it: campaign.json, and runs.jsonl one round
    at a time (warm-ups first). `goodput[i][r]` is cell i's run r, None a failed run; `further`
    gives the runs CPU and calls figures too. No summary.json: plot must not need one."""
    path = os.path.join(SCRATCH, name)
    os.makedirs(path)
    definition = {"format": "testio-campaign/1", "name": name, "created": "2026-12-05T22:00:00Z",
                  "base_args": ["-c", "127.0.0.1", "-t", "10"], "axes": AXES, "repeat": len(goodput[0]),
                  "warmup": warmup, "shuffle": False, "seed": 1, "pause_s": 1.0,
                  "cells": [{"id": f"c{i}", "settings": settings, "args": []} for i, settings in enumerate(cells)],
                  "environment": environment or {"kernel": "6.1.0-28-amd64", "cpu_count": 2}}
    with open(os.path.join(path, "campaign.json"), "w", encoding="utf-8") as file:
        json.dump(definition, file)
    rounds = [[WARMUP_GOODPUT] * len(cells)] * warmup + [list(column) for column in zip(*goodput)]
    with open(os.path.join(path, "runs.jsonl"), "w", encoding="utf-8") as file:
        for number, column in enumerate(rounds):
            for index, bits in enumerate(column):
                figures = {} if bits is None else {"goodput_bps": bits}
                if further and bits is not None:
                    figures.update(sender_cpu_s_per_gb=0.1 + index / 100, receiver_cpu_s_per_gb=0.08,
                                   sender_calls_per_gb=480.0, receiver_calls_per_gb=4300.0 / (index + 1))
                run = {"cell": f"c{index}", "round": number, "warmup": number < warmup, "settings": cells[index],
                       "args": [], "started": "2026-12-05T22:00:10Z", "wall_s": 10.4, "exit": 0 if bits else 1,
                       "ok": bits is not None, "reason": "" if bits else "exit 1", "figures": figures,
                       "environment_changed": [], "report": None}
                file.write(json.dumps(run) + "\n")
    return path


def shown(value):
    """A figure as the tables show it: three significant digits."""
    return f"{value:.3g}"


def page_of(source, *more):
    """`source` (and `more`) drawn as an HTML report, checked in Chromium: (tables, plot ids)."""
    if not browser.binary():
        raise Skip("chromium is not installed")
    page = os.path.join(SCRATCH, os.path.basename(source) + "-" + "-".join(map(os.path.basename, more)) + ".html")
    plot(source, *more, "-o", page)
    return plot_checks.checked_page(page)


@test
def a_campaign_draws_each_cells_median_its_runs_and_its_cpu_and_calls():
    campaign = write_campaign("recv", CELLS, GOODPUT)
    png = os.path.join(SCRATCH, "recv.png")
    plot(campaign, "-o", png)
    check_drawn(png, min_height=1500)
    svg = os.path.join(SCRATCH, "recv.svg")
    plot(campaign, "-o", svg)
    with open(svg, encoding="utf-8") as file:
        text = file.read()
    check(text.startswith("<?xml") and "connections=8" in text and "recv-mode=recv_into" in text,
          "the SVG names the cells by their settings")
    tables, plots = page_of(campaign)
    check(plots == ["campaign-goodput", "campaign-goodput-runs", "campaign-cpu", "campaign-calls"], f"plots {plots}")
    cells = table(tables, "recv: goodput per cell (Gbit/s)")
    for settings, runs in zip(CELLS, GOODPUT):
        measured = [bits / 1e9 for bits in runs if bits is not None]
        row = cells[cells.index(f"connections={settings['connections']}, recv-mode={settings['recv-mode']}"):][:11]
        check(row[1] == str(len(measured)) and row[3] == shown(statistics.median(measured)), f"row {row}")
        check(row[7] == shown(min(measured)) and row[8] == shown(max(measured)), f"the warm-up counted: {row}")
    check(cells[cells.index("connections=8, recv-mode=recv_into") + 2] == "1", "the failed run is counted")
    described = table(tables, "recv: the campaign")
    check("19 measured, 1 failed, 4 warm-up" in described, f"campaign {described}")
    check("-P 1, 8" in described and "--recv-mode recv, recv_into" in described, f"axes {described}")
    for figure in ("sender CPU-s/GB", "receiver CPU-s/GB", "sender calls/GB", "receiver calls/GB"):
        table(tables, f"recv: {figure} per cell")


@test
def a_campaign_of_goodput_alone_cut_short_by_a_kill_is_drawn_with_a_note():
    campaign = write_campaign("goodput-only", CELLS[:2], GOODPUT[:2], further=False)
    with open(os.path.join(campaign, "runs.jsonl"), "a", encoding="utf-8") as file:
        file.write('{"cell": "c0", "round": 6, "warmup": false, "figu')
    png = os.path.join(SCRATCH, "goodput-only.png")
    done = plot(campaign, "-o", png)
    notes = done.stderr.strip().splitlines()
    check(len(notes) == 1 and "cut short" in notes[0], f"stderr: {done.stderr}")
    check_drawn(png)
    tables, plots = page_of(campaign)
    check(plots == ["campaign-goodput", "campaign-goodput-runs"], f"plots {plots}")
    cells = table(tables, "goodput per cell (Gbit/s)")
    check(cells[cells.index("connections=1, recv-mode=recv") + 1] == "5", f"five runs, not six: {cells}")


@test
def two_campaigns_are_compared_cell_by_cell_with_the_significant_difference_marked():
    # Cell 0: every run of B well below every run of A (ratio 0.8); cell 1: B's runs between A's.
    before = write_campaign("before", CELLS[:2], [[10e9, 10.1e9, 9.9e9, 10.2e9, 9.8e9, 10.05e9, 9.95e9],
                                                  [12e9, 12.2e9, 11.8e9, 12.3e9, 11.7e9, 12.1e9, 11.9e9]])
    # B's cells in another order, and one A has not: matched by settings, not by place.
    after = write_campaign("after", [CELLS[1], CELLS[0], CELLS[2]],
                           [[12.05e9, 11.75e9, 12.25e9, 11.85e9, 12.15e9, 11.95e9, 12e9],
                            [8e9, 8.1e9, 7.9e9, 8.2e9, 7.8e9, 8.05e9, 7.95e9], [14e9] * 7],
                           environment={"kernel": "6.12.0-1-amd64", "cpu_count": 2})
    png = os.path.join(SCRATCH, "compare.png")
    plot(before, after, "-o", png)
    check_drawn(png, min_height=1200)
    svg = os.path.join(SCRATCH, "compare.svg")
    plot(before, after, "-o", svg)
    with open(svg, encoding="utf-8") as file:
        text = file.read()
    check("×0.80 *" in text and "×1.00" in text and "×1.00 *" not in text, "the SVG marks cell 0 only")
    tables, plots = page_of(before, after)
    check(plots == ["compare-goodput", "compare-goodput-runs", "compare-cpu", "compare-calls"], f"plots {plots}")
    cells = table(tables, "before against after: goodput per cell (Gbit/s)")
    slower = cells[cells.index("connections=1, recv-mode=recv"):][:9]
    check(slower[1:6] == ["7", "7", "10", "8", "0.8"] and slower[8] == "slower *", f"cell 0: {slower}")
    same = cells[cells.index("connections=8, recv-mode=recv"):][:9]
    check(same[5] == "1" and same[8] == "no difference", f"cell 1: {same}")
    check("connections=1, recv-mode=recv_into" in table(tables, "cells in one campaign only"), "the unmatched cell")
    differences = table(tables, "environment differences")
    check("kernel" in differences and "6.12.0-1-amd64" in differences and "cpu_count" not in differences,
          f"environment {differences}")
    layout = browser.measure(os.path.join(SCRATCH, "before-after.html"), 400)
    check(layout["width"] <= layout["viewport"], f"the page is {layout['width']} px wide in a {layout['viewport']} px window")


# ---- bad input: one sentence, exit 2, no OUT ------------------------------------------------------

def refused(args, saying, code=2):
    out = args[-1]
    done = plot(*args, code=code)
    lines = done.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("testio plot: ") and saying in lines[0], f"stderr: {done.stderr!r}")
    check(not os.path.exists(out), f"{out} was written")


@test
def a_directory_that_is_not_a_campaign_is_one_sentence_and_exit_2():
    out = os.path.join(SCRATCH, "bad.png")
    empty = os.path.join(SCRATCH, "empty")
    os.makedirs(empty)
    refused([empty, "-o", out], "is not a campaign directory: it has no campaign.json")
    for name, text in (("not-json", "this is not JSON"), ("not-ours", json.dumps({"format": "other/1", "cells": []}))):
        directory = os.path.join(SCRATCH, name)
        os.makedirs(directory)
        with open(os.path.join(directory, "campaign.json"), "w", encoding="utf-8") as file:
            file.write(text)
        refused([directory, "-o", out], f"{directory} is not a campaign directory")


@test
def directories_mixed_with_reports_three_campaigns_and_nothing_measured_are_refused():
    campaign = write_campaign("one", CELLS[:1], [[9e9]])
    report = os.path.join(SCRATCH, "report.json")
    with open(report, "w", encoding="utf-8") as file:
        file.write("{}")
    out = os.path.join(SCRATCH, "refused.png")
    refused([campaign, report, "-o", out], "not both")
    refused([campaign, campaign, campaign, "-o", out], "3 campaign directories")
    refused([campaign, campaign, "-o", out], "--label")
    check("testio plot CAMPAIGN_DIR" in plot("--help").stdout, "--help shows the campaigns' usage")
    failed = write_campaign("failed", CELLS[:1], [[None, None]])
    refused([failed, "-o", out], "nothing to plot")
    page = os.path.join(SCRATCH, "failed.html")
    plot(failed, "-o", page)  # its tables say what failed
    check("2 failed" in open(page, encoding="utf-8").read(), "the page counts the failed runs")


if __name__ == "__main__":
    plot_checks.run_suite(SCRATCH)

#!/usr/bin/python3
"""testio plot on reports made here by real runs over 127.0.0.1: stream, -R, --bidir, UDP, rr,
transfers, HTTP and --rpm against nginx, latency under load, a server's JSON, a --json-stream cut short, and
(in a build with MPI) a 4-rank mesh under mpirun. Each PNG must be drawn (its size, not blank);
each HTML report is opened in headless Chromium: no console message, no request outside the file,
every plot visible in a screenshot, the tables holding the report's figures, and a narrow screen
with no page-wide sideways scroll. Then the bad inputs: one sentence, exit 2 (or 1), no partial
OUT. Usage: plot_test.py TESTIO_BINARY mpi|no-mpi. No rate or time is asserted."""
import json
import os
import subprocess
import sys

import browser
import harness
import plot_checks
import plot_reports
from harness import Skip, check, test, testio
from plot_checks import Cells, check_drawn, table

SCRATCH = plot_reports.SCRATCH
CLIENT_RUNS = plot_reports.CLIENT_RUNS
made, save = plot_reports.made, plot_reports.save


def plot(*args, code=0):
    return testio("plot", *args, code=code, limit=120)


_html_reports = {}


def html_report(kind, *extra):
    """Plots `kind`'s report as HTML, opens it in Chromium, checks what every page must be, and
    returns ({table title: cells}, the report document or None, the plots' ids). Once per kind
    and arguments: a second test asking for the same page gets what the first found."""
    if not browser.binary():
        raise Skip("chromium is not installed")
    if (kind, extra) not in _html_reports:
        _html_reports[(kind, extra)] = _html_report(kind, *extra)
    return _html_reports[(kind, extra)]


def _html_report(kind, *extra):
    source = made(kind)
    page = os.path.join(SCRATCH, f"{kind}.html")
    plot(source, *extra, "-o", page)
    tables, plots = plot_checks.checked_page(page)
    document = None
    if not source.endswith(".json-stream") and kind not in ("server", "mesh"):
        with open(source, encoding="utf-8") as file:
            document = json.load(file)
    return tables, document, plots


def drawn(kind, min_height=300):
    """`kind`'s report as a PNG, checked drawn, then as an HTML page checked in Chromium."""
    png = os.path.join(SCRATCH, f"{kind}.png")
    plot(made(kind), "-o", png)
    check_drawn(png, min_height)
    return html_report(kind)


def gbits(bits):
    return f"{bits / 1e9:.2f}"


def shown(value):
    """A figure as the tables show it: three significant digits, whole numbers from 1,000 up."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


# ---- every kind, as PNG and as HTML -------------------------------------------------------------

@test
def a_stream_report_draws_each_connection_the_sum_and_the_balance():
    tables, document, plots = drawn("stream", min_height=700)
    check(plots == ["throughput-stream-forward"], f"plots {plots}")
    totals = table(tables, ": totals")
    check(gbits(document["end"]["sum_received"]["bits_per_second"]) in totals, f"totals {totals}")
    check(f"{document['end']['sum_received']['bytes']:,}" in totals, f"totals {totals}")
    each = table(tables, "each connection (stream, forward)")
    for stream in document["end"]["streams"]:
        check(gbits(stream["receiver"]["bits_per_second"]) in each, f"connection {stream['receiver']['socket']}: {each}")


@test
def reverse_and_bidir_reports_draw_each_direction():
    for kind, wanted in (("reverse", ["throughput-stream-reverse"]),
                         ("bidir", ["throughput-stream-forward", "throughput-stream-reverse"])):
        tables, document, plots = drawn(kind)
        check(plots == wanted, f"{kind}: plots {plots}")
        totals = table(tables, ": totals")
        check(gbits(document["end"]["sum_received"]["bits_per_second"]) in totals, f"{kind}: totals {totals}")
        if kind == "bidir":
            reverse = document["end"]["testio"]["bidir_reverse"]["end"]["sum_received"]
            check(gbits(reverse["bits_per_second"]) in totals, f"bidir reverse: totals {totals}")


@test
def a_udp_report_draws_loss_socket_drops_and_jitter_per_interval():
    tables, document, plots = drawn("udp")
    check(plots == ["throughput-udp-forward", "udp-forward"], f"plots {plots}")
    udp = table(tables, "UDP (forward)")
    check(f"{document['end']['testio']['udp']['sent_datagrams']:,}" in udp, f"udp {udp}")
    intervals = document["end"]["testio"]["remote_intervals"]
    check(all("socket_drops" in i["sum"]["testio"] for i in intervals), "the receiver's intervals carry socket_drops")


@test
def rr_transfers_and_http_reports_draw_their_distributions():
    for kind, rows in (("rr", ["rr round trip"]), ("transfers", ["transfer time", "connect (handshake RTT)"]),
                       ("http", ["HTTP time to first byte", "HTTP transfer time"])):
        tables, document, plots = drawn(kind)
        check("distributions" in plots, f"{kind}: plots {plots}")
        cells = table(tables, ": distributions")
        for row in rows:
            check(row in cells, f"{kind}: {row} missing from {cells}")
        testio_end = document["end"]["testio"]
        summary = testio_end["rr"]["latency_us"] if kind == "rr" else testio_end["transfers"]["transfer_ms"]
        check(len(summary["cdf"]) == 19 and summary["cdf"][0][0] == 0 and summary["cdf"][-1][0] == 100,
              f"{kind}: cdf {summary['cdf']}")
        check(shown(summary['p50']) in cells, f"{kind}: p50 {summary['p50']} not in {cells}")


@test
def a_latency_report_draws_the_timeline_with_phases_and_a_cdf_per_phase():
    tables, document, plots = drawn("latency", min_height=1000)
    check({"latency-timeline", "latency-cdf"} <= set(plots), f"plots {plots}")
    cells = table(tables, "latency under load")
    for phase in document["end"]["latency"]:
        check(phase["name"] in cells, f"phase {phase['name']} missing")
        check(shown(phase['udp']['p50_ms']) in cells, f"{phase['name']}: udp p50 {phase['udp']['p50_ms']}")
        check(len(phase["udp"]["cdf_ms"]) == 19, f"{phase['name']}: cdf_ms {phase['udp'].get('cdf_ms')}")
    probes = document["end"]["testio"]["with"][-1]["intervals"]
    check(any("udp_up_p50_ms" in i["testio"]["figures"] for i in probes), "the probes' intervals carry udp_up_p50_ms")


@test
def an_rpm_report_draws_its_load_and_each_directions_probe_steps():
    tables, document, plots = drawn("rpm")
    check(plots == ["throughput-rpm-forward", "rpm"], f"plots {plots}")
    cells = table(tables, "responsiveness (--rpm)")
    for entry in document["end"]["testio"]["rpm"]["directions"]:
        check(entry["direction"] in cells and shown(entry['rpm']) in cells, f"{entry['direction']}: {cells}")


@test
def a_composed_tests_json_stream_draws_what_its_document_draws():
    """--json-stream carries the other workloads' intervals in with_interval events, numbered by
    their place in the test: drawn from them, the same plots as from the --json document."""
    _, _, from_document = html_report("latency")
    _, _, from_stream = html_report("latency-stream")
    check(from_stream == from_document, f"stream {from_stream}, document {from_document}")
    # Part by part: each workload's name, direction, span and intervals alike.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "python"))
    from testio_plot import load, parts

    def shape(path):
        report = load.read_report(path, "run")
        return [(p.workload, p.direction, p.label, len(p.intervals), len(p.own_intervals))
                for _, _, test_parts in parts.tests_of([report]) for p in test_parts]
    check(shape(made("latency-stream")) == shape(made("latency")),
          f"stream {shape(made('latency-stream'))}, document {shape(made('latency'))}")


@test
def a_servers_json_draws_every_test_it_served():
    tables, _, plots = drawn("server")
    starts = [title for title in tables if title.endswith(": the test")]
    check(len(starts) == len(CLIENT_RUNS) + 1, f"{len(starts)} tests in the server's page: {starts}")
    # The server's side: what it received of each test (an rr server keeps no round trips).
    check({"throughput-stream-forward", "throughput-stream-reverse", "udp-forward"} <= set(plots), f"plots {plots}")


@test
def a_json_stream_cut_short_is_drawn_up_to_where_it_stops_with_a_note():
    png = os.path.join(SCRATCH, "cut.png")
    done = plot(made("stream-cut"), "-o", png)
    notes = done.stderr.strip().splitlines()
    check(len(notes) == 1 and "before the test's end" in notes[0], f"stderr: {done.stderr}")
    check_drawn(png)
    tables, _, plots = html_report("stream-cut")
    check(plots == ["throughput-stream-forward"], f"plots {plots}")


@test
def a_mesh_report_draws_the_matrix_and_each_hosts_totals():
    tables, _, plots = drawn("mesh")
    check(plots == ["mesh"], f"plots {plots}")
    with open(made("mesh"), encoding="utf-8") as file:
        mesh = json.load(file)["mesh"]
    matrix = table(tables, "from sender (row) to receiver (column)")
    for pair in mesh["pairs"]:
        check(gbits(pair["bits_per_second"]) in matrix, f"{pair['from']} -> {pair['to']} missing from {matrix}")


@test
def a_failed_pair_is_crossed_out_and_its_reason_listed():
    """The run's own mesh report with one pair marked failed, as mesh.cpp writes a pair whose
    client failed: the matrix says FAIL there and the failures table gives the reason."""
    with open(made("mesh"), encoding="utf-8") as file:
        document = json.load(file)
    pair = document["mesh"]["pairs"][0]
    pair.update(ok=False, reason="connection refused", bits_per_second=0)
    source = save("mesh-failed.json", json.dumps(document))
    page = os.path.join(SCRATCH, "mesh-failed.html")
    plot(source, "-o", page)
    cells = Cells()
    with open(page, encoding="utf-8") as file:
        cells.feed(file.read())
    check("FAIL" in table(cells.tables, "from sender (row) to receiver (column)"), "no FAIL in the matrix")
    check("connection refused" in table(cells.tables, "failed pairs"), f"failures {list(cells.tables)}")
    png = os.path.join(SCRATCH, "mesh-failed.png")
    plot(source, "-o", png)
    check_drawn(png)


@test
def a_stream_whose_last_line_is_half_written_is_drawn_up_to_it():
    with open(made("stream-cut"), encoding="utf-8") as file:
        text = file.read()
    source = save("half-line.json-stream", text + '{"event":"interval","data":{"streams":[{"socket":1,"sta')
    png = os.path.join(SCRATCH, "half-line.png")
    done = plot(source, "-o", png)
    check("before the test's end" in done.stderr, f"stderr: {done.stderr}")
    check_drawn(png)


@test
def several_reports_overlay_each_under_its_label():
    png = os.path.join(SCRATCH, "compare.png")
    plot(made("stream"), made("reverse"), made("bidir"), "--label", "before", "--label", "after", "--label", "both",
         "-o", png)
    check_drawn(png, min_height=1400)
    tables, _, plots = html_report("stream", made("bidir"), "--label", "one", "--label", "two")
    check(any(title.startswith("one") for title in tables) and any(title.startswith("two") for title in tables),
          f"labels in {list(tables)}")
    svg = os.path.join(SCRATCH, "compare.svg")
    plot(made("stream"), made("bidir"), "-o", svg)
    with open(svg, encoding="utf-8") as file:
        text = file.read()
    check(text.startswith("<?xml") and "<svg" in text and "stream: sum" in text and "bidir: sum" in text,
          "the SVG names both reports")


@test
def a_narrow_screen_needs_no_sideways_scroll_of_the_page():
    if not browser.binary():
        raise Skip("chromium is not installed")
    page = os.path.join(SCRATCH, "narrow.html")
    plot(made("latency"), "-o", page)
    layout = browser.measure(page, 400)
    check(layout["width"] <= layout["viewport"], f"the page is {layout['width']} px wide in a {layout['viewport']} px window")
    check(all(image["width"] <= layout["viewport"] for image in layout["images"]), f"{layout['images']}")


@test
def the_browser_check_sees_a_request_outside_the_file_and_a_console_error():
    """The checks above must be able to fail: a page that fetches from a (loopback) server and
    logs an error is caught on both counts."""
    if not browser.binary():
        raise Skip("chromium is not installed")
    page = save("leaky.html", '<!DOCTYPE html><html><body><figure id="x"><img src="http://127.0.0.1:9/x.png">'
                              '</figure><script>console.error("boom")</script></body></html>')
    seen = browser.visit(page, os.path.join(SCRATCH, "leaky.png"))
    check(any("boom" in line for line in seen.console), f"console {seen.console}")
    check(seen.requests == ["http://127.0.0.1:9/x.png"], f"requests {seen.requests}")
    check(seen.layout["images"] and not seen.layout["images"][0]["decoded"], f"{seen.layout}")


# ---- bad input: one sentence, an exit code, no partial OUT ---------------------------------------

def refused(args, code, saying):
    done = plot(*args, code=code)
    lines = done.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("testio plot: ") and saying in lines[0], f"stderr: {done.stderr!r}")
    check(not done.stdout, f"stdout: {done.stdout!r}")


@test
def a_file_that_is_not_testios_report_is_one_sentence_and_exit_2():
    out = os.path.join(SCRATCH, "bad.png")
    cases = {
        "not-json.json": ("this is not JSON\n", "is not testio's JSON"),
        "empty.json": ("", "holds no JSON document"),
        "iperf3.json": (json.dumps({"start": {"version": "iperf 3.12"}, "intervals": [], "end": {}}), "iperf 3.12"),
        "future.json": (json.dumps({"start": {"version": "testio 9.0.0"}, "intervals": [], "end": {}}), "testio 9.0.0"),
        "list.json": ("[1, 2, 3]", "not a report"),
        "failed.json": (json.dumps({"start": {}, "intervals": [], "end": {}, "error": "cannot connect to 127.0.0.1 port 1"}),
                        "a test that failed before it began: cannot connect"),
        "cut.json": ('{"start": {"version": "testio 0.1.0"}, "intervals": [', "is not testio's JSON"),
    }
    for name, (text, saying) in cases.items():
        refused([save(name, text), "-o", out], 2, saying)
        check(not os.path.exists(out), f"{name}: {out} was written")
    refused([os.path.join(SCRATCH, "missing.json"), "-o", out], 2, "cannot read")


@test
def usage_errors_are_one_sentence_and_exit_2():
    report = made("rr")
    refused([report, "-o", os.path.join(SCRATCH, "x.jpg")], 2, "must end in .png, .svg or .html")
    refused([report, "--label", "a", "--label", "b", "-o", os.path.join(SCRATCH, "x.png")], 2, "one per report")
    refused([report], 2, "-o")
    refused(["-o", os.path.join(SCRATCH, "x.png")], 2, "REPORT.json")
    check("testio plot REPORT.json" in plot("--help").stdout, "--help shows the usage")


@test
def an_output_that_cannot_be_written_is_one_sentence_and_leaves_nothing_behind():
    refused([made("rr"), "-o", os.path.join(SCRATCH, "no-such-directory", "x.png")], 1, "cannot write")
    refused([made("rr"), "-o", "/proc/testio-plot.png"], 1, "cannot write")
    # A failed plot leaves an earlier OUT as it was, and no half-written file beside it.
    earlier = save("earlier.png", "the earlier plot")
    refused([save("junk.json", "{}"), "-o", earlier], 2, "not testio's JSON")
    with open(earlier, encoding="utf-8") as file:
        check(file.read() == "the earlier plot", "the earlier OUT was overwritten")
    check(not [name for name in os.listdir(SCRATCH) if name.endswith(".part")], f"left behind: {os.listdir(SCRATCH)}")


@test
def without_matplotlib_it_says_what_to_install():
    fake = os.path.join(SCRATCH, "no-matplotlib", "matplotlib")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "__init__.py"), "w", encoding="utf-8") as file:
        file.write('raise ImportError("this test hides matplotlib")\n')
    done = subprocess.run([harness.BINARY, "plot", made("rr"), "-o", os.path.join(SCRATCH, "none.png")],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": os.path.dirname(fake)})
    check(done.returncode == 1, f"exit {done.returncode}: {done.stderr}")
    check(done.stderr.strip() == "testio plot: matplotlib is not installed: apt-get install python3-matplotlib",
          f"stderr: {done.stderr!r}")
    check(not os.path.exists(os.path.join(SCRATCH, "none.png")), "an OUT was written")


if __name__ == "__main__":
    plot_checks.run_suite(SCRATCH)

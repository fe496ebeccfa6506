#!/usr/bin/python3
"""prometheus_server.py and configs/grafana/testio.json checked without testio: a Python server on
a loopback port serves a sample of every server and exporter metric at /metrics, of every test
metric at /probe (testio_up 0 and a reason for target DOWN); Prometheus scrapes both, /probe
through the blackbox-style relabelling. promtool must find them clean, every dashboard query
must return data, Prometheus must stop cleanly. Usage: prometheus_server_selftest.py [DASHBOARD]."""
import http.server
import os
import sys
import threading
import time
import urllib.parse

from harness import Failure, check, run_tap
from prometheus_server import Prometheus, dashboard_queries, promtool_check

UP, DOWN = "127.0.0.1:5201", "127.0.0.1:9"
DASHBOARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../configs/grafana/testio.json")
F, R, C, S = {"direction": "forward"}, {"direction": "reverse"}, {"side": "client"}, {"side": "server"}
SUMMARY = [({"quantile": q}, value) for q, value in (("0.5", 5e-5), ("0.9", 8e-5), ("0.99", 2e-4), ("0.999", 9e-4))]
REASONS = ("busy", "auth", "invalid", "not_allowed", "handshakes", "version", "unsupported")


def exposition(families):
    """Each (name, samples): a number (no labels), [(labels, value)], or SUMMARY (+ _sum, _count)."""
    lines = []
    for name, samples in families:
        kind = "summary" if samples is SUMMARY else "counter" if name.endswith("_total") else "gauge"
        lines += [f"# HELP {name} testio self-test sample.", f"# TYPE {name} {kind}"]
        for labels, value in samples if isinstance(samples, list) else [({}, samples)]:
            text = ",".join(f'{key}="{label}"' for key, label in labels.items())
            lines.append(f"{name}{{{text}}} {value}" if text else f"{name} {value}")
        lines += [f"{name}_sum 1.5", f"{name}_count 1000"] if kind == "summary" else []
    return "\n".join(lines) + "\n"


def server_metrics(scrape):
    """The server's and the exporter's /metrics; counters grow with `scrape`."""
    now = int(time.time())
    return exposition([
        ("testio_build_info", [({"version": "0.0-selftest"}, 1)]), ("testio_server_start_time_seconds", now - 100),
        ("testio_connections_accepted_total", 3 * scrape), ("testio_tests_running", 1),
        ("testio_tests_served_total", [({"protocol": p}, scrape) for p in ("testio", "iperf3")]),
        ("testio_tests_failed_total", [({"protocol": p}, scrape // 2) for p in ("testio", "iperf3")]),
        ("testio_tests_refused_total", [({"reason": reason}, scrape // 3) for reason in REASONS]),
        ("testio_received_bytes_total", 125_000_000 * scrape), ("testio_sent_bytes_total", 25_000_000 * scrape),
        ("testio_last_test_goodput_bytes_per_second", [({"peer": "127.0.0.1", **F}, 1.2e9), ({"peer": "::1", **R}, 9e8)]),
        ("testio_last_test_timestamp_seconds", [({"peer": "127.0.0.1"}, now - 5)]),
        ("testio_exporter_probes_total", [({"result": r}, scrape) for r in ("succeeded", "failed", "refused")]),
        ("testio_exporter_probes_running", 0)])


def test_metrics(up=True):
    """A probe's (or textfile's) metrics; down, testio_up 0 with its reason and nothing else."""
    if not up:
        return exposition([("testio_up", [({"reason": "connect"}, 0)])])
    return exposition([
        ("testio_up", 1), ("testio_test_timestamp_seconds", int(time.time()) - 2),
        ("testio_test_duration_seconds", 1.0), ("testio_test_connections", 2),
        ("testio_goodput_bytes_per_second", [(F, 1.1e9), (R, 1e9)]), ("testio_test_received_bytes", [(F, 1.1e9), (R, 1e9)]),
        ("testio_tcp_retransmits", [(F, 0), (R, 3)]), ("testio_fairness_ratio", [(F, 0.998), (R, 0.97)]),
        ("testio_cpu_seconds", [(C, 0.4), (S, 0.3)]), ("testio_cpu_seconds_per_byte", [(C, 3.6e-10), (S, 2.7e-10)]),
        ("testio_udp_datagrams", [(F, 10000)]), ("testio_udp_lost_datagrams", [(F, 12)]),
        ("testio_udp_loss_ratio", [(F, 0.0012)]), ("testio_udp_jitter_seconds", [(F, 2e-5)]),
        ("testio_rr_latency_seconds", SUMMARY), ("testio_rr_transactions_per_second", 20000),
        ("testio_transfer_duration_seconds", SUMMARY), ("testio_transfer_connect_seconds", SUMMARY),
        ("testio_transfers", [({"result": "completed"}, 1000), ({"result": "failed"}, 0)]),
        ("testio_transfers_per_second", 1000), ("testio_http_first_byte_seconds", SUMMARY),
        ("testio_http_responses", [({"code": "200"}, 1000)])])


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/metrics":
            self.server.scrapes += 1
            body = server_metrics(self.server.scrapes)
        else:  # /probe
            self.server.probes.append(urllib.parse.parse_qs(url.query))
            body = test_metrics(self.server.probes[-1].get("target") != [DOWN])
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body.encode())


def named(name, function):
    function.__name__ = name  # run_tap's TAP line
    return function


def promtool_tests():
    def lint(text, flagged=""):
        def test():
            ok, output = promtool_check(text)
            check(ok != bool(flagged) and (flagged in output if flagged else not output), f"promtool: {output}")
        return test
    return [named("promtool: server and exporter metrics are clean", lint(server_metrics(1))),
            named("promtool: probe metrics are clean", lint(test_metrics())),
            named("promtool: a failed probe's metrics are clean", lint(test_metrics(False))),
            named("promtool flags a counter without _total",
                  lint("# HELP x_bytes x\n# TYPE x_bytes counter\nx_bytes 1\n", flagged='"_total" suffix'))]


def prometheus_tests(prometheus, exporter, queries):
    def api():
        up = {r["metric"]["instance"]: (r["metric"].get("reason"), r["value"][1]) for r in prometheus.query("testio_up")}
        check(up == {UP: (None, "1"), DOWN: ("connect", "0")}, f"testio_up by instance: {up}")
        check(all(p.get("connections") == ["2"] and p.get("time") == ["1"] for p in exporter.probes),
              f"the params did not reach /probe: {exporter.probes}")
        health = prometheus.target_health()  # {url: (health, last error)}
        check(sorted(health.values()) == [("up", "")] * 3, f"targets: {health}")
        try:
            prometheus.query("rate(testio_up[")
        except RuntimeError as error:
            return check("parse error" in str(error), f"the error: {error}")
        raise Failure("a bad query did not raise")

    def clean_shutdown():
        directory = prometheus.dir
        prometheus.stop()
        check(prometheus.process.returncode == 0 and not os.path.exists(directory), f"exit {prometheus.process.returncode}")
    dashboard = [named(f"{title}: {e}", lambda e=e: prometheus.wait_for(e, limit=15)) for title, e in queries]
    return [named("probe relabelling, targets(), a bad query raising", api), *dashboard, clean_shutdown]


def main():
    queries = dashboard_queries(sys.argv[1] if len(sys.argv) > 1 else DASHBOARD)
    exporter = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    exporter.scrapes, exporter.probes = 0, []
    threading.Thread(target=exporter.serve_forever, daemon=True).start()
    address = f"127.0.0.1:{exporter.server_address[1]}"
    jobs = [{"name": "testio-server", "targets": [address]}, {"name": "testio-probe", "probe_targets": [UP, DOWN],
                                                              "exporter": address, "params": {"connections": 2, "time": 1}}]
    started = time.monotonic()
    with Prometheus(jobs) as prometheus:
        ready = time.monotonic() - started
        prometheus.wait_for("count(up == 1) == 3", limit=30)  # the first scrapes: about 6 s
        print(f"# ready after {ready:.2f} s, every target scraped after {time.monotonic() - started:.2f} s")
        code = run_tap(promtool_tests() + prometheus_tests(prometheus, exporter, queries))
    exporter.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())

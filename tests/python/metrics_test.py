#!/usr/bin/python3
"""Prometheus metrics against the real components: Debian's prometheus scraping `testio -s
--metrics`, `testio exporter`'s probes and --prometheus textfiles (served by python3 -m
http.server, as node_exporter's textfile collector would read them); `promtool check metrics` on
every exposition; every PromQL expression of configs/grafana/testio.json returns data. Usage:
metrics_test.py TESTIO_BINARY. Counts and names only; no rate or time is asserted."""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import harness
from harness import check, test, testio
from http_servers import PythonHttpServer, wait_for_port
from prometheus_server import Prometheus, dashboard_queries, free_port, promtool_check

DASHBOARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs", "grafana", "testio.json")


def fetch(url, method="GET", data=None):
    """(status, body) of one request."""
    request = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def lint(text, what):
    ok, output = promtool_check(text)
    check(ok, f"promtool check metrics on {what}: {output}\n{text[:2000]}")
    return text


def sample(text, name, labels=""):
    """The value of the sample `name{labels}` (labels as written, in order), or None."""
    match = re.search(rf"^{re.escape(name)}{re.escape('{' + labels + '}' if labels else '')} (\S+)$", text, re.M)
    return float(match.group(1)) if match else None


class Exporter:
    """testio exporter on a loopback port the kernel picks (its log says which: a port picked here
    and bound later can be taken meanwhile by any other suite's socket); stopped on exit, and
    one that died first says so with its stderr."""

    def __init__(self, *extra):
        self.err = harness.appending_file()
        self.process = subprocess.Popen([harness.BINARY, "exporter", "--listen", "127.0.0.1:0", *extra],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
        try:
            harness.wait_until(lambda: self._listening() or self.process.poll() is not None, 10, "the exporter to listen")
        except harness.Failure:
            pass
        if not self._listening():
            self.__exit__()
            raise harness.Failure("the exporter did not start: " + self.stderr()[-600:])
        self.address = f"127.0.0.1:{self.port}"

    def _listening(self):
        match = re.search(r"exporter listening on \S+ \(port (\d+)\)", self.stderr())
        self.port = int(match.group(1)) if match else None
        return self.port is not None

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def probe(self, **params):
        query = "&".join(f"{key}={value}" for key, value in params.items())
        return fetch(f"http://{self.address}/probe?{query}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        died = self.process.poll()
        if died is None:
            self.process.terminate()
            self.process.wait(10)
        text = self.stderr()
        self.err.close()
        if died is not None and exc and exc[0] is not None:
            raise harness.Failure(f"the exporter had exited ({died}) before the test ended: {text[-800:]}") from exc[1]


@test
def textfile_is_written_whole_and_says_why_a_test_failed():
    with harness.Server() as server, tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "testio.prom")
        harness.client(server, "2", "-t", "1", "--prometheus", path)
        text = lint(open(path).read(), "a TCP test's textfile")
        check(sample(text, "testio_up") == 1, text)
        goodput = re.search(r'^testio_goodput_bytes_per_second\{direction="forward",limit="([a-z_]+)"\} (\S+)$', text, re.M)
        check(goodput and float(goodput.group(2)) > 0, text)
        check(sample(text, "testio_diagnosis_confidence", f'direction="forward",limit="{goodput.group(1)}"') > 0, text)
        check(sample(text, "testio_test_connections") == 2, text)
        for args, name in ((["-u", "-t", "1", "-b", "10M"], "testio_udp_loss_ratio"),
                           (["--rr", "--num", "2000"], "testio_rr_latency_seconds_count"),
                           (["--transfers", "20", "--size", "64K"], "testio_transfer_duration_seconds_count"),
                           (["2", "-t", "1", "--bidir"], "testio_fairness_ratio")):
            harness.client(server, *args, "--prometheus", path)
            check(sample(lint(open(path).read(), f"{args}"), name, "" if "count" in name else 'direction="forward"')
                  is not None, f"{args}: no {name}")
        check(os.listdir(directory) == ["testio.prom"], f"left behind: {os.listdir(directory)}")
        closed = free_port()
        testio("-c", "127.0.0.1", "-p", str(closed), "-t", "1", "--prometheus", path, code=1)
        text = lint(open(path).read(), "a failed test's textfile")
        check(re.search(r'^testio_up\{reason="cannot connect[^"]*"\} 0$', text, re.M), text)


def counted_during(port, argv, before):
    """Runs a client (`argv`) and scrapes /metrics while its test runs: the received bytes the
    server counted beyond `before` during the test, and the client's stdout."""
    running = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               text=True)
    seen_during = None
    deadline = time.monotonic() + 30
    while running.poll() is None and time.monotonic() < deadline and seen_during is None:
        text = fetch(f"http://127.0.0.1:{port}/metrics")[1]
        if sample(text, "testio_tests_running") == 1 and sample(text, "testio_received_bytes_total") > before:
            seen_during = sample(text, "testio_received_bytes_total")
        time.sleep(0.2)
    out, err = running.communicate(timeout=60)
    check(running.returncode == 0 and seen_during is not None, f"{argv[0]}: no bytes counted during the test: {err}")
    return seen_during, out


@test
def each_running_test_has_its_own_series_by_number_and_peer():
    port = free_port()
    with harness.Server("--metrics", f"127.0.0.1:{port}", "--max-tests", "4") as server:
        running = [harness.start_client(server, "-B", f"127.0.0.{k}", "1", "-t", "4", *harness.HOLDS_A_SLOT)
                   for k in (2, 3)]
        try:
            series = {}

            def both_seen():
                _, text = fetch(f"http://127.0.0.1:{port}/metrics")
                series.update(re.findall(r'^testio_test_interval_bytes_per_second\{peer="([^"]+)",test="(\d+)"\} \S+$',
                                         text, re.M))
                return len(series) >= 2
            harness.wait_until(both_seen, 20, "both running tests' series")
            lint(fetch(f"http://127.0.0.1:{port}/metrics")[1], "/metrics with tests running")
            check(set(series) == {"127.0.0.2", "127.0.0.3"} and len(set(series.values())) == 2, series)
        finally:
            for process in running:
                process.communicate(timeout=60)
        server.wait_for_reports(2)
        _, text = fetch(f"http://127.0.0.1:{port}/metrics")
        check("testio_test_interval_bytes_per_second{" not in text, f"a finished test's series stayed:\n{text}")
        check(sample(text, "testio_tests_waiting") == 0, text)


@test
def server_metrics_count_tests_refusals_and_bytes():
    port = free_port()
    with harness.Server("--metrics", f"127.0.0.1:{port}", "--max-buffer", "4M") as server:
        done = harness.client(server, "2", "-t", "1", "-l", "128K", "--json", *harness.RATE_NOT_CHECKED)
        received = json.loads(done.stdout)["end"]["sum_received"]["bytes"]
        harness.client(server, "-t", "1", "-l", "8M", code=1)  # beyond --max-buffer: refused as invalid
        server.wait_for_reports()
        status, text = fetch(f"http://127.0.0.1:{port}/metrics")
        check(status == 200, f"{status} {text}")
        lint(text, "the server's /metrics")
        check(sample(text, "testio_tests_served_total", 'protocol="testio"') == 1, text)
        check(sample(text, "testio_tests_failed_total", 'protocol="testio"') == 0, text)
        check(sample(text, "testio_tests_refused_total", 'reason="invalid"') == 1, text)
        check(sample(text, "testio_received_bytes_total") == received, f"counted {received}:\n{text}")
        check(sample(text, "testio_connections_accepted_total") >= 4, text)
        check(sample(text, "testio_last_test_goodput_bytes_per_second", 'peer="127.0.0.1",direction="forward"') > 0,
              text)
        # While a test runs, the counter already holds what its workers have counted, whichever
        # client runs it: testio's, then Debian's iperf3.
        paced = harness.client_argv(server, "2", "-t", "4", "--json", *harness.RATE_NOT_CHECKED)
        seen_during, out = counted_during(port, paced, received)
        server.wait_for_reports(2)
        received += json.loads(out)["end"]["sum_received"]["bytes"]
        text = fetch(f"http://127.0.0.1:{port}/metrics")[1]
        check(seen_during < sample(text, "testio_received_bytes_total") == received, f"{seen_during}, {received}: {text}")
        iperf3 = ["iperf3", "-c", "127.0.0.1", "-p", server.port, "-t", "4", "-J", *harness.IPERF3_RATE_NOT_CHECKED]
        seen_during, out = counted_during(port, iperf3, received)
        server.wait_for_reports(3)
        received += json.loads(out)["end"]["sum_received"]["bytes"]
        status, text = fetch(f"http://127.0.0.1:{port}/metrics")
        check(sample(text, "testio_tests_served_total", 'protocol="iperf3"') == 1, text)
        check(seen_during < sample(text, "testio_received_bytes_total") == received, f"{seen_during}, {received}: {text}")
        check(fetch(f"http://127.0.0.1:{port}/other")[0] == 404, "/other")
        check(fetch(f"http://127.0.0.1:{port}/metrics", "POST", b"x")[0] == 405, "POST")
        answer = subprocess.run(["curl", "-s", "--http0.9", "-X", "GET /../ x", f"http://127.0.0.1:{port}/"],
                                capture_output=True, text=True, timeout=30).stdout
        check("bad request" in answer, answer)
        harness.client(server, "-t", "1", *harness.RATE_NOT_CHECKED)  # still serving


@test
def a_raw_sinks_metrics_count_each_connection_live_and_once_closed():
    # The raw sink is a peer of the one server: its /metrics counts what each connection has read
    # while it is open, and the whole once it has closed.
    port = free_port()
    with harness.Server("--raw", "--hash", "none", "--metrics", f"127.0.0.1:{port}") as server:
        first = socket.create_connection(("127.0.0.1", int(server.port)), timeout=30)
        first.sendall(b"x" * 300_000)
        harness.wait_until(lambda: sample(fetch(f"http://127.0.0.1:{port}/metrics")[1],
                                          "testio_received_bytes_total") == 300_000, 30, "the open connection's bytes")
        first.sendall(b"y" * 1000)
        first.shutdown(socket.SHUT_WR)
        first.recv(1)
        first.close()
        with socket.create_connection(("127.0.0.1", int(server.port)), timeout=30) as second:
            second.sendall(b"z" * 5000)
            second.shutdown(socket.SHUT_WR)
            second.recv(1)
        harness.wait_until(lambda: sample(fetch(f"http://127.0.0.1:{port}/metrics")[1], "testio_tests_served_total",
                                          'protocol="raw"') == 2, 30, "two raw connections served")
        text = fetch(f"http://127.0.0.1:{port}/metrics")[1]
        lint(text, "a raw sink's /metrics")
    check(sample(text, "testio_received_bytes_total") == 306_000, text)
    check(sample(text, "testio_tests_failed_total", 'protocol="raw"') == 0, text)


@test
def exporter_probes_refuses_beyond_its_caps_and_says_why():
    with harness.Server() as server, Exporter("--max-probe-time", "5") as exporter:
        status, text = exporter.probe(target=f"127.0.0.1:{server.port}", connections=2, time=1)
        check(status == 200 and sample(lint(text, "a probe"), "testio_up") == 1, f"{status} {text}")
        check(sample(text, "testio_probe_duration_seconds") > 0, text)
        status, text = exporter.probe(target=f"127.0.0.1:{free_port()}", time=1)
        check(status == 200 and re.search(r'^testio_up\{reason="[^"]+"\} 0$', lint(text, "a failed probe"), re.M),
              f"{status} {text}")
        for query, words in (({"time": "1"}, "needs target"), ({"target": "-s"}, "is not HOST"),
                             ({"target": "h", "time": "9"}, "--max-probe-time"), ({"target": "h", "x": "1"}, "not a probe"),
                             ({"target": f"127.0.0.1:{server.port}", "reverse": "1", "bidir": "1"}, "exclude")):
            status, text = exporter.probe(**query)
            check(status == 400 and words in text, f"{query}: {status} {text}")
        answers = []
        probes = [threading.Thread(target=lambda: answers.append(exporter.probe(target=f"127.0.0.1:{server.port}",
                                                                                time=2)))
                  for _ in range(2)]
        for probe in probes:
            probe.start()
        for probe in probes:
            probe.join(60)
        refused = [text for status, text in answers if "already running" in text]
        check(len(answers) == 2 and len(refused) == 1, f"{answers}")
        lint(refused[0], "a refused probe")
        status, text = fetch(f"http://{exporter.address}/metrics")
        lint(text, "the exporter's /metrics")
        check(sample(text, "testio_exporter_probes_total", 'result="succeeded"') == 2, text)
        check(sample(text, "testio_exporter_probes_total", 'result="refused"') == 1, text)
        check(sample(text, "testio_exporter_probes_total", 'result="invalid"') == 5, text)


def write_textfiles(server, directory):
    """What node_exporter's textfile directory would hold: a transfers test and an HTTP download."""
    with open(os.path.join(directory, "payload.bin"), "wb") as payload:
        payload.write(os.urandom(100_000))
    harness.client(server, "--transfers", "20", "--size", "64K", "--prometheus", os.path.join(directory, "transfers.prom"))
    with PythonHttpServer(directory) as web:
        testio("-c", web.url("payload.bin"), "2", "--transfers", "6", "--prometheus", os.path.join(directory, "http.prom"))


@test
def prometheus_scrapes_every_endpoint_and_every_dashboard_query_has_data():
    metrics_port = free_port()
    with harness.Server("--metrics", f"127.0.0.1:{metrics_port}", "--max-tests", "4", "--max-buffer", "4M") as server, \
            Exporter("--max-probes", "4") as exporter, tempfile.TemporaryDirectory() as directory:
        write_textfiles(server, directory)
        harness.client(server, "-t", "1", "-l", "8M", code=1)  # a refusal, for the refused panel
        with PythonHttpServer(directory) as files:
            target = f"127.0.0.1:{server.port}"
            probe = {"scrape_interval": "5s", "scrape_timeout": "4s", "exporter": exporter.address,
                     "probe_targets": [target]}
            jobs = [{"name": "server", "targets": [f"127.0.0.1:{metrics_port}"]},
                    {"name": "exporter", "targets": [exporter.address]},
                    {**probe, "name": "probe_tcp", "params": {"connections": 2, "time": 1}},
                    {**probe, "name": "probe_udp", "params": {"udp": 1, "time": 1, "bitrate": "10M"}},
                    {**probe, "name": "probe_rr", "params": {"rr": 1, "time": 1}},
                    {"name": "textfile_transfers", "targets": [f"127.0.0.1:{files.port}"],
                     "metrics_path": "/transfers.prom"},
                    {"name": "textfile_http", "targets": [f"127.0.0.1:{files.port}"], "metrics_path": "/http.prom"}]
            with Prometheus(jobs) as prometheus:
                prometheus.wait_for('testio_up{job="probe_tcp"} == 1', limit=60)
                prometheus.wait_for('testio_udp_datagrams{job="probe_udp"} > 0', limit=60)
                prometheus.wait_for('testio_rr_latency_seconds_count{job="probe_rr"} > 0', limit=60)
                prometheus.wait_for('testio_tests_refused_total{reason="invalid"} >= 1', limit=30)
                prometheus.wait_for('testio_http_responses{code="200"} == 6', limit=30)
                prometheus.wait_for('rate(testio_received_bytes_total[1m]) > 0', limit=60)
                down = {url: health for url, health in prometheus.target_health().items() if health[0] != "up"}
                check(not down, f"targets not up: {down}")
                for title, expr in dashboard_queries(DASHBOARD):
                    check(prometheus.wait_for(expr, limit=30), f"{title}: {expr} returned nothing")


@test
def bad_metrics_options_are_one_sentence():
    for args, words in ((["-c", "127.0.0.1", "--metrics", "127.0.0.1:9"], "server option"),
                        (["-s", "--metrics", "nowhere"], "ADDRESS:PORT"),
                        (["-s", "--prometheus", "/tmp/x.prom"], "client option"),
                        (["-c", "127.0.0.1", "--prometheus", "/nonexistent/x.prom"], "is not a directory"),
                        (["-c", "127.0.0.1", "--prometheus", "/tmp/"], "names a directory"),
                        (["exporter", "--listen", "9201"], "ADDRESS:PORT"),
                        (["exporter", "--max-probes", "0"], "--max-probes"),
                        (["exporter", "stray"], "takes no argument")):
        done = testio(*args, code=2)
        check(words in done.stderr and done.stderr.count("\n") == 1, f"{args}: {done.stderr}")
    with Exporter() as exporter:
        done = testio("exporter", "--listen", exporter.address, code=1, limit=30)
        check("cannot listen" in done.stderr, done.stderr)


@test
def a_probe_dies_with_its_exporter_killed_outright():
    before = set(glob.glob("/tmp/testio-probe-*"))
    with harness.Server() as server, Exporter("--max-probe-time", "30") as exporter:
        asked, probes = probe_under_way(exporter, server)
        os.kill(exporter.process.pid, signal.SIGKILL)
        exporter.process.wait(10)
        try:
            harness.wait_until(lambda: not any(harness.alive(pid) for pid in probes), 2,
                               "the probe to die with the exporter")
        except harness.Failure:
            for pid in probes:
                os.kill(pid, signal.SIGKILL)
            left = sorted(set(glob.glob("/tmp/testio-probe-*")) - before)
            raise harness.Failure(f"probe {probes} outlived its exporter; scratch left: {left}")
        finally:
            # A SIGKILLed exporter cannot remove its probe's scratch directory: this test's to remove.
            for left in set(glob.glob("/tmp/testio-probe-*")) - before:
                shutil.rmtree(left, ignore_errors=True)
        asked.join(15)


@test
def a_stopped_exporter_ends_its_probe_and_removes_its_scratch():
    before = set(glob.glob("/tmp/testio-probe-*"))
    with harness.Server() as server, Exporter("--max-probe-time", "30") as exporter:
        asked, probes = probe_under_way(exporter, server)
        exporter.process.terminate()
        exporter.process.wait(10)
        left = sorted(set(glob.glob("/tmp/testio-probe-*")) - before)
        for directory in left:
            shutil.rmtree(directory, ignore_errors=True)
        check(not any(harness.alive(pid) for pid in probes) and not left, f"probes {probes} alive or scratch left: {left}")
        asked.join(15)


def probe_under_way(exporter, server):
    """A 10 s probe asked for on a thread, once its child runs: (the thread, the child's pids)."""
    asked = threading.Thread(target=lambda: fetch_quietly(exporter, server), daemon=True)
    asked.start()
    harness.wait_until(lambda: harness.children_of(exporter.process.pid), 20, "the probe's child")
    return asked, harness.children_of(exporter.process.pid)


def fetch_quietly(exporter, server):
    try:
        exporter.probe(target=f"127.0.0.1:{server.port}", time=10)
    except OSError:
        pass  # the exporter was killed under it


TESTS = [a_probe_dies_with_its_exporter_killed_outright, a_stopped_exporter_ends_its_probe_and_removes_its_scratch,
         textfile_is_written_whole_and_says_why_a_test_failed, server_metrics_count_tests_refusals_and_bytes,
         each_running_test_has_its_own_series_by_number_and_peer,
         a_raw_sinks_metrics_count_each_connection_live_and_once_closed, exporter_probes_refuses_beyond_its_caps_and_says_why,
         prometheus_scrapes_every_endpoint_and_every_dashboard_query_has_data, bad_metrics_options_are_one_sentence]

if __name__ == "__main__":
    harness.main(TESTS)

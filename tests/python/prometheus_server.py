"""Debian's Prometheus (/usr/bin/prometheus, 2.42) for the metrics tests: a generated config, a
temporary TSDB and a free loopback port, started on entry and stopped, with its files, on exit;
its query and targets APIs; `promtool check metrics` over an exposition; and the PromQL of a
Grafana dashboard, ready to run. Python's standard library only; traffic to 127.0.0.1 only.

The config is written as JSON, which Prometheus's YAML reader takes as it is (JSON is YAML flow
style), so no YAML writer is needed. A job is a dict:
  {"name": ..., "targets": ["127.0.0.1:9101"], "metrics_path": "/metrics", "params": {...},
   "scrape_interval": "1s", "scrape_timeout": "1s"}
or, for a multi-target exporter (blackbox style: one scrape of the exporter per target),
  {"name": ..., "probe_targets": ["127.0.0.1:5201"], "exporter": "127.0.0.1:9469",
   "params": {"connections": 2, "time": 1}}
whose metrics_path defaults to /probe: each probe target becomes the `target` parameter and the
`instance` label, and the exporter's address is the one scraped. Prometheus refuses a config
whose scrape_timeout exceeds its scrape_interval (it exits at once; the error's log tail says
why), and a scrape_timeout shorter than the probe's test marks the target down ("context
deadline exceeded"): a probe of S seconds needs both above S, the timeout given (unset, it is
the global one: the smaller of 10 s and the global interval, so 1 s by default here). The exporter is told the timeout in the
request's X-Prometheus-Scrape-Timeout-Seconds header.

Timing on this machine: /-/ready answers 200 about 0.1 s after the start, but the first scrape
comes about 5-6 s later whatever the scrape_interval (the discovery manager hands target sets to
the scrape manager at most every 5 s, then each target waits for its offset in the interval);
rate() has its two samples one interval after that. wait_for() covers it: give it limit >= 15."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def probe_relabelling(exporter):
    """The relabelling of a probe job: __address__ -> __param_target -> instance, and the
    exporter's address in __address__."""
    return [{"source_labels": ["__address__"], "target_label": "__param_target"},
            {"source_labels": ["__param_target"], "target_label": "instance"},
            {"target_label": "__address__", "replacement": exporter}]


def scrape_config(job, scrape_interval):
    """One scrape_configs entry for a job dict (see the module docstring)."""
    probe = "probe_targets" in job
    config = {"job_name": job["name"],
              "metrics_path": job.get("metrics_path", "/probe" if probe else "/metrics"),
              "scrape_interval": job.get("scrape_interval", scrape_interval),
              "static_configs": [{"targets": list(job["probe_targets"] if probe else job["targets"])}]}
    if "scrape_timeout" in job:
        config["scrape_timeout"] = job["scrape_timeout"]
    if job.get("params"):
        config["params"] = {key: [str(value)] for key, value in job["params"].items()}
    if probe:
        config["relabel_configs"] = probe_relabelling(job["exporter"])
    return config


def prometheus_config(jobs, scrape_interval):
    """The whole prometheus.yml, as JSON text."""
    config = {"global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
              "scrape_configs": [scrape_config(job, scrape_interval) for job in jobs]}
    return json.dumps(config, indent=2) + "\n"


def get_json(url, timeout=10):
    """GET url and decode its JSON; an HTTP error's JSON body (the API's error document) is
    returned like a success's, so the caller sees the API's own error text."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return json.loads(body)
        except ValueError:
            raise RuntimeError(f"GET {url}: HTTP {error.code}: {body[:500]!r}") from None


class Prometheus:
    """Prometheus on 127.0.0.1:port scraping `jobs` every `scrape_interval`."""

    def __init__(self, jobs, scrape_interval="1s"):
        self.jobs, self.scrape_interval = jobs, scrape_interval
        self.dir = self.process = self.port = None

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="testio-prometheus-")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _start(self):
        self.config_path = os.path.join(self.dir, "prometheus.yml")
        with open(self.config_path, "w") as config:
            config.write(prometheus_config(self.jobs, self.scrape_interval))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.dir, "prometheus.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [PROMETHEUS, f"--config.file={self.config_path}", f"--storage.tsdb.path={self.dir}/data",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self._wait_ready(30)

    def _wait_ready(self, limit):
        """Waits for /-/ready's 200 (503 until the TSDB is open and the config loaded)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"prometheus not ready after {limit} s:\n{self.log_tail()}")

    def log_tail(self, size=3000):
        try:
            with open(self.log_path, errors="replace") as log:
                return log.read()[-size:]
        except (OSError, AttributeError, TypeError):
            return ""

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def api(self, path, **params):
        """GET /api/v1/PATH; returns its `data`, or raises with the API's error text."""
        url = f"{self.url}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        document = get_json(url)
        if document.get("status") != "success":
            raise RuntimeError(f"{path} {params}: {document.get('errorType')}: {document.get('error')}")
        return document["data"]

    def query(self, expr):
        """An instant query now: a list of {"metric": {labels}, "value": [time, "text"]}; a scalar
        or string result comes back as one such dict with no labels."""
        data = self.api("query", query=expr)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]

    def wait_for(self, expr, limit=30):
        """Polls `expr` until its result is not empty, and returns it."""
        deadline = time.monotonic() + limit
        while True:
            result = self.query(expr)
            if result:
                return result
            if time.monotonic() > deadline:
                raise RuntimeError(f"no result for {expr!r} after {limit} s; targets "
                                   f"{self.target_health()}\n{self.log_tail()}")
            time.sleep(0.2)

    def targets(self):
        """The active targets (/api/v1/targets' activeTargets): labels, health, lastError..."""
        return self.api("targets")["activeTargets"]

    def target_health(self):
        """{scrape URL: (health, lastError)} of every active target."""
        return {target["scrapeUrl"]: (target["health"], target["lastError"]) for target in self.targets()}


def promtool_check(text):
    """`promtool check metrics` over the exposition `text`: (ok, output). Debian's 2.42 prints
    nothing to stdout; it reports on stderr and exits 0 when clean (empty input included), 3 for
    lint problems, one line "NAME PROBLEM" each (no help text, a counter without "_total", a
    non-counter with "_total", a non-base unit such as "milliseconds", camelCase, ...), and 1
    with "error while linting: text format parsing error in line N: ..." when the text does not
    parse (a second HELP or TYPE block for one name included, so expositions cannot simply be
    concatenated). Not flagged: the same series twice. `output` is stdout and stderr together."""
    result = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True,
                            timeout=30)
    return result.returncode == 0, (result.stdout + result.stderr).strip()


# the longer names first: "$__range_s" is not "$__range" followed by "_s"
GRAFANA_VARIABLES = [("$__rate_interval", "1m"), ("${__rate_interval}", "1m"), ("$__interval_ms", "60000"),
                     ("$__interval", "1m"), ("${__interval}", "1m"), ("$__range_ms", "300000"),
                     ("$__range_s", "300"), ("$__range", "5m"), ("${__range}", "5m")]


def panel_queries(panels):
    """(title, expr) of every target of `panels` and of the panels nested in them (rows)."""
    for panel in panels:
        for target in panel.get("targets", []):
            if target.get("expr"):
                yield panel.get("title", ""), target["expr"]
        yield from panel_queries(panel.get("panels", []))


def dashboard_queries(path):
    """Every PromQL expression of the Grafana dashboard at `path`, as (panel title, expr), with
    Grafana's interval variables replaced by literals Prometheus takes."""
    with open(path) as dashboard_file:
        dashboard = json.load(dashboard_file)
    queries = []
    for title, expr in panel_queries(dashboard.get("panels", [])):
        for variable, literal in GRAFANA_VARIABLES:
            expr = expr.replace(variable, literal)
        queries.append((title, expr))
    return queries

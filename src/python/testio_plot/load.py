"""Reading testio's JSON, whatever wrote it: a client's or a server's --json (a server writes one
document per test, back to back), a --json-stream file (one event per line, possibly cut short),
or --mesh --json. Each file becomes a Report: its tests, each as the document --json would have
printed, or the mesh's matrix. Anything else is a BadInput with one sentence."""
import json
import os
import re

# The report versions this program reads: testio 0.x.
KNOWN_VERSION = re.compile(r"^testio 0\.\d+(\.\d+)?")


class BadInput(Exception):
    """A file this program cannot draw; the text is the one sentence the user sees."""


class Report:
    """One input file: `tests` (documents shaped as --json's) or `mesh` (the mesh's object);
    `notes` are the lines to print about it (a stream cut short)."""

    def __init__(self, path, label):
        self.path = path
        self.label = label
        self.tests = []
        self.mesh = None
        self.notes = []


def read_report(path, label=None):
    name = label or os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except UnicodeDecodeError:
        raise BadInput(f"{path} is not testio's JSON: it is not text") from None
    except OSError as error:
        raise BadInput(f"cannot read {path}: {error.strerror}") from None
    report = Report(path, name)
    values, cut_short = _json_values(path, text)
    if not values:
        raise BadInput(f"{path} is not testio's JSON: it holds no JSON document")
    if all(isinstance(value, dict) and "event" in value for value in values):
        _read_events(report, values, cut_short)
    elif cut_short:
        raise BadInput(f"{path} is not testio's JSON: it ends in the middle of a document")
    else:
        for value in values:
            _read_document(report, value)
    if not report.tests and report.mesh is None:
        raise BadInput(f"{path} holds no test to draw")
    return report


def _json_values(path, text):
    """Every JSON value in `text`, one after another (a document, several, or one per line), and
    whether the text ends in the middle of one."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return values, False
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as error:
            if not values:
                raise BadInput(f"{path} is not testio's JSON: {error.msg} at line {error.lineno}") from None
            return values, True  # what follows the last whole value never ended: a run cut short
        values.append(value)


def check_version(path, start):
    version = start.get("version") if isinstance(start, dict) else None
    if not isinstance(version, str):
        raise BadInput(f"{path} is not testio's JSON: its start has no version")
    if not KNOWN_VERSION.match(version):
        raise BadInput(f"{path} is not a report this testio plot knows: its version is \"{version}\"")


def _read_document(report, document):
    if not isinstance(document, dict):
        raise BadInput(f"{report.path} is not testio's JSON: it holds a {type(document).__name__}, not a report")
    mesh = document.get("mesh")
    if isinstance(mesh, dict) and isinstance(mesh.get("pairs"), list) and isinstance(mesh.get("hosts"), list):
        for pair in mesh["pairs"]:
            if isinstance(pair.get("report"), dict) and pair["report"].get("start"):
                check_version(report.path, pair["report"]["start"])
        report.mesh = mesh
        return
    if not isinstance(document.get("start"), dict) or "intervals" not in document:
        raise BadInput(f"{report.path} is not testio's JSON: it has no start and intervals")
    if isinstance(document.get("error"), str) and not document["start"] and not document["intervals"]:
        raise BadInput(f"{report.path} is the report of a test that failed before it began: {document['error']}")
    check_version(report.path, document["start"])
    report.tests.append(document)


def _read_events(report, events, cut_short):
    """A --json-stream: start, interval, with_interval and end events, a new start beginning the
    next test (a server's stream). A stream without its end was cut short: drawn up to where it
    stops, with a note."""
    document = None
    for event in events:
        kind, data = event.get("event"), event.get("data")
        if kind == "start":
            check_version(report.path, data)
            document = {"start": data, "intervals": [], "end": {}}
            report.tests.append(document)
        elif document is None:
            continue
        elif kind == "interval":
            document["intervals"].append(data)
        elif kind == "with_interval" and isinstance(data, dict):
            document.setdefault("_with_intervals", {}).setdefault(data.get("workload"), []).append(data.get("interval"))
        elif kind == "end":
            document["end"] = data if isinstance(data, dict) else {}
            document["_ended"] = True
        elif kind == "error":
            document["error"] = data
    if not report.tests:
        raise BadInput(f"{report.path} is not testio's JSON: its events have no start")
    last = report.tests[-1]
    if cut_short or not last.get("_ended") and "error" not in last:
        seconds = max((i["sum"]["end"] for i in last["intervals"] if "sum" in i), default=0)
        report.notes.append(f"{report.path}: the stream stops after {len(last['intervals'])} intervals "
                            f"({seconds:g} s), before the test's end: drawn up to there")

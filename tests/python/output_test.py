#!/usr/bin/python3
"""JSON and reporting tests against the real binary on 127.0.0.1, read the way a dashboard would.

Usage: output_test.py TESTIO_BINARY SCHEMA_FILE. Prints TAP. Needs python3-jsonschema and jq.
Asserts byte counts, shapes and messages only: never a time or a rate threshold.
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

import harness
from harness import Server, check, client

SCHEMA_PATH = sys.argv[2]
with open(SCHEMA_PATH) as schema_file:
    VALIDATOR = jsonschema.Draft7Validator(json.load(schema_file))

results = []


def valid(document, what):
    errors = sorted(VALIDATOR.iter_errors(document), key=lambda e: list(e.path))
    check(not errors, f"{what} does not match the schema: " +
          "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:3]))


def kept_interval_bytes(intervals):
    return sum(i["sum"]["bytes"] for i in intervals if not i["sum"]["omitted"])


def test(function):
    results.append(function)
    return function


@test
def json_document_validates_and_feeds_a_dashboard():
    with Server() as server:
        document = json.loads(client(server, "4", "-t", "2", "--json").stdout)
    valid(document, "--json output")
    end = document["end"]
    check(end["sum_received"]["bits_per_second"] > 0, "sum_received.bits_per_second is not > 0")
    check(end["sum_sent"]["bytes"] == end["sum_received"]["bytes"], "sent and received bytes differ")
    check(end["testio"]["byte_counts_match"] is True, "byte_counts_match is not true")
    for stream in end["streams"]:
        check(stream["sender"]["bytes"] == stream["receiver"]["bytes"], "a stream's counts differ")
    check(len(document["intervals"]) >= 1, "no intervals")


@test
def interval_sums_equal_the_totals():
    with Server() as server:
        document = json.loads(client(server, "3", "-t", "2", "-i", "0.5", "--json", *harness.RATE_NOT_CHECKED).stdout)
    valid(document, "--json output")
    check(kept_interval_bytes(document["intervals"]) == document["end"]["sum_sent"]["bytes"],
          "interval bytes do not add up to sum_sent.bytes")
    remote = document["end"]["testio"]["remote_intervals"]
    check(kept_interval_bytes(remote) == document["end"]["sum_received"]["bytes"],
          "the server's interval bytes do not add up to sum_received.bytes")
    for interval in document["intervals"]:
        check(sum(s["bytes"] for s in interval["streams"]) == interval["sum"]["bytes"],
              "an interval's streams do not add up to its sum")


@test
def omitted_seconds_are_marked_and_left_out_of_the_summary():
    with Server() as server:
        document = json.loads(client(server, "2", "-t", "1", "-O", "1", "-i", "0.5", "--json",
                                     *harness.RATE_NOT_CHECKED).stdout)
    valid(document, "--json output with -O")
    flags = [i["sum"]["omitted"] for i in document["intervals"]]
    check(flags[:2] == [True, True] and not any(flags[2:]) and len(flags) >= 3,
          f"omitted flags {flags}: want the first second omitted, the rest not")
    all_bytes = sum(i["sum"]["bytes"] for i in document["intervals"])
    kept = kept_interval_bytes(document["intervals"])
    check(kept == document["end"]["sum_sent"]["bytes"], "sum_sent.bytes includes omitted bytes")
    check(all_bytes > kept, "nothing was omitted")
    check(document["start"]["test_start"]["omit"] == 1, "test_start.omit is not 1")


@test
def remote_figures_are_in_the_client_report():
    with Server() as server:
        document = json.loads(client(server, "2", "-n", "200M", "--json").stdout)
    valid(document, "--json output")
    end = document["end"]
    check(end["sum_received"]["bytes"] == 200 * 1024 * 1024, "receiver bytes are not the -n count")
    check(end["cpu_utilization_percent"]["remote_total"] > 0, "no remote CPU figure")
    check(end["testio"]["receiver"]["cpu"]["cpu_seconds_per_gb"] > 0, "no receiver CPU per GB")
    check(len(end["testio"]["remote_intervals"]) >= 1, "no remote intervals")
    check(end["testio"]["receiver"]["calls"] > 0, "no receive call count")
    # Each side's flows: the interface they leave by and the CPU their packets were processed on.
    # SO_INCOMING_CPU names a CPU of this host (both ends are here): one that is online. An unknown
    # CPU (-1 in src/) leaves the key out, so a stream without it fails here as well.
    online = online_cpus()
    for stream in end["streams"]:
        for side in ("sender", "receiver"):
            check(stream[side]["testio"]["path"] == {"device": "lo", "how": "route"}, f"{side} path {stream[side]}")
            check(stream[side]["testio"]["incoming_cpu"] >= 0, f"{side} incoming CPU {stream[side]}")
            check(stream[side]["testio"]["incoming_cpu"] in online,
                  f"{side} incoming CPU {stream[side]['testio']['incoming_cpu']} is not an online CPU {sorted(online)}")
    check(end["testio"]["sender"]["paths"] == {"flows": {"lo": 2}, "unknown": 0, "uneven": False},
          f"paths {end['testio']['sender'].get('paths')}")
    check(sum(end["testio"]["receiver"]["incoming_cpus"].values()) == 2, "incoming_cpus do not cover the flows")
    # The receiver's count of flows per CPU is the streams' own CPUs, counted.
    per_stream = {}
    for stream in end["streams"]:
        cpu = str(stream["receiver"]["testio"]["incoming_cpu"])
        per_stream[cpu] = per_stream.get(cpu, 0) + 1
    check(end["testio"]["receiver"]["incoming_cpus"] == per_stream,
          f"incoming_cpus {end['testio']['receiver']['incoming_cpus']}, the streams' receivers say {per_stream}")


def online_cpus():
    """The online CPUs' numbers, from /sys/devices/system/cpu/online ("0-3,6")."""
    with open("/sys/devices/system/cpu/online") as listing:
        ranges = listing.read().strip().split(",")
    cpus = set()
    for part in ranges:
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    check(cpus and len(cpus) <= os.cpu_count(), f"online CPUs {sorted(cpus)} against os.cpu_count() {os.cpu_count()}")
    return cpus


@test
def json_stream_lines_validate_in_order():
    with Server() as server:
        lines = client(server, "2", "-t", "2", "-i", "0.5", "--json-stream", *harness.RATE_NOT_CHECKED).stdout.splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:
        valid(event, f"--json-stream line {event.get('event')}")
    kinds = [e["event"] for e in events]
    check(kinds[0] == "start" and kinds[-1] == "end" and set(kinds[1:-1]) == {"interval"},
          f"event order {kinds}")
    interval_bytes = sum(e["data"]["sum"]["bytes"] for e in events if e["event"] == "interval")
    check(interval_bytes == events[-1]["data"]["sum_sent"]["bytes"], "stream intervals do not add up")


@test
def server_json_validates():
    with Server("--json", "-1") as server:
        client(server, "2", "-t", "1")
        server.process.wait(30)
        document = json.loads(server.stdout())
    valid(document, "server --json output")
    check(document["start"]["testio"]["role"] == "server", "the server's document says another role")
    check(document["end"]["sum_received"]["bytes"] == document["end"]["sum_sent"]["bytes"],
          "the server's sent and received bytes differ")
    with Server("--json-stream", "-1") as server:
        client(server, "2", "-t", "1", "-i", "0.5")
        server.process.wait(30)
        events = [json.loads(line) for line in server.stdout().splitlines()]
    for event in events:
        valid(event, f"server --json-stream line {event.get('event')}")
    check([e["event"] for e in events][::len(events) - 1] == ["start", "end"], "server event order")


@test
def an_error_is_json_too():
    with Server() as server:
        port = server.port
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", port, "-t", "1", "--json"], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    check(done.returncode == 1, f"exit {done.returncode} for a refused port")
    document = json.loads(done.stdout)
    valid(document, "--json error output")
    check("cannot connect" in document["error"], f"error text: {document['error']}")
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", port, "-t", "1", "--json-stream"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    line = json.loads(done.stdout.splitlines()[-1])
    valid(line, "--json-stream error line")
    check(line["event"] == "error", "the last line is not an error event")


@test
def jq_reads_it_as_a_dashboard_would():
    with Server() as server:
        out = client(server, "2", "-t", "1", "--json").stdout
    done = subprocess.run(["jq", "-e", ".end.sum_received.bits_per_second > 0 and "
                           "(.end.streams | length) == 2"], input=out, capture_output=True, text=True)
    check(done.returncode == 0 and done.stdout.strip() == "true", f"jq said {done.stdout} {done.stderr}")


@test
def no_intervals_with_i_zero():
    with Server() as server:
        document = json.loads(client(server, "1", "-t", "1", "-i", "0", "--json").stdout)
        text = client(server, "1", "-t", "1", "-i", "0").stdout
    valid(document, "--json -i 0")
    check(document["intervals"] == [], "intervals reported with -i 0")
    check(" s " not in text.split("- - -")[0].split("\n", 1)[1], "interval lines printed with -i 0")


@test
def forced_units_and_text_figures():
    with Server() as server:
        text = client(server, "2", "-t", "1", "-f", "m").stdout
    check("Mbit/s" in text and "Gbit/s" not in text, "-f m did not force Mbit/s")
    for needed in ("Jain's fairness index", "CPU-seconds per GB", "cpu local (client)", "cpu remote (server)",
                   "tcp sender: retransmits", "[  SUM] sender", "[  SUM] receiver"):
        check(needed in text, f"the text report lacks {needed!r}")


@test
def logfile_takes_the_report():
    with Server() as server, tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "run.log")
        done = client(server, "1", "-t", "1", "--logfile", path)
        check(done.stdout == "", "stdout is not empty with --logfile")
        with open(path) as log:
            check("[  SUM] receiver" in log.read(), "the log file lacks the report")


@test
def profiles_load_and_the_command_line_wins():
    with Server() as server:
        text = client(server, "--config", os.path.join(os.path.dirname(SCHEMA_PATH), "..", "configs", "quick.json"),
                      "-t", "1", "-P", "2").stdout
    check("2 connections" in text and ", 1 s," in text, f"profile/command line merge: {text.splitlines()[0]}")


@test
def the_start_holds_the_spec_and_a_report_runs_its_test_again():
    with Server() as server, tempfile.TemporaryDirectory() as directory:
        # A forward test's pacing is not in its request (the server does not send), but its report has it.
        first = client(server, "3", "-t", "1", "-l", "256K", "-b", "300M", "--no-lowat", "-i", "0.5", "--json").stdout
        spec = json.loads(first)["start"]["testio"]["spec"]
        check(spec["connections"] == 3 and spec["buffer"] == 262144 and spec["direction"] == "forward" and
              spec["rate_bps"] == 300e6 and spec["rate_lowat"] is False and spec["duration_s"] == 1,
              f"the report's spec: {spec}")
        report = os.path.join(directory, "report.json")
        with open(report, "w") as out:
            out.write(first)
        again = json.loads(client(server, "--config", report, "-t", "2", "--json").stdout)
    valid(again, "--json output of a replayed report")
    replayed = again["start"]["testio"]["spec"]
    check(replayed == {**spec, "duration_s": 2}, f"the replayed spec differs: {replayed} against {spec}")
    check(len(again["end"]["streams"]) == 3, "the replayed test ran a different connection count")


@test
def bad_profiles_name_the_key():
    with tempfile.TemporaryDirectory() as directory:
        cases = [('{"paralel": 4}', "paralel"), ('{"buffer": "2X"}', "--buffer"), ('{"time": [1]}', "time"),
                 ('not json', "not a JSON object")]
        for text, named in cases:
            path = os.path.join(directory, "profile.json")
            with open(path, "w") as profile:
                profile.write(text)
            done = subprocess.run([harness.BINARY, "--config", path, "-c", "127.0.0.1"], capture_output=True, text=True,
                                  timeout=30, stdin=subprocess.DEVNULL)
            check(done.returncode == 2, f"exit {done.returncode} for profile {text}")
            check(named in done.stderr, f"the error for {text} does not name {named}: {done.stderr}")


@test
def iface_stats_and_cores_on_both_sides_validate():
    with Server() as server:
        document = json.loads(client(server, "2", "-t", "1", "-i", "0.5", "--iface-stats", "--json").stdout)
    valid(document, "--iface-stats --json output")
    for interval in document["intervals"] + document["end"]["testio"]["remote_intervals"]:
        names = [nic["name"] for nic in interval["testio"]["nics"]]
        check(names == ["lo"], f"an interval watched {names}, not the route's interface lo")
    for side in ("sender", "receiver"):
        extra = document["end"]["testio"][side]
        check([nic["name"] for nic in extra["nics"]] == ["lo"], f"{side} NIC totals: {extra.get('nics')}")
        check(len(extra["cores"]) == os.cpu_count(), f"{side} cores: {extra.get('cores')}")
    # Loopback carries every byte twice over (tx and rx of one device): at least the payload.
    nic = document["end"]["testio"]["receiver"]["nics"][0]
    check(nic["rx_bytes"] >= document["end"]["sum_received"]["bytes"], f"lo moved less than the test: {nic}")


@test
def iface_stats_names_an_interface_that_is_not_there():
    with Server() as server:
        done = client(server, "--iface-stats=nosuchdev0", "-t", "1", code=2)
    check("no network interface 'nosuchdev0'" in done.stderr, f"stderr: {done.stderr}")


if __name__ == "__main__":
    harness.main(results)

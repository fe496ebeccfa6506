#!/usr/bin/python3
"""Composed tests between testio peers on 127.0.0.1: a --config profile whose spec lists workloads
"with" the first, run side by side in one window. Each workload's counts are exact on both sides
and sit in their own section of one report; a report runs the same test again as a profile; bad
compositions are refused in one sentence; a SIGINT ends every workload with its counts kept; a
peer of another protocol version hears both numbers.
Usage: composed_test.py TESTIO_BINARY SCHEMA. No rate or time is asserted."""
import json
import os
import subprocess
import sys
import tempfile

import harness
from harness import Server, check, client, test

valid = harness.schema_checker(sys.argv[2])


def profile(spec):
    """A --config file holding `spec`; the caller removes it."""
    handle, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(handle, "w") as out:
        json.dump({"spec": spec}, out)
    return path


def run_profile(server, spec, *args, code=0):
    path = profile(spec)
    try:
        return client(server, "--config", path, *args, code=code)
    finally:
        os.remove(path)


LOAD_WITH_PROBE = {"connections": 8, "direction": "reverse", "duration_s": 2,
                   "with": [{"workload": "rr", "connections": 1, "settings": {"msize": 64}}]}


def check_exact(end, connections, what):
    """One workload's end: every stream's sender and receiver counted the same, none moved nothing."""
    streams = end["streams"]
    check(len(streams) == connections, f"{what}: {len(streams)} streams, wanted {connections}")
    for number, stream in enumerate(streams, 1):
        sent, received = stream["sender"]["bytes"], stream["receiver"]["bytes"]
        check(sent == received > 0, f"{what}: stream {number} sent {sent}, received {received}")
    check(end["sum_sent"]["bytes"] == end["sum_received"]["bytes"], f"{what}: the sums differ")
    check(end["testio"]["byte_counts_match"], f"{what}: byte_counts_match is false")


def sections(document):
    """Each workload's (start, end) in order: the top level, then end.testio.with."""
    return [(document["start"], document["end"])] + [
        (part["start"], part["end"]) for part in document["end"]["testio"].get("with", [])]


@test
def reverse_load_and_a_probe_count_exactly_on_both_sides():
    with Server("--json") as server:
        document = valid(json.loads(run_profile(server, LOAD_WITH_PROBE, "--json").stdout))
        server.wait_for_reports()
        theirs = valid(json.loads(server.stdout()))
    for side, doc in (("client", document), ("server", theirs)):
        parts = sections(doc)
        check(len(parts) == 2, f"{side}: {len(parts)} sections, wanted 2")
        (load_start, load_end), (probe_start, probe_end) = parts
        check(load_start["testio"]["workload"] == "stream" and load_start["test_start"]["reverse"] == 1,
              f"{side}: the first section is not the reverse load")
        check(probe_start["testio"]["workload"] == "rr", f"{side}: the second section is not the probe")
        check_exact(load_end, 8, f"{side}'s load")
        check_exact(probe_end, 1, f"{side}'s probe")
        if side == "client":  # the client times the messages
            messages = probe_end["testio"]["rr"]["messages"]
            check(messages > 0 and probe_end["sum_sent"]["bytes"] == 64 * messages,
                  f"{side}: {messages} messages for {probe_end['sum_sent']['bytes']} bytes of 64 each")
        check(len(load_start["connected"]) == 8 and len(probe_start["connected"]) == 1,
              f"{side}: connections per section")
    # Both sides counted the same bytes for each workload.
    for (_, mine), (_, peer) in zip(sections(document), sections(theirs)):
        check(mine["sum_received"]["bytes"] == peer["sum_received"]["bytes"], "client and server counts differ")
    ports = [c["local_port"] for start, _ in sections(document) for c in start["connected"]]
    check(len(set(ports)) == 9, f"nine distinct connections expected: {ports}")
    check(document["start"]["testio"]["spec"]["with"] == [{"workload": "rr", "settings": {"msize": 64}}],
          f"start.testio.spec.with: {document['start']['testio']['spec'].get('with')}")


@test
def the_text_report_shows_each_workload_in_its_section():
    with Server() as server:
        text = run_profile(server, LOAD_WITH_PROBE, "-t", "1").stdout
    check("workload 2 of 2: rr" in text, f"no section for the probe: {text[-600:]}")
    check("rr: " in text and "messages of 64 B" in text, "no request/response line")
    check("cpu below: the whole test" in text, "the CPU lines do not say they cover the whole test")


@test
def json_stream_has_every_workloads_intervals_as_they_close():
    with Server() as server:
        lines = run_profile(server, LOAD_WITH_PROBE, "-t", "2", "-i", "0.5", "--json-stream").stdout.splitlines()
    events = [valid(json.loads(line)) for line in lines]
    kinds = [event["event"] for event in events]
    probes = [event["data"] for event in events if event["event"] == "with_interval"]
    check(kinds[0] == "start" and kinds[-1] == "end", f"events {kinds[:3]} ... {kinds[-2:]}")
    check(kinds.count("interval") >= 3 and len(probes) >= 3, f"{kinds.count('interval')} intervals, {len(probes)} of the probe")
    check(all(probe["workload"] == 2 for probe in probes), "a with_interval names another workload")
    check(all(probe["interval"]["sum"]["bytes"] > 0 for probe in probes), "a probe interval moved nothing")
    # They arrive as they close, among the first workload's, not all at the end.
    check(kinds.index("with_interval") < len(kinds) - 2 - len(probes), f"the probe's intervals came last: {kinds}")


@test
def a_udp_flow_beside_a_bulk_stream_is_numbered_after_it():
    spec = {"connections": 2, "duration_s": 1,
            "with": [{"workload": "udp", "connections": 2, "buffer": 1200, "rate_bps": 2e6}]}
    with Server() as server:
        document = valid(json.loads(run_profile(server, spec, "--json").stdout))
    (_, bulk), (_, udp) = sections(document)
    check_exact(bulk, 2, "the bulk streams")
    received = [s["receiver"]["testio"]["udp"]["datagrams"] for s in udp["streams"]]
    check(len(received) == 2 and all(count > 0 for count in received), f"UDP flows received {received}")
    for stream in udp["streams"]:  # each flow's books close: sent = received + lost
        sent, got = stream["sender"]["testio"]["udp"], stream["receiver"]["testio"]["udp"]
        check(sent["datagrams"] == got["datagrams"] + got["lost"], f"a UDP flow's books: {sent} vs {got}")


@test
def sigint_ends_every_workload_and_keeps_their_counts():
    path = profile({**LOAD_WITH_PROBE, "connections": 2, "duration_s": 60})
    try:
        with Server() as server:
            process = harness.start_client(server, "--config", path, "--json")
            harness.wait_for_data(server.port, 3)
            out, _ = harness.interrupt_client(process)
            document = valid(json.loads(out))
            for what, (_, end) in zip(("load", "probe"), sections(document)):
                check("SIGINT" in end["testio"].get("ended_because", ""), f"{what}: ended_because")
                check(end["sum_sent"]["bytes"] == end["sum_received"]["bytes"] > 0,
                      f"{what}: sent {end['sum_sent']['bytes']}, received {end['sum_received']['bytes']}")
            # The server is ready for the next composed test at once.
            again = valid(json.loads(client(server, "--config", path, "-t", "1", "--json").stdout))
            check_exact(sections(again)[1][1], 1, "the probe after SIGINT")
    finally:
        os.remove(path)


@test
def prometheus_file_labels_each_workloads_section():
    """Two request/response workloads beside a bulk one: each family once, a sample per workload,
    and the file passes promtool's check."""
    spec = {"connections": 2, "duration_s": 1,
            "with": [{"workload": "rr"}, {"workload": "rr", "settings": {"msize": 64}}]}
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "test.prom")
        with Server() as server:
            run_profile(server, spec, "--prometheus", path)
        with open(path) as prom:
            text = prom.read()
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(lint.returncode == 0, f"promtool: {lint.stdout} {lint.stderr}")
    check(text.count("# TYPE testio_rr_latency_seconds summary") == 1, "the rr family is not written once")
    for workload in ("2", "3"):
        check(f'testio_rr_latency_seconds_count{{workload="{workload}"}}' in text, f"no rr latency of workload {workload}")
    check('testio_goodput_bytes_per_second{direction="forward",limit="' in text, "the first workload's goodput is missing")
    check("testio_up 1" in text, "testio_up is not 1")


@test
def a_report_runs_its_composed_test_again():
    with Server() as server:
        first = run_profile(server, LOAD_WITH_PROBE, "-t", "1", "--json").stdout
        handle, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(handle, "w") as out:
            out.write(first)
        try:
            again = valid(json.loads(client(server, "--config", path, "--json").stdout))
        finally:
            os.remove(path)
    check(again["start"]["testio"]["spec"] == json.loads(first)["start"]["testio"]["spec"], "a different test ran")
    check(len(sections(again)) == 2, "the second run lost its probe")


@test
def a_bidir_load_beside_a_probe_on_the_threads_engine_counts_each_way():
    spec = {"connections": 2, "direction": "bidir", "duration_s": 1,
            "with": [{"workload": "rr", "connections": 2, "depth": 4}, {"workload": "stream", "engine": "threads"}]}
    with Server() as server:
        document = valid(json.loads(run_profile(server, spec, "--json").stdout))
    (_, load), (_, probe), (_, threads) = sections(document)
    check_exact(load, 2, "the load, forward")
    check_exact(load["testio"]["bidir_reverse"]["end"], 2, "the load, reverse")
    check_exact(probe, 2, "the probe")
    check_exact(threads, 1, "the threads engine's stream")
    check(document["end"]["testio"]["with"][1]["start"]["testio"]["engine"] == "threads", "workload 3's engine")


@test
def a_server_refuses_a_composition_beyond_its_connection_cap():
    with Server("--max-connections", "8") as server:
        done = run_profile(server, LOAD_WITH_PROBE, code=1)
    check("9 connections together" in done.stderr and "cap of 8" in done.stderr, f"the refusal: {done.stderr!r}")


@test
def bad_compositions_are_refused_in_one_sentence():
    cases = [
        ({**LOAD_WITH_PROBE, "duration_s": 0, "total_bytes": 1000}, (), "only for a time"),
        ({**LOAD_WITH_PROBE, "with": [{"workload": "rr", "direction": "reverse"}]}, (), "workload 2 (rr): "),
        ({**LOAD_WITH_PROBE, "with": [{"workload": "rr", "omit_s": 1}]}, (), "are the test's"),
        ({**LOAD_WITH_PROBE, "with": [{"workload": "nope"}]}, (), "workload 2 (nope)"),
        (LOAD_WITH_PROBE, ("--raw",), "needs a testio server"),
        (LOAD_WITH_PROBE, ("--iperf3",), "needs a testio server"),
    ]
    with Server() as server:
        for spec, options, sentence in cases:
            done = run_profile(server, spec, *options, code=2)
            check(sentence in done.stderr and len(done.stderr.strip().splitlines()) == 1,
                  f"{options} {spec.get('with')}: {done.stderr!r}, wanted {sentence!r}")


@test
def a_peer_of_another_protocol_version_hears_both_numbers():
    with Server() as server:
        with harness.connect(server.port) as sock:
            sock.sendall(harness.preamble(version=1))
            answer = harness.read_frame(sock)
    message = answer.get("message", "") if answer else ""
    check(answer and answer["code"] == "version" and "version 1" in message
          and f"version {harness.PROTOCOL_VERSION}" in message, f"the answer to a version 1 client: {answer}")


if __name__ == "__main__":
    harness.main()

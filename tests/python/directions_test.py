#!/usr/bin/python3
"""-R and --bidir between testio peers on 127.0.0.1: exact byte counts with -n for each direction,
every send mode and engine; timed tests end by themselves with equal counts; a SIGINT ends the
server's senders, and one before the window stops the client with a JSON error; one JSON document
per test; bad combinations refused in one sentence.
Usage: directions_test.py TESTIO_BINARY SCHEMA. No rate or time is asserted but pacing's upper
bound (a paced sender cannot exceed its rate by construction)."""
import json
import socket
import subprocess
import sys
import time
import types

import harness
from harness import Server, check, client, test

valid = harness.schema_checker(sys.argv[2])
MB = 2**20


def document_of(done):
    return valid(json.loads(done.stdout))


def stream_bytes(end, role):
    return [entry[role]["bytes"] for entry in end["streams"]]


def check_direction(end, connections, total=None, what=""):
    """Every stream of one direction's end: sender bytes == receiver bytes (== total when counted)."""
    sent, received = stream_bytes(end, "sender"), stream_bytes(end, "receiver")
    check(len(sent) == connections == len(received), f"{what}: {len(sent)} streams, wanted {connections}")
    check(sent == received, f"{what}: per-stream counts differ: {sent} vs {received}")
    check(all(bytes_ > 0 for bytes_ in sent), f"{what}: a stream moved nothing: {sent}")
    check(end["sum_sent"]["bytes"] == end["sum_received"]["bytes"], f"{what}: sums differ")
    if total is not None:
        check(end["sum_sent"]["bytes"] == total, f"{what}: {end['sum_sent']['bytes']} bytes, wanted {total}")
    check(end["testio"]["byte_counts_match"], f"{what}: byte_counts_match is false")


@test
def reverse_moves_exact_counts():
    with Server() as server:
        for connections in (1, 3):
            document = document_of(client(server, str(connections), "-R", "-n", "12M", "--json"))
            check(document["start"]["test_start"]["reverse"] == 1, "test_start.reverse")
            check_direction(document["end"], connections, 12 * MB, f"-R with {connections}")
            # The client receives: its intervals are the receiver's.
            check(all(not i["sum"]["sender"] for i in document["intervals"]), "client intervals marked sender")
        check("the server sending" in server.stdout(), "the server's report does not say it sends")


@test
def bidir_moves_exact_counts_each_way():
    with Server() as server:
        for connections in (1, 3):
            document = document_of(client(server, str(connections), "--bidir", "-n", "12M", "--json"))
            end = document["end"]
            check(document["start"]["test_start"]["bidir"] == 1, "test_start.bidir")
            check_direction(end, connections, 12 * MB, f"--bidir forward with {connections}")
            reverse = end["testio"]["bidir_reverse"]
            check_direction(reverse["end"], connections, 12 * MB, f"--bidir reverse with {connections}")
            check(end["sum_sent_bidir_reverse"]["bytes"] == end["sum_received_bidir_reverse"]["bytes"] == 12 * MB,
                  "iperf3's bidir_reverse sums")
            check(reverse["start"]["test_start"]["reverse"] == 1, "the reverse part is not marked reverse")
            check(len(document["start"]["connected"]) == connections and
                  len(reverse["start"]["connected"]) == connections, "connected lists per direction")
            ports = {c["local_port"] for c in document["start"]["connected"] + reverse["start"]["connected"]}
            check(len(ports) == 2 * connections, f"{2 * connections} distinct connections expected: {ports}")


@test
def bidir_source_ports_cover_both_directions():
    first = harness.free_port_range_outside_the_ephemeral_ones(4)
    with Server() as server:
        document = document_of(client(server, "2", "--bidir", "-n", "2M", "--cport", f"{first}-{first + 3}", "--json"))
        reverse = document["end"]["testio"]["bidir_reverse"]
        forward_ports = [c["local_port"] for c in document["start"]["connected"]]
        reverse_ports = [c["local_port"] for c in reverse["start"]["connected"]]
        check(forward_ports == [first, first + 1] and reverse_ports == [first + 2, first + 3],
              f"source ports {forward_ports} {reverse_ports}, wanted {first}..{first + 3}")


@test
def timed_tests_end_by_themselves_with_equal_counts():
    with Server() as server:
        for direction in ("-R", "--bidir"):
            started = time.monotonic()
            document = document_of(client(server, "2", direction, "-t", "1", "-i", "0.5", "--json"))
            check(time.monotonic() - started < 30, f"{direction} -t 1 took too long")
            check_direction(document["end"], 2, None, f"{direction} -t 1")
            check(len(document["intervals"]) >= 2, f"{direction}: {len(document['intervals'])} intervals")
            if direction == "--bidir":
                check_direction(document["end"]["testio"]["bidir_reverse"]["end"], 2, None, "--bidir reverse -t 1")


@test
def every_send_mode_and_engine_runs_both_ways():
    with Server() as server:
        for engine in engines():
            for mode in ("send", "zerocopy", "sendfile"):
                if harness.engine_refuses(engine, "--send-mode", mode):
                    continue
                document = document_of(client(server, "2", "--bidir", "-n", "6M", "--send-mode", mode,
                                              "--engine", engine, "--json"))
                what = f"--bidir --send-mode {mode} --engine {engine}"
                check(document["start"]["testio"]["engine"] == engine, f"{what}: engine not in the report")
                check_direction(document["end"], 2, 6 * MB, what + " forward")
                check_direction(document["end"]["testio"]["bidir_reverse"]["end"], 2, 6 * MB, what + " reverse")


@test
def reverse_pacing_holds_the_server_to_its_rate():
    with Server() as server:
        document = document_of(client(server, "2", "-R", "-t", "1", "-b", "200M", "--json"))
        rate = document["end"]["sum_received"]["bits_per_second"]
        check(0 < rate < 2 * 200e6 * 1.5, f"-R -b 200M x 2 connections ran at {rate / 1e6:.0f} Mbit/s")
        check(document["start"]["testio"]["tuning"]["rate_bps"] == 200e6, "rate not in the report")


@test
def sigint_stops_the_servers_senders():
    with Server() as server:
        process = harness.start_client(server, "2", "-R", "-t", "60", "--json")
        harness.wait_for_data(server.port, 2)
        out, _ = harness.interrupt_client(process)
        document = valid(json.loads(out))
        check("SIGINT" in document["end"]["testio"].get("ended_because", ""), "ended_because")
        check(document["end"]["sum_received"]["bytes"] > 0, "nothing received before SIGINT")
        # The server is ready for the next test at once.
        check_direction(document_of(client(server, "1", "-R", "-n", "1M", "--json"))["end"], 1, MB, "after SIGINT")


@test
def sigint_before_the_window_stops_with_one_json_error():
    """A server that accepts and never answers: the client waits for it, SIGINT stops it at once,
    and --json still prints one document that says why (as iperf3's does)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        process = harness.start_client_following(types.SimpleNamespace(port=str(silent.getsockname()[1])),
                                                 "-t", "60", "--json")
        harness.wait_for_client_to_say(process, "connected to")
        out, err = harness.interrupt_client(process)
    document = valid(json.loads(out))
    check(document.get("error") == "interrupted by SIGINT before the test started: stopped",
          f"error {document.get('error')!r}")
    check("before the test started" in err, f"stderr: {err}")


@test
def text_report_shows_both_directions():
    with Server() as server:
        text = client(server, "2", "--bidir", "-n", "4M").stdout
        check(text.count("[  SUM] sender") == 2 and text.count("[  SUM] receiver") == 2, "two sets of sums")
        check("the client sending (one way of --bidir)" in text and "the server sending (one way of --bidir)" in text,
              "direction headings")
        check(harness.sums(text) == (4 * MB, 4 * MB), f"forward sums {harness.sums(text)}")


@test
def bad_directions_are_one_sentence():
    cases = [(["-c", "h", "-R", "--bidir"], "exclude"), (["-c", "h", "-R", "--rr"], "bulk tests"),
             (["-c", "h", "--bidir", "--transfers", "3", "--size", "1K"], "bulk tests"),
             (["-c", "h", "-R", "-F", "/etc/hostname"], "-F"), (["-s", "-R"], "client option"),
             (["-c", "h", "--bidir", "2049"], "twice"), (["-c", "h", "-R", "--raw"], "bulk tests"),
             (["-c", "h", "--bidir", "2", "--cport", "5000-5002"], "4 connections")]
    for args, mentions in cases:
        done = subprocess.run([harness.BINARY, *args], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        check(done.returncode == 2 and mentions in done.stderr and len(done.stderr.strip().splitlines()) == 1,
              f"{args}: exit {done.returncode} {done.stderr!r}")


def engines():
    return [engine for engine in ("asio", "threads", "uring") if not harness.engine_refuses(engine)]


if __name__ == "__main__":
    harness.main()

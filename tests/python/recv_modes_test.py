#!/usr/bin/python3
"""--recv-mode splice and mmap on 127.0.0.1: exact byte counts on both sides with -n, calls
counted, the receiver's zero-copy share in the JSON (both sides' documents) and in the client's
text report, -F refused with splice and hashed with mmap, and a hashed splice request refused by
the server itself. Usage: recv_modes_test.py TESTIO_BINARY SCHEMA. No rate or time is asserted."""
import json
import os
import re
import subprocess
import sys
import tempfile

import harness
from harness import Server, check, client, connect, frame, preamble, read_frame, test

valid = harness.schema_checker(sys.argv[2])

MODES = ("splice", "mmap")


def document_of(done):
    return valid(json.loads(done.stdout))


def check_exact_counts(document, total, connections, what):
    end = document["end"]
    check(end["sum_sent"]["bytes"] == total == end["sum_received"]["bytes"],
          f"{what}: sent {end['sum_sent']['bytes']}, received {end['sum_received']['bytes']}, wanted {total}")
    check(len(end["streams"]) == connections, f"{what}: {len(end['streams'])} streams")
    for stream in end["streams"]:
        check(stream["sender"]["bytes"] == stream["receiver"]["bytes"], f"{what}: a stream's counts differ")
        check(stream["receiver"]["testio"]["calls"] > 0, f"{what}: a receiver counted no calls")
    check(end["testio"]["byte_counts_match"], f"{what}: byte_counts_match is false")


def check_receive_share(document, total, mode, what):
    receiver = document["end"]["testio"]["receiver"]
    share = receiver.get("zerocopy_receive")
    check(share is not None, f"{what}: no end.testio.receiver.zerocopy_receive")
    check(share["zero_copy_bytes"] + share["copied_bytes"] == total,
          f"{what}: zero-copy {share['zero_copy_bytes']} + copied {share['copied_bytes']} is not {total}")
    check(0 <= share["zero_copy_share"] <= 1, f"{what}: share {share['zero_copy_share']}")
    if mode == "splice":
        # Every spliced byte goes socket -> pipe -> /dev/null; only a fallback would copy.
        check(share["copied_bytes"] == 0 and share["zero_copy_share"] == 1, f"{what}: splice copied {share}")
    check("zerocopy_receive" not in document["end"]["testio"]["sender"], f"{what}: a sender with a receive share")


@test
def each_mode_counts_exactly_with_one_and_three_connections():
    total = 30 * 2**20
    with Server("-J") as server:
        for mode in MODES:
            for connections in (1, 3):
                what = f"{mode} x{connections}"
                done = client(server, str(connections), "-n", "30M", "--recv-mode", mode, "-J")
                document = document_of(done)
                check(document["start"]["testio"]["recv_mode"] == mode, f"{what}: start.testio.recv_mode")
                check_exact_counts(document, total, connections, what)
                check_receive_share(document, total, mode, what)
        # The server's own documents (one per test, -J) carry the same share, measured there.
        server.wait_for_reports(4)
        server_documents = [json.loads(part) for part in split_documents(server.stdout())]
        check(len(server_documents) == 4, f"{len(server_documents)} server documents")
        for document, (mode, connections) in zip(server_documents, [(m, c) for m in MODES for c in (1, 3)]):
            valid(document)
            check_receive_share(document, total, mode, f"server's {mode} x{connections}")


def split_documents(text):
    """The JSON documents a -J server printed one after another."""
    decoder = json.JSONDecoder()
    position, documents = 0, []
    text = text.strip()
    while position < len(text):
        document, end = decoder.raw_decode(text, position)
        documents.append(json.dumps(document))
        position = end
        while position < len(text) and text[position].isspace():
            position += 1
    return documents


@test
def the_clients_text_report_shows_the_servers_share():
    with Server() as server:
        for mode in MODES:
            text = client(server, "2", "-n", "10M", "--recv-mode", mode).stdout
            check(f"recv mode {mode}" in text, f"{mode}: the start line does not name the mode:\n{text[:300]}")
            check(harness.sums(text) == (10 * 2**20, 10 * 2**20), f"{mode}: sums {harness.sums(text)}")
            line = next((l for l in text.splitlines() if l.startswith(f"{mode}: ")), None)
            check(line is not None and re.match(rf"{mode}: [0-9.]+% of [0-9.]+ \S+ received", line),
                  f"{mode}: no share line:\n{text}")
            if mode == "splice":
                check(line.startswith("splice: 100.0% of"), line)
            if mode == "mmap" and float(line.split()[1].rstrip("%")) < 10:
                check("on loopback" in line, f"a near-zero mmap share without its reason: {line}")
        server.wait_for_reports(2)
        check(server.stdout().count("splice: 100.0% of") == 1, "the server's own report lacks the splice share")


@test
def splice_refuses_a_hashed_test_and_mmap_hashes():
    with Server() as server, tempfile.TemporaryDirectory() as directory:
        source = harness.random_file(directory, 5_000_003)
        done = subprocess.run(harness.client_argv(server, "2", "-F", source, "--recv-mode", "splice"),
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        check(done.returncode == 2 and "splice" in done.stderr and len(done.stderr.strip().splitlines()) == 1,
              f"-F with splice: exit {done.returncode} {done.stderr!r}")
        for connections in (1, 3):
            text = client(server, str(connections), "-F", source, "--recv-mode", "mmap", "-i", "0").stdout
            check(text.count("received: match") == connections, f"mmap -F x{connections} digests:\n{text[-600:]}")
            check("mmap: " in text, f"mmap -F x{connections}: no share line")
        # A client that skips its own check meets the server's: one sentence in an error frame.
        with connect(server.port) as control:
            control.sendall(preamble())
            check(read_frame(control)["type"] == "hello", "no hello")
            request = {"type": "test_request", "connections": 1, "duration_s": 0.0, "total_bytes": 1000,
                       "threads": 0, "client_threads": 1, "buffer": 65536, "window": 0, "recv_mode": "splice",
                       "hash": "sha1", "interval_s": 0, "omit_s": 0, "workload": "stream",
                       "client_version": "raw", "auth": ""}
            control.sendall(frame(request))
            answer = read_frame(control)
            check(answer and answer["type"] == "error" and answer["message"].endswith("so the server could not hash them"),
                  f"answer: {answer}")
        # The server keeps serving, in every mode.
        for mode in ("recv_into", *MODES):
            check(harness.sums(client(server, "1", "-n", "1M", "--recv-mode", mode).stdout) == (2**20, 2**20),
                  f"{mode} after the refusals")


@test
def each_side_reports_the_peers_zero_copy_figures():
    with Server("-J") as server:
        # Enough sends that completions come back before the last one (they are drained after each).
        client_document = document_of(client(server, "2", "-n", "100M", "--send-mode", "zerocopy",
                                             "--recv-mode", "mmap", "-J"))
        server.wait_for_reports()
        server_document = valid(json.loads(server.stdout()))
    sent_here = client_document["end"]["testio"]["sender"].get("zerocopy")
    check(sent_here is not None, "the client counted no completed zero-copy sends")
    sent_there = server_document["end"]["testio"]["sender"].get("zerocopy")
    check(sent_there == sent_here, f"the server's view of the client's sends {sent_there}, the client's {sent_here}")
    received_here = server_document["end"]["testio"]["receiver"]["zerocopy_receive"]
    received_there = client_document["end"]["testio"]["receiver"].get("zerocopy_receive")
    check(received_there == received_here, f"the client's view of the server's receive {received_there}, "
                                           f"the server's {received_here}")


@test
def splice_without_a_pipe_falls_back_with_one_warning():
    # A descriptor limit just below what the pipe and /dev/null need. The exact count differs
    # between builds, so lower the limit one at a time from a comfortable 32 (each run splices)
    # until splice falls back. Lower still, the server could not accept the data connection and
    # would wait out its 10 s for it: the search stops at the first fallback.
    for limit in range(32, 7, -1):
        with Server("-1", prefix=("prlimit", f"--nofile={limit}"), env=ubsan_going_on()) as server:
            if splice_fell_back(server, limit):
                return
    raise harness.Failure("no descriptor limit made splice fall back")


def ubsan_going_on():
    """UBSan checks a dynamic type by writing the object's memory to a pipe; out of descriptors it
    cannot, and reports a virtual call as a bad vptr. Here that is the point, so under UBSan the
    server goes on after a report; splice_fell_back lets only those reports through."""
    if "UBSAN_OPTIONS" not in os.environ:
        return None
    return {**os.environ, "UBSAN_OPTIONS": os.environ["UBSAN_OPTIONS"].replace("halt_on_error=1", "halt_on_error=0")}


def only_vptr_reports(stderr):
    reports = [line for line in stderr.splitlines() if "runtime error:" in line]
    return all("does not point to an object of type" in line for line in reports)


def splice_fell_back(server, limit):
    """One -n test at this limit: False if it spliced, True if it fell back with one warning."""
    done = subprocess.run(harness.client_argv(server, "1", "-n", "5M", "--recv-mode", "splice"),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"limit {limit}: the test failed before splice fell back: {done.stderr}")
    check(harness.sums(done.stdout) == (5 * 2**20, 5 * 2**20), f"limit {limit}: sums {harness.sums(done.stdout)}")
    server.process.wait(20)
    check(only_vptr_reports(server.stderr()), f"limit {limit}: undefined behaviour:\n{server.stderr()}")
    warnings = server.stderr().count("--recv-mode splice is not available here")
    if "splice: 100.0% of" in done.stdout:
        check(warnings == 0, f"limit {limit}: spliced, yet warned")
        return False
    check("splice: 0.0% of" in done.stdout and "recv_into read it" in done.stdout,
          f"limit {limit}: no fallback share:\n{done.stdout}")
    check(warnings == 1, f"limit {limit}: {warnings} warnings:\n{server.stderr()}")
    return True


if __name__ == "__main__":
    harness.main()

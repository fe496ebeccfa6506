#!/usr/bin/python3
"""--engine asio, threads and uring on 127.0.0.1: every send and receive mode each engine runs
moves exactly -n bytes over 1 and 3 connections (both sides, every stream); a timed run ends by
itself and SIGINT ends one early, with equal counts; uring's receivers count bytes as they come
among 512 connections; -b holds each engine below its rate; -F
digests match; --engine threads runs a thread per connection; what an engine does not run is
refused up front in one sentence.
Usage: engines_test.py TESTIO_BINARY SCHEMA. No rate or time is asserted beyond pacing's upper
bound."""
import json
import os
import signal
import subprocess
import sys
import tempfile

import harness
from harness import Server, check, client, test

valid = harness.schema_checker(sys.argv[2])

ENGINES = ("asio", "threads", "uring")
SEND_MODES = {"asio": ("send", "zerocopy", "sendfile"), "threads": ("send", "zerocopy", "sendfile"),
              "uring": ("send", "zerocopy")}
RECV_MODES = ("recv", "recv_into", "trunc")


def run_json(server, *args):
    return valid(json.loads(client(server, *args, "--json").stdout))


def check_exact(document, total, what):
    """Both sides counted `total` bytes (when given), stream by stream alike, each in calls."""
    end = document["end"]
    sent, received = end["sum_sent"]["bytes"], end["sum_received"]["bytes"]
    check(sent == received and (total is None or sent == total), f"{what}: sent {sent}, received {received}")
    for number, stream in enumerate(end["streams"], 1):
        check(stream["sender"]["bytes"] == stream["receiver"]["bytes"] > 0,
              f"{what}: connection {number} sent {stream['sender']['bytes']}, "
              f"received {stream['receiver']['bytes']}")
        for side in ("sender", "receiver"):
            check(stream[side]["testio"]["calls"] > 0, f"{what}: connection {number} {side} made no calls")
    return end


@test
def every_mode_of_every_engine_moves_the_exact_count():
    total = 3 * 2**20
    with Server() as server:
        for engine in ENGINES:
            for send in SEND_MODES[engine]:
                for recv in RECV_MODES:
                    for connections in ("1", "3"):
                        what = f"{engine} {send}/{recv} x{connections}"
                        document = run_json(server, connections, "-n", "3M", "-l", "128K", "--engine", engine,
                                            "--send-mode", send, "--recv-mode", recv)
                        check_exact(document, total, what)


@test
def zero_copy_sends_are_counted_with_every_engine():
    with Server() as server:
        for engine in ENGINES:
            # Enough sends that notifications arrive while the senders still read them.
            document = run_json(server, "2", "-n", "40M", "-l", "128K", "--engine", engine, "--send-mode", "zerocopy")
            zerocopy = check_exact(document, 40 * 2**20, engine)["testio"]["sender"].get("zerocopy")
            # Loopback: the kernel copies every zero-copy send after all.
            check(zerocopy and zerocopy["completed_sends"] > 0 and zerocopy["zero_copy_share"] == 0,
                  f"{engine}: zerocopy figures {zerocopy}")


@test
def a_timed_run_ends_by_itself_with_equal_counts():
    with Server() as server:
        for engine in ENGINES:
            document = run_json(server, "2", "-t", "1", "-i", "0", "--engine", engine)
            check_exact(document, None, f"{engine} -t 1")


@test
def sigint_ends_each_engine_early_with_equal_counts():
    # The threads and uring workers block in their streams: they see SIGINT through BlockingSignals.
    for engine in ENGINES:
        with Server() as server:
            runner = harness.start_client(server, "2", "-t", "60", "-i", "0", "--engine", engine, "--json")
            harness.wait_for_data(server.port, 2)
            runner.send_signal(signal.SIGINT)
            out, err = runner.communicate(timeout=30)
        check(runner.returncode == 1, f"{engine}: exit {runner.returncode} after SIGINT: {err}")
        check_exact(valid(json.loads(out)), None, f"{engine} after SIGINT")


@test
def pacing_holds_each_engine_below_its_rate():
    with Server() as server:
        for engine in ENGINES:
            document = run_json(server, "2", "-t", "1", "-b", "40M", "--engine", engine)
            check_exact(document, None, f"{engine} -b 40M")
            for stream in document["end"]["streams"]:
                rate = stream["sender"]["bits_per_second"]
                check(0 < rate < 40e6 * 1.5, f"{engine}: a connection paced at 40 Mbit/s sent at {rate / 1e6:.1f}")


@test
def digests_match_with_every_engine():
    with Server() as server, tempfile.TemporaryDirectory() as directory:
        source = harness.random_file(directory, 3_000_001)
        for engine in ENGINES:
            for send in SEND_MODES[engine]:
                text = client(server, "3", "-F", source, "--engine", engine, "--send-mode", send, "-i", "0").stdout
                check(text.count("received: match") == 3, f"{engine} {send} -F digests:\n{text[-400:]}")


@test
def uring_receivers_count_bytes_as_they_come_among_many_connections():
    # A multishot receive once drained each socket for as long as data kept coming, inside one
    # io_uring_enter: a worker's 256 connections then received nothing until the window's end
    # (in about half of the runs here), while the other worker's did.
    # A starved connection gets its first byte only as the window ends; one that is merely slow to
    # set up gets it well before: "late" is the window's last tenth. Setup is slow beside other
    # suites: 291 connections got their first byte past the middle of a 4 s window under TSan
    # (cc96797: more than one worker's share), 191 past the middle of a 2 s one in release (924487a).
    # The starvation showed in about half of the runs, so the release run makes three; under a
    # sanitizer, where the point is what the 512 connections' receives touch, one run of 6 s.
    window, runs = (6, 1) if harness.SANITIZED else (2, 3)
    with Server() as server:
        for run in range(runs):
            document = run_json(server, "512", "-t", str(window), "-i", "1", "--engine", "uring")
            check_exact(document, None, f"uring x512, run {run + 1}")
            late = [stream for stream in document["end"]["streams"] if stream["receiver"]["start"] >= 0.9 * window]
            check(len(late) < 128, f"uring x512, run {run + 1}: {len(late)} connections received their first "
                                   f"byte in the last tenth of the {window} s window")


@test
def threads_engine_runs_a_thread_per_connection():
    with Server() as server:
        document = run_json(server, "3", "-n", "3M", "--engine", "threads")
        testio = document["start"]["testio"]
        check(testio["client_threads"] == 3 and testio["server_threads"] == 3, f"threads: {testio}")
        check_exact(document, 3 * 2**20, "threads x3")


@test
def what_an_engine_does_not_run_is_refused_in_one_sentence():
    cases = [(["-T", "2", "--engine", "threads"], "drop -T"),
             (["--engine", "uring", "--send-mode", "sendfile"], "sendfile"),
             (["--engine", "threads", "--recv-mode", "splice"], "splice"),
             (["--engine", "uring", "--recv-mode", "mmap"], "mmap"),
             (["--engine", "uring", "--rr"], "--engine"),
             (["--engine", "fibers"], "fibers")]
    for args, mentions in cases:
        done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", *args], capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)
        check(done.returncode == 2 and mentions in done.stderr and len(done.stderr.strip().splitlines()) == 1,
              f"{args}: exit {done.returncode} (want 2) {done.stderr!r}")


@test
def with_no_engine_named_a_bulk_test_runs_uring_where_its_modes_allow():
    with Server() as server:
        for args, engine in ((["3"], "uring"), (["3", "-R"], "uring"), (["3", "--send-mode", "sendfile"], "asio"),
                             (["3", "--recv-mode", "splice"], "asio"), (["3", "--engine", "asio"], "asio")):
            document = run_json(server, *args, "-n", "3M", "-l", "128K")
            check(document["start"]["testio"]["engine"] == engine,
                  f"{args}: engine {document['start']['testio']['engine']}, wanted {engine}")
            check_exact(document, 3 * 2**20, f"{args} on {engine}")


# As in a container under Docker's default seccomp profile: io_uring_setup fails with EPERM.
WITHOUT_IO_URING = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "without_io_uring.py")]
NO_RING = "io_uring cannot be set up on this host"


@test
def a_side_without_io_uring_runs_asio_unless_uring_is_named():
    with Server("-v", prefix=WITHOUT_IO_URING) as server:
        check_exact(run_json(server, "2", "-n", "2M"), 2 * 2**20, "a default test to a server without io_uring")
        server.wait_log("runs asio, not the client's default io_uring: " + NO_RING)
        named = client(server, "-n", "1M", "--engine", "uring", code=1)
        check(NO_RING in named.stderr, f"--engine uring to a server without io_uring said {named.stderr!r}")
    with Server() as server:
        done = subprocess.run([*WITHOUT_IO_URING, *harness.client_argv(server, "2", "-n", "2M", "--json", "-v")],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(done.returncode == 0, f"a client without io_uring: exit {done.returncode}: {done.stderr[-800:]}")
        document = valid(json.loads(done.stdout))
        check(document["start"]["testio"]["engine"] == "asio" and "not the default io_uring: " + NO_RING in done.stderr,
              f"a client without io_uring ran {document['start']['testio']['engine']}: {done.stderr[-800:]}")
        check_exact(document, 2 * 2**20, "a default test from a client without io_uring")
        named = subprocess.run([*WITHOUT_IO_URING, *harness.client_argv(server, "-n", "1M", "--engine", "uring")],
                               capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(named.returncode == 1 and NO_RING in named.stderr,
              f"--engine uring without io_uring: exit {named.returncode}, {named.stderr!r}")


if __name__ == "__main__":
    harness.main()

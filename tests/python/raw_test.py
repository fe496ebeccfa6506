#!/usr/bin/python3
"""--raw tests: nc (netcat-openbsd), socat and testio itself send a file to `testio -s --raw` over
127.0.0.1, and every digest printed must equal hashlib's of the file; testio sends over 32
connections to a threaded Python receiver, and 32 Python connections into the sink are summed as
one peer's. Usage: raw_test.py TESTIO_BINARY [SCHEMA]."""
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import harness
from harness import Server, check, client

tests = []


def test(function):
    tests.append(function)
    return function


def sink_lines(server, count, kind="raw received"):
    """The sink's lines of one kind ("raw received" per connection, "raw sum" per peer group)."""
    lines = lambda: [line for line in server.stdout().splitlines() if line.startswith(kind)]
    harness.wait_until(lambda: len(lines()) >= count, 30, f"{count} {kind!r} lines")
    return lines()


def json_events(server, event, count):
    events = lambda: [json.loads(line)["data"] for line in server.stdout().splitlines()
                      if json.loads(line)["event"] == event]
    harness.wait_until(lambda: len(events()) >= count, 30, f"{count} {event} events")
    return events()


class CountingReceiver:
    """A threaded plain-TCP receiver on 127.0.0.1 (a thread per connection, as the original
    experiment's script): counts each connection's bytes and closes at EOF."""

    def __init__(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(256)
        self.listener.settimeout(60)
        self.port = str(self.listener.getsockname()[1])
        self.counts, self.lock, self.threads = [], threading.Lock(), []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        try:
            while True:
                connection, _ = self.listener.accept()
                thread = threading.Thread(target=self._count, args=(connection,), daemon=True)
                thread.start()
                self.threads.append(thread)
        except OSError:  # closed, or no connection for 60 s
            pass

    def _count(self, connection):
        connection.settimeout(60)
        total = 0
        with connection:
            while data := connection.recv(1 << 20):
                total += len(data)
        with self.lock:
            self.counts.append(total)

    def close(self):
        self.listener.close()
        for thread in self.threads:
            thread.join(60)


@test
def nc_and_socat_digests_match_sha1sum():
    with tempfile.TemporaryDirectory() as directory, Server("--raw") as server:
        path = harness.random_file(directory, 5_000_003)
        with open(path, "rb") as data:
            expected = hashlib.sha1(data.read()).hexdigest()
        with open(path, "rb") as data:
            subprocess.run(["nc", "-N", "127.0.0.1", server.port], stdin=data, check=True, timeout=60,
                           capture_output=True)
        subprocess.run(["socat", "-u", f"FILE:{path}", f"TCP:127.0.0.1:{server.port}"], check=True, timeout=60,
                       capture_output=True)
        lines = sink_lines(server, 2)
    for line in lines:
        check(f"5000003 bytes" in line and line.endswith(f"sha1 {expected}"), f"sink line: {line}")


@test
def testio_raw_sender_and_sink_agree_on_sha256():
    with tempfile.TemporaryDirectory() as directory, Server("--raw", "--hash", "sha256", "--json") as server:
        path = harness.random_file(directory, 3_000_000)
        with open(path, "rb") as data:
            expected = hashlib.sha256(data.read()).hexdigest()
        sent = json.loads(client(server, "--raw", "--hash", "sha256", "-F", path, "--json").stdout)["end"]
        received = json_events(server, "raw", 1)[0]
    digests = sent["testio"]["digests"]
    check(digests["sent"] == [expected] and received["digest"] == expected, f"digests {digests} {received}")
    check(sent["sum_sent"]["bytes"] == received["bytes"] == 3_000_000, "byte counts differ")
    check(received["complete"] and received["calls"] > 0, f"sink figures: {received}")


@test
def generated_data_and_several_senders_at_once():
    with Server("--raw", "--hash", "none") as server:
        senders = [harness.start_client(server, "--raw", "-n", "20M", "--hash", "none") for _ in range(3)]
        for sender in senders:
            out, err = sender.communicate(timeout=60)
            check(sender.returncode == 0, f"a sender failed: {err}")
        lines = sink_lines(server, 3)
    ports = {re.search(r":(\d+):", line).group(1) for line in lines}
    check(len(ports) == 3, f"want one line per sender: {lines}")
    check(all("20971520 bytes" in line and line.endswith("none -") for line in lines), f"lines: {lines}")


@test
def thirty_two_raw_connections_into_a_threaded_python_receiver():
    receiver = CountingReceiver()
    try:
        done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", receiver.port, "--raw", "32", "-n", "300M",
                               "--hash", "none", "--json"], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        check(done.returncode == 0, f"raw send: exit {done.returncode}: {done.stderr}")
        report = json.loads(done.stdout)
    finally:
        receiver.close()
    streams = [stream["sender"]["bytes"] for stream in report["end"]["streams"]]
    check(len(streams) == 32 and sum(streams) == 300 * 2**20, f"testio sent {sum(streams)} over {len(streams)}")
    check(report["end"]["sum_sent"]["bytes"] == 300 * 2**20, f"sum_sent: {report['end']['sum_sent']}")
    check(sorted(receiver.counts) == sorted(streams), f"the receiver counted {sorted(receiver.counts)}")
    check(report["start"]["testio"]["plain_peer"] and report["intervals"], "a plain peer's report with intervals")
    if SCHEMA:
        harness.schema_checker(SCHEMA)(report)


def raw_send_documents(port, connections, output):
    """A --raw send of 4 MiB over `connections` to 127.0.0.1:`port`: its --json document, or its
    --json-stream events."""
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", port, "--raw", str(connections), "-n", "4M",
                           output], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"--raw {connections} {output}: exit {done.returncode}: {done.stderr}")
    if output == "--json":
        return json.loads(done.stdout)
    return [json.loads(line) for line in done.stdout.splitlines()]


@test
def one_raw_connection_prints_the_document_n_connections_print():
    # A dashboard reads --raw 1 --json as it reads --raw 2 --json: the same document, not the
    # sink's one-line event, and the same events with --json-stream.
    with Server("--raw", "--hash", "none") as server:
        one, two = (raw_send_documents(server.port, n, "--json") for n in (1, 2))
        events = [[event["event"] for event in raw_send_documents(server.port, n, "--json-stream")] for n in (1, 2)]
    check(list(one) == list(two) == ["start", "intervals", "end"], f"top-level keys {list(one)} and {list(two)}")
    check(list(one["end"]) == list(two["end"]), f"end keys {list(one['end'])} and {list(two['end'])}")
    check("sum_received" in one["end"] and "sum_sent" in one["end"], f"end keys {list(one['end'])}")
    check(one["end"]["sum_sent"]["bytes"] == 4 * 2**20 and len(one["end"]["streams"]) == 1, f"end {one['end']}")
    check(one["start"]["testio"]["plain_peer"] and one["intervals"], "a plain peer's report with intervals")
    check(events[0][0] == "start" and events[0][-1] == "end" and set(events[0]) == set(events[1]),
          f"--json-stream events {events}")
    if SCHEMA:
        harness.schema_checker(SCHEMA)(one)


@test
def thirty_two_python_connections_make_one_sum_in_the_sink():
    sizes = [100_000 * (i + 1) + i for i in range(32)]
    with Server("--raw", "--hash", "none", "--json") as server:
        connections = [socket.create_connection(("127.0.0.1", int(server.port)), timeout=30) for _ in sizes]
        senders = [threading.Thread(target=lambda c, n: (c.sendall(os.urandom(n)), c.shutdown(socket.SHUT_WR),
                                                         c.recv(1), c.close()), args=(c, n))
                   for c, n in zip(connections, sizes)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(60)
        sums = json_events(server, "raw_sum", 1)
        received = json_events(server, "raw", 32)
        intervals = json_events(server, "raw_interval", 1)  # all out before the sum
    check(len(sums) == 1, f"want one group: {sums}")
    check(sum(interval["bytes"] for interval in intervals) == sum(sizes), f"intervals {intervals}")
    check(sums[0]["connections"] == 32 and sums[0]["bytes"] == sum(sizes) and sums[0]["complete"], f"sum {sums[0]}")
    check(sorted(line["bytes"] for line in received) == sizes, "per-connection lines differ from what was sent")
    check(sums[0]["peer"] == "127.0.0.1", f"peer {sums[0]['peer']}")


@test
def connections_one_after_another_make_one_sum():
    # As a sender's connections look when the sink accepts the later ones only after the first
    # ones finished: each closes before the next opens, a moment later.
    sizes = [300_000, 200_001, 100_002]
    with Server("--raw", "--hash", "none", "--json") as server:
        for size in sizes:
            with socket.create_connection(("127.0.0.1", int(server.port)), timeout=30) as connection:
                connection.sendall(os.urandom(size))
                connection.shutdown(socket.SHUT_WR)
                connection.recv(1)
            time.sleep(0.05)
        sums = json_events(server, "raw_sum", 1)
    check(sums[0]["connections"] == 3 and sums[0]["bytes"] == sum(sizes), f"sum {sums[0]}")


@test
def a_file_over_four_raw_connections_keeps_each_parts_digest():
    with tempfile.TemporaryDirectory() as directory, Server("--raw", "-i", "0.2") as server:
        path = harness.random_file(directory, 4_000_001)
        with open(path, "rb") as data:
            content = data.read()
        sent = client(server, "--raw", "4", "-F", path).stdout
        lines = sink_lines(server, 4)
        total = sink_lines(server, 1, "raw sum")[0]
    digests = re.findall(r"sha1 connection \d: ([0-9a-f]+) sent", sent)
    check(len(digests) == 4, f"the client's digests: {sent}")
    received = {line.rsplit(" ", 1)[1] for line in lines}
    check(received == set(digests), f"sink digests {received} against sent {digests}")
    check("4 connections, 4000001 bytes" in total, f"sum line: {total}")
    # The parts are contiguous: their digests are the file's pieces as testio splits it.
    shares = [4_000_001 // 4 + (1 if k < 4_000_001 % 4 else 0) for k in range(4)]
    offsets = [sum(shares[:k]) for k in range(4)]
    expected = [hashlib.sha1(content[o:o + n]).hexdigest() for o, n in zip(offsets, shares)]
    check(digests == expected, f"digests {digests}, parts {expected}")


@test
def one_off_sink_exits_after_one_connection():
    with tempfile.TemporaryDirectory() as directory, Server("--raw", "-1") as server:
        path = harness.random_file(directory, 1000)
        client(server, "--raw", "-F", path)
        server.process.wait(20)
        check(server.process.returncode == 0, f"exit {server.process.returncode}")


@test
def sigint_sums_what_the_sink_holds_and_it_refuses_strangers_at_the_door():
    # The sink is a peer of the one server: --allow at its door, and its signals. A SIGINT while a
    # group lingers (its connections closed, more may follow) prints its sum now and exits 0.
    sizes = [50_000, 60_001]
    with Server("--raw", "--hash", "none", "--json", "--allow", "127.0.0.1/32") as server:
        with socket.create_connection(("127.0.0.1", int(server.port)), timeout=10,
                                      source_address=("127.0.0.2", 0)) as stranger:
            stranger.settimeout(10)
            check(stranger.recv(1) == b"", "a connection from outside --allow was not closed")
        connections = [socket.create_connection(("127.0.0.1", int(server.port)), timeout=30) for _ in sizes]
        for connection, size in zip(connections, sizes):
            connection.sendall(os.urandom(size))
            connection.shutdown(socket.SHUT_WR)
        for connection in connections:
            connection.recv(1)
            connection.close()
        json_events(server, "raw", 2)
        server.process.send_signal(signal.SIGINT)
        server.process.wait(20)
        sums = json_events(server, "raw_sum", 1)
        errors = server.stderr()
    check(server.process.returncode == 0, f"exit {server.process.returncode} after SIGINT")
    check(sums[0]["connections"] == 2 and sums[0]["bytes"] == sum(sizes), f"sum {sums[0]}")
    check("not in --allow" in errors, f"the refusal is not logged: {errors}")


@test
def bad_raw_input_is_one_sentence():
    with Server("--raw") as server:
        missing = client(server, "--raw", "-F", "/nonexistent/file", code=1)
        check("cannot read /nonexistent/file" in missing.stderr, missing.stderr)
    cases = [(["-c", "127.0.0.1", "--raw", "4", "-O", "1"], "first byte"),
             (["-c", "127.0.0.1", "--raw", "-F", "x", "-t", "3"], "whole file"),
             (["-c", "127.0.0.1", "-F", "x", "--rr"], "--rr"),
             (["-s", "--raw", "--hash", "md5"], "sha1, sha256, none"),
             (["-c", "127.0.0.1", "--hash", "sha256"], "--raw")]
    for args, mentions in cases:
        done = subprocess.run([harness.BINARY, *args], capture_output=True, text=True, timeout=30)
        check(done.returncode == 2 and mentions in done.stderr, f"{args}: {done.returncode} {done.stderr}")


SCHEMA = None
if __name__ == "__main__":
    if len(sys.argv) > 2:
        SCHEMA = sys.argv.pop(2)
    harness.main(tests)

#!/usr/bin/python3
"""Scale tests on 127.0.0.1: exact byte counts at 1024 and 4096 connections (forward, -R, and
--bidir at half the cap), the server's memory during and after a 1024-connection test, and an idle
flood from 127.0.0.2 that must not keep a client on 127.0.0.1 out, flood the log or leak
descriptors. Under a sanitizer the exact counts run at a quarter of those connections (256, 1024,
512). Usage: scale_test.py TESTIO_BINARY. Every load is bounded in count and time."""
import json
import selectors
import socket
import subprocess
import threading
import time

import harness
from harness import Server, check, client

tests = []
# Sanitizers keep freed memory in quarantine and shadow every byte: their RSS says nothing of ours.
SANITIZED = harness.SANITIZED
# Under a sanitizer each connection costs many times its release price (the shadowed buffers, the
# coroutines' frames): the same exact counts on a quarter of the connections. The release run
# holds the scale itself: 1024, the cap of 4096, and --bidir at half of it.
MANY, CAP = (256, 1024) if SANITIZED else (1024, 4096)


def test(function):
    tests.append(function)
    return function


vm_rss_kib = harness.vm_rss_kib


def exact_counts(server, connections, *args):
    """Runs a counted test and checks every connection's bytes on both sides (the client exits 1
    on any difference; the JSON says it again per stream)."""
    done = client(server, str(connections), *args, "--json", limit=300)
    report = json.loads(done.stdout)
    streams = report["end"]["streams"]
    check(len(streams) == connections, f"{len(streams)} streams in the report")
    for stream in streams:
        check(stream["sender"]["bytes"] == stream["receiver"]["bytes"] > 0, f"stream counts {stream}")
    check(not report["end"]["testio"]["mismatched_streams"], "mismatched streams")
    return report


@test
def exact_counts_at_1024_and_the_cap_of_4096():
    with Server() as server:
        report = exact_counts(server, MANY, "-n", "1G", "-l", "128K")
        check(report["end"]["sum_received"]["bytes"] == 2**30, f"sum {report['end']['sum_received']}")
        report = exact_counts(server, CAP, "-n", "2G", "-l", "128K")
        check(report["end"]["sum_received"]["bytes"] == 2 * 2**30, f"sum {report['end']['sum_received']}")


@test
def reverse_at_the_cap_and_bidir_at_half_of_it():
    with Server() as server:
        exact_counts(server, CAP, "-R", "-n", "1G", "-l", "128K")
        report = exact_counts(server, CAP // 2, "--bidir", "-n", "1G", "-l", "128K")
        reverse = report["end"]["testio"]["bidir_reverse"]["end"]["streams"]
        check(len(reverse) == CAP // 2, f"{len(reverse)} reverse streams")
        for stream in reverse:
            check(stream["sender"]["bytes"] == stream["receiver"]["bytes"] > 0, f"reverse stream {stream}")


@test
def server_memory_stays_bounded_and_returns_after_1024_connections():
    if SANITIZED:
        raise harness.Skip("a sanitized build's memory is the sanitizer's")
    with Server() as server:
        pid = server.process.pid
        client(server, "2", "-t", "0.5")  # the pool, the log and the allocator warmed up once
        time.sleep(0.5)
        before = vm_rss_kib(pid)
        peak = [before]
        running = harness.start_client(server, "1024", "-t", "3")
        while running.poll() is None:
            peak[0] = max(peak[0], vm_rss_kib(pid))
            time.sleep(0.05)
        out, err = running.communicate(timeout=120)
        check(running.returncode == 0, f"1024-connection test: exit {running.returncode}: {err}")
        server.wait_for_reports(2)
        time.sleep(0.5)
        after = vm_rss_kib(pid)
    check(peak[0] < 128 * 1024, f"server VmRSS peaked at {peak[0]} KiB during the test (idle {before} KiB)")
    check(after - before < 32 * 1024, f"server VmRSS {after} KiB after the test, {before} KiB before")
    print(f"# VmRSS idle {before} KiB, peak {peak[0]} KiB, after {after} KiB", flush=True)


class IdleFlood:
    """Holds `count` idle connections from 127.0.0.2 open, on one thread, reopening each one the
    server drops half a second later, until stopped or `limit` seconds have passed."""

    def __init__(self, port, count, limit):
        self.port, self.count, self.deadline = int(port), count, time.monotonic() + limit
        self.stopping, self.dropped, self.opened = threading.Event(), 0, 0
        self.selector = selectors.DefaultSelector()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.2", 0))
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", self.port))
        self.selector.register(sock, selectors.EVENT_READ)
        self.opened += 1

    def _run(self):
        reopen_at = [time.monotonic()] * self.count
        while not self.stopping.is_set() and time.monotonic() < self.deadline:
            now = time.monotonic()
            while reopen_at and reopen_at[0] <= now:
                reopen_at.pop(0)
                try:
                    self._open()
                except OSError:
                    reopen_at.append(now + 0.5)
            for key, _ in self.selector.select(0.05):
                try:
                    if key.fileobj.recv(4096):
                        continue  # the door's refusal frame: its close follows
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                self.selector.unregister(key.fileobj)
                key.fileobj.close()
                self.dropped += 1
                reopen_at.append(time.monotonic() + 0.5)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()

    def stop(self):
        self.stopping.set()
        self.thread.join(10)


@test
def an_idle_flood_from_one_address_does_not_keep_others_out(*server_options):
    # More than the 1024 handshakes the server holds in all: only the cap per peer leaves room.
    with Server("--handshake-timeout", "1", *server_options) as server:
        pid = server.process.pid
        client(server, "2", "-t", "0.3")
        time.sleep(0.3)
        descriptors_before = harness.descriptors_and_threads(pid)[0]
        log_before = server.stderr().count("\n")
        flood = IdleFlood(server.port, count=1500, limit=25)
        try:
            harness.wait_until(lambda: flood.opened > flood.count + 1000, 15, "the flood to reopen what was dropped")
            for _ in range(3):
                report = exact_counts(server, 8, "-n", "200M")
                check(report["end"]["sum_received"]["bytes"] == 200 * 2**20, "a test during the flood")
            log_during = server.stderr().count("\n") - log_before
        finally:
            flood.stop()
        harness.wait_until(lambda: harness.descriptors_and_threads(pid)[0] <= descriptors_before, 15,
                           "the server's descriptors to come back to their count before the flood")
    check(flood.dropped > 100, f"the server dropped only {flood.dropped} of {flood.opened} flood connections")
    # One line per reason per second (refusals at the door, handshake timeouts) and a few per test.
    check(log_during < 120, f"the server logged {log_during} lines during a flood of {flood.opened} connections")
    print(f"# flood: {flood.opened} opened, {flood.dropped} dropped, {log_during} log lines", flush=True)


if __name__ == "__main__":
    harness.main(tests)

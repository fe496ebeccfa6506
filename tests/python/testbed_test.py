#!/usr/bin/python3
"""Accuracy on a real (virtual) link: testio between two network namespaces joined by veth pairs
that tools/testbed.sh builds, rate-limited by tbf to known rates. Needs root and `ip netns`; every
test is skipped with the reason otherwise. Traffic goes only to 198.18.0.0/15 and fd00::/8 inside
namespaces this suite created; every namespace and process is gone when it ends (checked).
Usage: testbed_test.py TESTIO_BINARY TESTBED_SCRIPT SCHEMA."""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import harness
from harness import Failure, Server, Skip, check

tests = []
SCRIPT = sys.argv[2] if len(sys.argv) > 2 else ""
SCHEMA = sys.argv[3] if len(sys.argv) > 3 else ""
PREFIX = f"tio-{os.getpid()}"
created = []      # testbed names still up, for the exit handler
why_not = None    # the reason tests are skipped, once known

# Per-frame bytes beside the TCP payload, as tbf and the veth counters count them: Ethernet header
# 14, IPv4 20, TCP 20, the timestamp option 12 (Linux sends it on every segment when
# net.ipv4.tcp_timestamps is on, as it is by default and in a new namespace).
ETHERNET, IPV4, TCP, TIMESTAMPS = 14, 20, 20, 12

# How close the issue (#8) asks the figures to be.
CAPACITY_TOLERANCE = 0.03
IPERF2_TOLERANCE = 0.02
COUNTER_TOLERANCE = 0.01


def test(function):
    tests.append(function)
    return function


def unavailable():
    """Why the testbed cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
    for tool in ("ip", "tc", "iperf"):
        if not shutil.which(tool):
            return f"'{tool}' is not installed (tools/install-deps.sh installs it)"
    probe = f"{PREFIX}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return "ip netns does not work here: " + made.stderr.strip()
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


def namespaces():
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


class Testbed:
    """tools/testbed.sh up/down around a block, under a name no other run uses."""
    serial = 0

    def __init__(self, *options):
        global why_not
        if why_not is None:
            why_not = unavailable() or ""
        if why_not:
            raise Skip(why_not)
        Testbed.serial += 1
        self.name = f"{PREFIX}-{Testbed.serial}"
        self.a, self.b = f"{self.name}-a", f"{self.name}-b"
        self.options = options

    def __enter__(self):
        created.append(self.name)
        subprocess.run([SCRIPT, "up", self.name, *self.options], check=True, timeout=60,
                       capture_output=True)
        return self

    def __exit__(self, *exc):
        # Every process we started in the namespaces must have ended before they go.
        left = [ns for ns in (self.a, self.b)
                if subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.strip()]
        teardown(self.name)
        created.remove(self.name)
        if exc[0] is None:
            check(not left, f"processes were still running in {left}")

    def run(self, ns, *argv, limit=60, code=0):
        done = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                              timeout=limit, stdin=subprocess.DEVNULL)
        check(done.returncode == code, f"{' '.join(argv)}: exit {done.returncode}, wanted {code}: {done.stderr}")
        return done

    def counters(self, ns, nic):
        read = self.run(ns, "cat", *(f"/sys/class/net/{nic}/statistics/{name}"
                                     for name in ("rx_bytes", "rx_packets", "tx_bytes", "tx_packets"))).stdout
        return [int(value) for value in read.split()]

    def server(self, *extra, bind):
        return Server(*extra, bind=bind, prefix=("ip", "netns", "exec", self.b))


def teardown(name):
    subprocess.run([SCRIPT, "down", name], timeout=60, capture_output=True)


def teardown_all():
    for name in list(created):
        teardown(name)


def link_capacity_bps(rate_bps, mss):
    """Goodput a link of `rate_bps` (L2 frame bits, as tbf counts) carries in full-MSS segments."""
    payload = mss
    wire = mss + TIMESTAMPS + TCP + IPV4 + ETHERNET
    return rate_bps * payload / wire


def relative(measured, expected):
    return abs(measured - expected) / expected


def iperf2_steady_bps(csv_text):
    """Mean of iperf2's whole one-second server intervals after the first (the warm-up)."""
    rates = []
    for line in csv_text.splitlines():
        fields = line.split(",")
        if len(fields) < 9 or "-" not in fields[6]:
            continue
        start, end = (float(x) for x in fields[6].split("-"))
        if start >= 1.0 and abs(end - start - 1.0) < 0.05:
            rates.append(int(fields[8]))
    check(len(rates) >= 2, f"iperf2 gave too few steady intervals: {csv_text!r}")
    return sum(rates) / len(rates)


def measure_iperf2(bed, address, seconds):
    server = subprocess.Popen(["ip", "netns", "exec", bed.b, "iperf", "-s", "-B", address, "-p", "5001",
                               "-i", "1", "-y", "C"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, stdin=subprocess.DEVNULL)
    try:
        # iperf2 2.1.8 has no port-0 report: retry the client while the server comes up.
        deadline = time.monotonic() + 10
        while True:
            done = subprocess.run(["ip", "netns", "exec", bed.a, "iperf", "-c", address, "-p", "5001",
                                   "-t", str(seconds)], capture_output=True, text=True, timeout=seconds + 30,
                                  stdin=subprocess.DEVNULL)
            if "connected with" in done.stdout or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        check("connected with" in done.stdout, f"iperf2 client did not connect: {done.stdout} {done.stderr}")
        time.sleep(0.5)   # the server prints its last interval after the connection closed
    finally:
        server.send_signal(signal.SIGINT)
        try:
            output, _ = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            output, _ = server.communicate(timeout=10)
    return iperf2_steady_bps(output)


def receiver_total_bytes(document):
    """Every byte the receiver (the server: the client sends) read, warm-up included: the sum over
    its intervals."""
    return sum(interval["sum"]["bytes"] for interval in document["end"]["testio"]["remote_intervals"])


def accuracy_at(rate_text, rate_bps):
    with Testbed("--rate", rate_text, "--cc", "reno") as bed:
        address = "198.18.1.2"
        before = bed.counters(bed.b, "tb1")
        with bed.server("-1", bind=address) as server:
            done = bed.run(bed.a, harness.BINARY, "-c", address, "-p", server.port, "-t", "3", "-O", "1", "-J")
            server.process.wait(20)
        after = bed.counters(bed.b, "tb1")
        document = json.loads(done.stdout)
        iperf2 = measure_iperf2(bed, address, 4)

    mss = document["start"]["tcp_mss_default"]
    goodput = document["end"]["sum_received"]["bits_per_second"]
    capacity = link_capacity_bps(rate_bps, mss)
    rx_bytes, rx_packets = after[0] - before[0], after[1] - before[1]
    payload_on_wire = rx_bytes - rx_packets * (ETHERNET + IPV4 + TCP + TIMESTAMPS)
    counted = receiver_total_bytes(document)
    print(f"# tbf {rate_text}: mss {mss}, capacity {capacity / 1e6:.2f} Mbit/s, testio {goodput / 1e6:.2f}"
          f" ({(goodput / capacity - 1) * 100:+.2f}%), iperf2 {iperf2 / 1e6:.2f}"
          f" ({(goodput / iperf2 - 1) * 100:+.2f}%), veth payload {payload_on_wire} vs testio {counted}"
          f" ({(counted / payload_on_wire - 1) * 100:+.3f}%)", flush=True)
    check(relative(goodput, capacity) <= CAPACITY_TOLERANCE,
          f"testio {goodput:.0f} bit/s is not within 3% of the link's {capacity:.0f}")
    check(relative(goodput, iperf2) <= IPERF2_TOLERANCE,
          f"testio {goodput:.0f} bit/s is not within 2% of iperf2's {iperf2:.0f}")
    check(relative(counted, payload_on_wire) <= COUNTER_TOLERANCE,
          f"testio counted {counted} bytes, the veth {payload_on_wire} bytes of payload")


@test
def goodput_matches_a_200_mbit_link():
    accuracy_at("200mbit", 200e6)


@test
def goodput_matches_a_1_gbit_link():
    accuracy_at("1gbit", 1e9)


@test
def nothing_is_left_behind():
    if why_not:
        raise Skip(why_not)
    teardown_all()
    ours = [ns for ns in namespaces() if ns.startswith(PREFIX)]
    check(not ours, f"namespaces left behind: {ours}")


if __name__ == "__main__":
    atexit.register(teardown_all)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    harness.main(tests)

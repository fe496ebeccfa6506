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
import tempfile
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
UDP, DATAGRAM = 8, 1448

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


# Steady state: one-second receiver intervals after a one-second warm-up (testio's -O 1, iperf2's
# first interval), and their median, so one interval that a busy neighbour on this shared machine
# slowed does not decide. A comparison that still fails is measured again (both tools), up to three
# times in all: one CI run saw iperf2 2.9% behind testio, then testio 5% below the link, both
# from the shared machine's neighbours.
WARM_UP, STEADY_SECONDS, ATTEMPTS = 1, 4, 3


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def iperf2_intervals(csv_text):
    """(start, end, bits/s) of each line of iperf2's -y C report."""
    spans = []
    for line in csv_text.splitlines():
        fields = line.split(",")
        if len(fields) >= 9 and "-" in fields[6]:
            start, end = (float(x) for x in fields[6].split("-"))
            spans.append((start, end, int(fields[8])))
    return spans


def iperf2_steady_bps(bed, address):
    with tempfile.NamedTemporaryFile(mode="w+", prefix="tio-iperf2-") as report:
        # Line-buffered, so each interval is in the file as iperf2 prints it.
        server = subprocess.Popen(["ip", "netns", "exec", bed.b, "stdbuf", "-oL", "iperf", "-s", "-B", address,
                                   "-p", "5001", "-i", "1", "-y", "C"], stdout=report, stderr=subprocess.DEVNULL,
                                  stdin=subprocess.DEVNULL)
        try:
            # iperf2 says nothing when it listens (and its client prints "connected" even when the
            # connect failed): wait for the listening socket.
            harness.wait_until(lambda: bed.run(bed.b, "ss", "-Hltn", "sport = :5001").stdout.strip(), 10,
                               "iperf2 to listen")
            done = subprocess.run(["ip", "netns", "exec", bed.a, "iperf", "-c", address, "-p", "5001",
                                   "-t", str(WARM_UP + STEADY_SECONDS)], capture_output=True, text=True,
                                  timeout=WARM_UP + STEADY_SECONDS + 30, stdin=subprocess.DEVNULL)
            check(done.returncode == 0 and "local 0.0.0.0 port 0" not in done.stdout,
                  f"the iperf2 client did not connect: {done.stdout} {done.stderr}")
            # The server's whole-connection line (from 0.0, longer than an interval) comes last.
            try:
                harness.wait_until(lambda: any(start == 0 and end > 1.5 for start, end, _ in
                                               iperf2_intervals(open(report.name).read())), 10, "iperf2's summary")
            except Failure as error:
                raise Failure(f"{error}; iperf2 printed {open(report.name).read()!r}, client {done.stdout!r}")
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)
        spans = iperf2_intervals(open(report.name).read())
    rates = [rate for start, end, rate in spans if start >= WARM_UP and abs(end - start - 1) < 0.05]
    check(len(rates) >= STEADY_SECONDS - 1, f"iperf2 gave too few steady intervals: {spans}")
    return median(rates)


def testio_steady(bed, address):
    """(JSON document, median steady receiver bits/s, payload the veth carried) of one run."""
    before = bed.counters(bed.b, "tb1")
    with bed.server("-1", bind=address) as server:
        done = bed.run(bed.a, harness.BINARY, "-c", address, "-p", server.port, "-t", str(STEADY_SECONDS),
                       "-O", str(WARM_UP), "-J")
        server.process.wait(20)
    after = bed.counters(bed.b, "tb1")
    document = json.loads(done.stdout)
    received = document["end"]["testio"]["remote_intervals"]   # the server receives
    rates = [i["sum"]["bits_per_second"] for i in received
             if not i["sum"]["omitted"] and abs(i["sum"]["seconds"] - 1) < 0.05]
    check(len(rates) >= STEADY_SECONDS - 1, f"testio gave too few steady intervals: {len(rates)}")
    rx_bytes, rx_packets = after[0] - before[0], after[1] - before[1]
    # Every frame on the veth carries one set of headers (a GSO frame one set for all its payload).
    payload_on_wire = rx_bytes - rx_packets * (ETHERNET + IPV4 + TCP + TIMESTAMPS)
    return document, median(rates), payload_on_wire


def receiver_total_bytes(document):
    """Every byte the receiver (the server: the client sends) read, warm-up included: the sum over
    its intervals."""
    return sum(interval["sum"]["bytes"] for interval in document["end"]["testio"]["remote_intervals"])


def accuracy_at(rate_text, rate_bps):
    with Testbed("--rate", rate_text, "--cc", "reno") as bed:
        for attempt in range(1, ATTEMPTS + 1):
            document, goodput, payload_on_wire = testio_steady(bed, "198.18.1.2")
            iperf2 = iperf2_steady_bps(bed, "198.18.1.2")
            mss = document["start"]["tcp_mss_default"]
            capacity = link_capacity_bps(rate_bps, mss)
            counted = receiver_total_bytes(document)
            print(f"# tbf {rate_text}, attempt {attempt}: mss {mss}, capacity {capacity / 1e6:.2f} Mbit/s, testio "
                  f"{goodput / 1e6:.2f} ({(goodput / capacity - 1) * 100:+.2f}%; summary "
                  f"{document['end']['sum_received']['bits_per_second'] / 1e6:.2f}), iperf2 {iperf2 / 1e6:.2f}"
                  f" (testio {(goodput / iperf2 - 1) * 100:+.2f}%), veth payload {payload_on_wire} vs testio "
                  f"{counted} ({(counted / payload_on_wire - 1) * 100:+.3f}%)", flush=True)
            within = (relative(goodput, capacity) <= CAPACITY_TOLERANCE and
                      relative(goodput, iperf2) <= IPERF2_TOLERANCE and
                      relative(counted, payload_on_wire) <= COUNTER_TOLERANCE)
            if within:
                break
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


def nic_bytes_in_intervals(intervals, direction):
    """{nic: (bytes, packets)} in `direction` ("rx"/"tx") over every interval, warm-up included."""
    totals = {}
    for interval in intervals:
        for nic in interval["testio"]["nics"]:
            moved, packets = totals.get(nic["name"], (0, 0))
            totals[nic["name"]] = (moved + nic[f"{direction}_bytes"], packets + nic[f"{direction}_packets"])
    return totals


@test
def udp_goodput_matches_a_200_mbit_link():
    """-u unpaced into a 200 Mbit/s tbf link: the receiver's steady goodput is the link's payload
    rate (each 1448-byte datagram rides in a frame of 1490 bytes)."""
    capacity = 200e6 * DATAGRAM / (DATAGRAM + UDP + IPV4 + ETHERNET)
    with Testbed("--rate", "200mbit") as bed:
        for attempt in range(1, ATTEMPTS + 1):
            with bed.server("-1", bind="198.18.1.2") as server:
                done = bed.run(bed.a, harness.BINARY, "-c", "198.18.1.2", "-p", server.port, "-u", "-b", "0",
                               "-t", str(STEADY_SECONDS), "-O", str(WARM_UP), "-J")
                server.process.wait(20)
            document = json.loads(done.stdout)
            rates = [i["sum"]["bits_per_second"] for i in document["end"]["testio"]["remote_intervals"]
                     if not i["sum"]["omitted"] and abs(i["sum"]["seconds"] - 1) < 0.05]
            check(len(rates) >= STEADY_SECONDS - 1, f"too few steady intervals: {len(rates)}")
            goodput = median(rates)
            print(f"# udp over tbf 200mbit, attempt {attempt}: capacity {capacity / 1e6:.2f} Mbit/s, testio "
                  f"{goodput / 1e6:.2f} ({(goodput / capacity - 1) * 100:+.2f}%), lost "
                  f"{document['end']['sum']['lost_percent']:.1f}%", flush=True)
            delay = document["end"]["testio"]["udp"]["one_way_delay_us"]  # two namespaces: the offset estimated
            check(delay["clock"] == "estimated" and delay["error_bound_us"] > 0, f"clock: {delay}")
            if relative(goodput, capacity) <= CAPACITY_TOLERANCE:
                break
        # The veth's 1500-byte MTU carries 1472 bytes of UDP payload: 4000 goes in fragments, said once.
        with bed.server("-1", bind="198.18.1.2") as server:
            done = bed.run(bed.a, harness.BINARY, "-c", "198.18.1.2", "-p", server.port, "-u", "-l", "4000",
                           "-n", "400K", "-b", "50M")
            server.process.wait(20)
        check(done.stderr.count("IP fragments") == 1 and "MTU 1500: 1472 bytes" in done.stderr,
              f"no fragment warning: {done.stderr!r}")
    check(relative(goodput, capacity) <= CAPACITY_TOLERANCE,
          f"UDP goodput {goodput:.0f} bit/s is not within 3% of the link's payload rate {capacity:.0f}")


@test
def iface_stats_show_flows_split_over_two_links():
    connections = 8
    with Testbed("--links", "2", "--rate", "1gbit", "--cc", "reno", "--multipath") as bed:
        before = {nic: bed.counters(bed.b, nic) for nic in ("tb1", "tb2")}
        with bed.server("-1", bind="198.18.0.2") as server:
            done = bed.run(bed.a, harness.BINARY, "-c", "198.18.0.2", "-p", server.port, str(connections),
                           "-t", "2", "-O", "0.5", "-i", "0.5", "--iface-stats=tb1,tb2", "--json")
            server.process.wait(20)
        after = {nic: bed.counters(bed.b, nic) for nic in ("tb1", "tb2")}
        # The same over IPv6 (fd00::/8), as text: both sides' NICs in the report.
        with bed.server("-1", bind="fd00:7e57::2") as server:
            text = bed.run(bed.a, harness.BINARY, "-c", "fd00:7e57::2", "-p", server.port, "4", "-t", "1",
                           "--iface-stats=tb1,tb2", "-v").stdout

    document = json.loads(done.stdout)
    if SCHEMA:
        import jsonschema
        with open(SCHEMA) as schema:
            errors = list(jsonschema.Draft7Validator(json.load(schema)).iter_errors(document))
        check(not errors, f"--iface-stats output does not match the schema: {errors[:1]}")
    local = document["intervals"]
    remote = document["end"]["testio"]["remote_intervals"]
    for interval in local + remote:
        names = [nic["name"] for nic in interval["testio"]["nics"]]
        check(names == ["tb1", "tb2"], f"an interval watched {names}")
    sent = nic_bytes_in_intervals(local, "tx")
    received = nic_bytes_in_intervals(remote, "rx")
    headers = ETHERNET + IPV4 + TCP + TIMESTAMPS
    payload_sent = sum(moved - packets * headers for moved, packets in sent.values())
    payload_received = sum(moved - packets * headers for moved, packets in received.values())
    counted = document["end"]["sum_sent"]["bytes"] + sum(
        interval["sum"]["bytes"] for interval in local if interval["sum"]["omitted"])
    print(f"# {connections} flows over two links: client tx {sent}, server rx {received}, "
          f"payload {payload_sent}/{payload_received} vs testio {counted}", flush=True)
    # The client's last interval closes when its last write was handed to the kernel; what the
    # socket buffers and the tbf queue still held leaves after it. The server's closes at EOF.
    check(payload_sent <= counted, f"client NICs carried {payload_sent}, more than testio sent ({counted})")
    check(relative(payload_received, counted) <= COUNTER_TOLERANCE,
          f"server NICs carried {payload_received}, testio sent {counted}")
    # testio's own readings against the kernel's, read around the test by this script.
    for nic in ("tb1", "tb2"):
        kernel = after[nic][0] - before[nic][0]
        check(received[nic][0] <= kernel and relative(received[nic][0], kernel) <= COUNTER_TOLERANCE,
              f"{nic}: the server read {received[nic][0]} rx bytes, the kernel counted {kernel}")
    # The balance covers the reported window (warm-up left out).
    kept = [interval for interval in local if not interval["sum"]["omitted"]]
    carried = [moved for moved, _ in nic_bytes_in_intervals(kept, "tx").values()]
    balance = document["end"]["testio"]["sender"]["nic_balance"]
    expected_uneven = min(carried) < 0.5 * max(carried)
    check(balance["uneven"] == expected_uneven, f"nic_balance {balance} for tx bytes {carried}")

    for line in ("[  NIC] tb1", "[  NIC] tb2", "nic local (client) tb1:", "nic remote (server) tb2:",
                 "nic balance remote (server):", "cores local (client): cpu0"):
        check(line in text, f"the text report lacks {line!r}:\n{text}")


@test
def each_flow_is_named_by_the_link_it_leaves_by():
    connections = 16
    with Testbed("--links", "2", "--rate", "1gbit", "--cc", "reno", "--multipath") as bed:
        with bed.server("-1", bind="198.18.0.2") as server:
            done = bed.run(bed.a, harness.BINARY, "-c", "198.18.0.2", "-p", server.port, str(connections),
                           "-t", "2", "-i", "0.5", "--iface-stats", "--json")
            server.process.wait(20)
        with bed.server("-1", bind="198.18.0.2") as server:
            text = bed.run(bed.a, harness.BINARY, "-c", "198.18.0.2", "-p", server.port, "4", "-t", "1",
                           "-R", "-v").stdout
            server.process.wait(20)
    document = json.loads(done.stdout)
    if SCHEMA:
        harness.schema_checker(SCHEMA)(document)
    sender = document["end"]["testio"]["sender"]
    check("the route to 198.18.0.2 has 2 nexthops: tb1, tb2" in sender["nics_reason"], f"reason {sender}")
    receiver = document["end"]["testio"]["receiver"]
    check("the route to 198.18.0.1 has 2 nexthops: tb1, tb2" in receiver["nics_reason"], f"reason {receiver}")
    for interval in document["intervals"] + document["end"]["testio"]["remote_intervals"]:
        names = [nic["name"] for nic in interval["testio"]["nics"]]
        check(names == ["tb1", "tb2"], f"the default --iface-stats watched {names}")
    per_link = {"tb1": 0, "tb2": 0}
    for stream in document["end"]["streams"]:
        path = stream["sender"]["testio"]["path"]
        check(path["device"] in per_link and path["how"] == "multipath route", f"a flow's path {path}")
        per_link[path["device"]] += stream["sender"]["bytes"]
    flows = sender["paths"]["flows"]
    check(sum(flows.values()) == connections and set(flows) == {"tb1", "tb2"}, f"paths {sender['paths']}")
    # Where each flow's packets were processed on the receiving host: every receiving connection has a CPU.
    cpus = [stream["receiver"]["testio"].get("incoming_cpu") for stream in document["end"]["streams"]]
    check(all(isinstance(cpu, int) and 0 <= cpu < os.cpu_count() for cpu in cpus), f"incoming CPUs {cpus}")
    check(sum(receiver["incoming_cpus"].values()) == connections, f"incoming_cpus {receiver['incoming_cpus']}")
    check(sender["paths"]["uneven"] == (max(flows.values()) - min(flows.values()) >= 2), f"paths {sender['paths']}")
    # What testio says each link carried against what each link's far end received (the server's
    # intervals run to EOF; the client's close before its queues drain).
    headers = ETHERNET + IPV4 + TCP + TIMESTAMPS
    for nic, (moved, packets) in nic_bytes_in_intervals(document["end"]["testio"]["remote_intervals"], "rx").items():
        payload = moved - packets * headers
        print(f"# {nic}: {flows.get(nic, 0)} flows, testio {per_link[nic]} bytes, the link {payload}", flush=True)
        check(abs(payload - per_link[nic]) <= 0.05 * max(per_link[nic], 1_000_000),
              f"{nic}: its flows sent {per_link[nic]}, the link carried {payload}")
    # -R: the server sends, so its paths are the ones shown, each flow's with -v.
    check("paths remote (server): tb" in text or "leaves remote (server) by tb" in text, f"no server paths:\n{text}")
    check(text.count("leaves remote (server) by tb") == 4, f"per-flow lines:\n{text}")
    check(text.count("arrives at local (client) on cpu") == 4 and "incoming cpus local (client): cpu" in text,
          f"no incoming CPUs:\n{text}")


@test
def spread_even_splits_sixteen_flows_eight_and_eight():
    connections = 16
    with Testbed("--links", "2", "--rate", "1gbit", "--cc", "reno", "--multipath") as bed:
        with bed.server("-1", bind="198.18.0.2") as server:
            done = bed.run(bed.a, harness.BINARY, "-c", "198.18.0.2", "-p", server.port, str(connections),
                           "-t", "2", "-i", "0.5", "--spread", "even", "--json")
            server.process.wait(20)
    document = json.loads(done.stdout)
    if SCHEMA:
        harness.schema_checker(SCHEMA)(document)
    check(document["start"]["testio"]["tuning"]["spread_asked"] == {"tb1": 8, "tb2": 8},
          f"asked {document['start']['testio']['tuning']}")
    sender = document["end"]["testio"]["sender"]
    check(sender["paths"]["flows"] == {"tb1": 8, "tb2": 8} and not sender["paths"]["uneven"], f"paths {sender['paths']}")
    # The links' own counters, as the server's side read them, carried half each.
    received = nic_bytes_in_intervals(document["end"]["testio"]["remote_intervals"], "rx")
    total = sum(moved for moved, _ in received.values())
    for nic, (moved, _) in received.items():
        print(f"# spread: {nic} carried {moved / total:.3f} of the bytes; the client measured "
              f"{sender['spread']['measured_shares'][nic]:.3f}", flush=True)
        check(abs(moved / total - 0.5) <= 0.05 * 0.5, f"{nic} carried {moved} of {total}")
        check(abs(sender["spread"]["measured_shares"][nic] - 0.5) <= 0.05 * 0.5, f"spread {sender['spread']}")


@test
def rx_affinity_follow_puts_each_flow_on_its_packets_cpu():
    if (os.cpu_count() or 1) < 2:
        raise Skip("one CPU: nothing to follow")
    with Testbed("--links", "1", "--rps", "3") as bed:
        with bed.server("-1", bind="198.18.1.2") as server:
            done = bed.run(bed.a, harness.BINARY, "-c", "198.18.1.2", "-p", server.port, "8", "-t", "1",
                           "--rx-affinity", "follow", "--json")
            server.process.wait(20)
    document = json.loads(done.stdout)
    if SCHEMA:
        harness.schema_checker(SCHEMA)(document)
    placed = [(stream["receiver"]["testio"].get("worker_cpu"), stream["receiver"]["testio"].get("incoming_cpu"))
              for stream in document["end"]["streams"]]
    print(f"# (worker CPU, incoming CPU) per flow: {placed}", flush=True)
    # RPS steers every packet of a flow, its handshake too, to one CPU: the worker pinned there reads it.
    check(all(worker is not None and worker == incoming for worker, incoming in placed), f"placement {placed}")
    check(document["end"]["testio"]["byte_counts_match"], "counts differ")


def make_bond(bed, ns, address):
    """bond0 over tb1 and tb2 in `ns` (balance-xor, layer3+4), holding `address`/24."""
    made = subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "add", "bond0", "type", "bond", "mode",
                           "balance-xor", "xmit_hash_policy", "layer3+4", "miimon", "100"],
                          capture_output=True, text=True, timeout=30)
    if made.returncode != 0:
        raise Skip("no bonding driver in this kernel: " + made.stderr.strip())
    for link in ("tb1", "tb2"):
        bed.run(ns, "ip", "addr", "flush", "dev", link)
        bed.run(ns, "ip", "link", "set", link, "down")
        bed.run(ns, "ip", "link", "set", link, "master", "bond0")
    bed.run(ns, "ip", "link", "set", "bond0", "up")
    bed.run(ns, "ip", "addr", "add", f"{address}/24", "dev", "bond0")


@test
def a_bonds_member_is_named_for_each_flow():
    connections = 16
    with Testbed("--links", "2", "--rate", "1gbit", "--cc", "reno") as bed:
        make_bond(bed, bed.a, "198.18.100.1")
        make_bond(bed, bed.b, "198.18.100.2")
        time.sleep(0.5)  # miimon sees both members up
        with bed.server("-1", bind="198.18.100.2") as server:
            done = bed.run(bed.a, harness.BINARY, "-c", "198.18.100.2", "-p", server.port, str(connections),
                           "-t", "2", "--iface-stats", "--json")
            server.process.wait(20)
    document = json.loads(done.stdout)
    sender = document["end"]["testio"]["sender"]
    check("bond0 (tb1, tb2)" in sender["nics_reason"], f"reason {sender['nics_reason']}")
    per_member = {"tb1": 0, "tb2": 0}
    for stream in document["end"]["streams"]:
        path = stream["sender"]["testio"]["path"]
        check(path["device"] in per_member and "bond0 layer3+4 hash" in path["how"], f"a flow's path {path}")
        per_member[path["device"]] += stream["sender"]["bytes"]
    headers = ETHERNET + IPV4 + TCP + TIMESTAMPS
    for nic, (moved, packets) in nic_bytes_in_intervals(document["end"]["testio"]["remote_intervals"], "rx").items():
        payload = moved - packets * headers
        check(abs(payload - per_member[nic]) <= 0.05 * max(per_member[nic], 1_000_000),
              f"{nic}: its flows sent {per_member[nic]}, the member carried {payload}")


def nothing_is_left_behind():
    if why_not:
        raise Skip(why_not)
    teardown_all()
    ours = [ns for ns in namespaces() if ns.startswith(PREFIX)]
    check(not ours, f"namespaces left behind: {ours}")


def run_suite(suite):
    """A testbed suite's tests, then the check that none of its namespaces is left; every testbed
    still up is torn down on any exit."""
    atexit.register(teardown_all)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    harness.main([*suite, nothing_is_left_behind])


if __name__ == "__main__":
    run_suite(tests)

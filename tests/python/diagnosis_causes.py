#!/usr/bin/python3
"""Causes of a slow test, each built on purpose, for the "why is it slow" verdict's tests: one
function per cause brings up its own testbed (tools/testbed.sh, through testbed_test.Testbed),
starts testio's server there (and for peer_receiver a slow Python reader), runs the client with
the caller's extra arguments, and returns the client's --json document. Everything it started is
killed and its namespaces deleted on every way out (try/finally and the with blocks).

A Probe passed as probe= watches a run from outside: the sender's `ss -tin`, both processes'
threads' CPU, /proc/stat per CPU, the links' qdiscs and the receiver namespace's TcpExt counters;
probe.summary() condenses them. No assertions here: the suites that use this decide.

Run as a script it measures every cause (or those named) a few times and prints the figures:
  diagnosis_causes.py TESTIO_BINARY [--runs N] [--out FILE] [CAUSE...]
Needs root and ip netns; the loopback case needs neither."""
import atexit
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import testbed_test  # noqa: E402
from harness import Failure, Server  # noqa: E402
from testbed_test import Testbed  # noqa: E402

A_ADDRESS, B_ADDRESS = "198.18.1.1", "198.18.1.2"  # link 1 of a testbed (tools/testbed.sh)
SECONDS = 4
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def configure(binary, script=None):
    """The testio binary and testbed script every cause uses."""
    harness.BINARY = binary
    os.environ["TESTIO_BINARY"] = binary
    testbed_test.SCRIPT = script or os.path.join(HERE, "..", "..", "tools", "testbed.sh")


def in_ns(ns):
    return ("ip", "netns", "exec", ns) if ns else ()


def run(argv, limit=30):
    return subprocess.run(argv, capture_output=True, text=True, timeout=limit, stdin=subprocess.DEVNULL)


def stop(process, limit=10):
    """Ends a child of ours: SIGTERM, then SIGKILL; reaped either way."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(limit)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(limit)


# ---- watching a run ------------------------------------------------------------------------

def _rate_bps(text):
    number, unit = re.fullmatch(r"([\d.]+)([KMG]?)bps", text).groups()
    return float(number) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[unit]


def parse_ss(listing):
    """One dict per connection of `ss -tinH`: its TCP_INFO figures that matter to a verdict."""
    found = []
    for block in re.split(r"\n(?=\S)", listing.strip()):
        if not block.strip():
            continue
        head = block.split()
        # With a state filter ss prints no State column: Recv-Q Send-Q Local Peer.
        entry = {"local": head[2] if len(head) > 2 else "", "app_limited": " app_limited" in block}
        for key, pattern in (("busy_ms", r"busy:(\d+)ms"), ("rwnd_limited_ms", r"rwnd_limited:(\d+)ms"),
                             ("sndbuf_limited_ms", r"sndbuf_limited:(\d+)ms"), ("minrtt_ms", r"minrtt:([\d.]+)"),
                             ("bytes_acked", r"bytes_acked:(\d+)"), ("snd_wnd", r"snd_wnd:(\d+)"),
                             ("rcv_space", r"rcv_space:(\d+)"), ("notsent", r"notsent:(\d+)"),
                             ("cwnd", r"cwnd:(\d+)"), ("unacked", r"unacked:(\d+)")):
            match = re.search(pattern, block)
            if match:
                entry[key] = float(match.group(1))
        match = re.search(r" rtt:([\d.]+)/([\d.]+)", block)
        if match:
            entry["rtt_ms"] = float(match.group(1))
        match = re.search(r"retrans:\d+/(\d+)", block)
        entry["retrans"] = int(match.group(1)) if match else 0
        match = re.search(r"delivery_rate (\S+bps)", block)
        if match:
            entry["delivery_rate_bps"] = _rate_bps(match.group(1))
        match = re.search(r"skmem:\(([^)]*)\)", block)
        if match:
            entry["skmem"] = match.group(1)
        found.append(entry)
    return found


def thread_ticks(pid):
    """{tid: (name, utime+stime ticks, ns waited runnable)} of a process's threads; {} once it is gone."""
    ticks = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return ticks
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        try:  # nanoseconds run and waited on a run queue (ready, not running)
            with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                waited = int(stat.read().split()[1])
        except (OSError, IndexError, ValueError):
            waited = 0
        ticks[tid] = (name, int(fields[11]) + int(fields[12]), waited)
    return ticks


def cpu_ticks():
    """{cpu: (busy, softirq, total, nice)} ticks from /proc/stat (nice: the niced share of busy,
    which on a shared machine is mostly other people's builds)."""
    found = {}
    with open("/proc/stat") as stat:
        for line in stat:
            if re.match(r"cpu\d", line):
                name, *values = line.split()
                user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in values[:8])
                total = user + nice + system + idle + iowait + irq + softirq + steal
                found[name] = (total - idle - iowait, softirq, total, nice)
    return found


def parse_qdiscs(text):
    """[{kind, sent_bytes, dropped, overlimits, backlog_bytes, backlog_packets}] of `tc -s qdisc show`."""
    found = []
    for block in re.split(r"\n(?=qdisc )", text.strip()):
        head = re.match(r"qdisc (\S+) (\S+)", block)
        sent = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)", block)
        backlog = re.search(r"backlog (\d+)([KM]?)b (\d+)p", block)
        if not head or not sent:
            continue
        scale = {"": 1, "K": 1024, "M": 1024 * 1024}[backlog.group(2)] if backlog else 0
        found.append({"kind": head.group(1) + " " + head.group(2), "sent_bytes": int(sent.group(1)),
                      "dropped": int(sent.group(3)), "overlimits": int(sent.group(4)),
                      "backlog_bytes": int(backlog.group(1)) * scale if backlog else 0,
                      "backlog_packets": int(backlog.group(3)) if backlog else 0})
    return found


def tcp_ext(ns):
    """The TcpExt counters of a namespace (/proc/net/netstat as a process in it reads it)."""
    lines = run([*in_ns(ns), "cat", "/proc/net/netstat"]).stdout.splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return dict(zip(names.split()[1:], (int(v) for v in values.split()[1:])))
    return {}


class Probe:
    """Watches one run: call begin() before the client starts, poll() from a thread while it
    runs (watch() does both), end() once it has ended; summary() condenses what was seen."""

    def __init__(self, interval=0.5):
        self.interval = interval

    def begin(self, sender_ns, receiver_ns, port, server_pid, devices=("tb1",)):
        self.sender_ns, self.receiver_ns, self.port = sender_ns, receiver_ns, int(port)
        self.server_pid, self.client_pid = server_pid, None
        self.devices = devices if sender_ns else ()
        self.sender_devices = tuple(devices) + ("ifb1",) if sender_ns else ()
        self.qdiscs_before = self._qdiscs()
        self.tcp_ext_before = tcp_ext(receiver_ns)
        self.cpus_first = cpu_ticks()
        self.server_first = thread_ticks(server_pid)
        self.started = time.monotonic()
        self.samples, self.client_last, self.server_last = [], {}, dict(self.server_first)
        self.cpus_last, self.last_time, self.max_backlog = self.cpus_first, self.started, {}
        self._stop = threading.Event()

    def _qdiscs(self):
        return {f"{side}:{dev}": parse_qdiscs(run([*in_ns(ns), "tc", "-s", "qdisc", "show", "dev", dev]).stdout)
                for side, ns, devices in (("sender", self.sender_ns, self.sender_devices),
                                          ("receiver", self.receiver_ns, self.devices)) for dev in devices}

    def watch(self, client_pid):
        self.client_pid = client_pid
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self._stop.wait(self.interval):
            listing = run([*in_ns(self.sender_ns), "ss", "-tinmH", "state", "established",
                           f"( dport = :{self.port} )"]).stdout
            client, server, cpus = thread_ticks(self.client_pid), thread_ticks(self.server_pid), cpu_ticks()
            if not client:   # the client has ended: what was taken before it is the last word
                return
            self.samples.append((time.monotonic() - self.started, parse_ss(listing)))
            # A thread that has ended keeps the last figure it was seen with.
            self.client_last.update(client)
            self.server_last.update(server)
            self.cpus_last = cpus
            self.last_time = time.monotonic()
            for dev, qdiscs in self._qdiscs().items():
                for q in qdiscs:
                    key = f"{dev} {q['kind']}"
                    self.max_backlog[key] = max(self.max_backlog.get(key, 0), q["backlog_packets"])

    def end(self):
        self._stop.set()
        if getattr(self, "thread", None):
            self.thread.join(30)
        self.qdiscs_after = self._qdiscs()
        self.tcp_ext_after = tcp_ext(self.receiver_ns)

    def summary(self):
        wall = max(self.last_time - self.started, 1e-3)

        def threads(first, last):
            """(name, share of a core it ran, share of the time it waited runnable), busiest first."""
            shares = [(name, (ticks - first.get(tid, (name, 0, 0))[1]) / CLOCK_TICKS / wall,
                       (waited - first.get(tid, (name, 0, 0))[2]) / 1e9 / wall)
                      for tid, (name, ticks, waited) in last.items()]
            return sorted(((name, round(share, 3), round(waited, 3)) for name, share, waited in shares
                           if share > 0.005), key=lambda entry: -entry[1])
        cpus = {}
        for cpu, (busy, softirq, total, nice) in self.cpus_last.items():
            b0, s0, t0, n0 = self.cpus_first[cpu]
            span = max(total - t0, 1)
            cpus[cpu] = {"busy": round((busy - b0) / span, 3), "softirq": round((softirq - s0) / span, 3),
                         "busy_not_niced": round((busy - b0 - (nice - n0)) / span, 3)}
        # The data connections: those that moved at least a tenth of the busiest one (the control
        # connection moves a few KB); per connection its last sample, and over all samples the
        # share in which it was app_limited.
        last, app, rtts, rates = {}, {}, {}, {}
        for _, connections in self.samples:
            for c in connections:
                last[c["local"]] = c
                app.setdefault(c["local"], []).append(c["app_limited"])
                if "rtt_ms" in c:
                    rtts.setdefault(c["local"], []).append(c["rtt_ms"])
                if "delivery_rate_bps" in c:
                    rates.setdefault(c["local"], []).append(c["delivery_rate_bps"])
        most = max([c.get("bytes_acked", 0) for c in last.values()] or [0])
        flows = []
        for local, c in last.items():
            if c.get("bytes_acked", 0) < most / 10 or most == 0:
                continue
            busy = c.get("busy_ms", 0) or 1
            flows.append({"local": local, "busy_ms": c.get("busy_ms", 0),
                          "rwnd_limited_pct": round(100 * c.get("rwnd_limited_ms", 0) / busy, 1),
                          "sndbuf_limited_pct": round(100 * c.get("sndbuf_limited_ms", 0) / busy, 1),
                          "app_limited_share": round(sum(app[local]) / len(app[local]), 2),
                          "retrans": c["retrans"], "rtt_ms": statistics.median(rtts.get(local, [0])),
                          "minrtt_ms": c.get("minrtt_ms"), "snd_wnd": c.get("snd_wnd"),
                          "notsent": c.get("notsent", 0), "cwnd": c.get("cwnd"),
                          "delivery_rate_bps": statistics.median(rates.get(local, [0])),
                          "skmem": c.get("skmem")})
        moved = {name: value - self.tcp_ext_before.get(name, 0) for name, value in self.tcp_ext_after.items()}
        watched = ("TCPRcvQDrop", "TCPBacklogDrop", "PruneCalled", "RcvPruned", "OfoPruned", "TCPOFODrop",
                   "TCPZeroWindowDrop", "ListenOverflows", "TCPFromZeroWindowAdv", "TCPToZeroWindowAdv",
                   "TCPWantZeroWindowAdv", "TCPRcvCollapsed", "TCPOFOQueue")
        qdiscs = {}
        for dev, after in self.qdiscs_after.items():
            before = {q["kind"]: q for q in self.qdiscs_before.get(dev, [])}
            for q in after:
                b = before.get(q["kind"], {"dropped": 0, "sent_bytes": 0})
                qdiscs[f"{dev} {q['kind']}"] = {"dropped": q["dropped"] - b["dropped"],
                                               "sent_bytes": q["sent_bytes"] - b["sent_bytes"],
                                               "max_backlog_packets": self.max_backlog.get(f"{dev} {q['kind']}", 0)}
        return {"flows": flows, "sender_threads": threads({}, self.client_last),
                "receiver_threads": threads(self.server_first, self.server_last), "cpus": cpus,
                "qdiscs": qdiscs, "tcp_ext": {name: moved[name] for name in watched if moved.get(name)},
                "samples": len(self.samples), "wall_s": round(wall, 2)}


# ---- running one cause ---------------------------------------------------------------------

def _client(argv, sender_ns, receiver_ns, port, server_pid, probe, limit):
    """Runs the client (argv, already prefixed), watched by `probe`; its parsed JSON document."""
    if probe:
        probe.begin(sender_ns, receiver_ns, port, server_pid)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL)
    try:
        if probe:
            probe.watch(process.pid)
        out, err = process.communicate(timeout=limit)
    finally:
        stop(process)
        if probe:
            probe.end()
    if process.returncode != 0:
        raise Failure(f"{' '.join(argv)}: exit {process.returncode}: {err[-800:]}")
    return json.loads(out)


def _testbed_test(bed_options, client_args, extra, probe, sender_wrap=(), receiver_setup=(),
                  sender_setup=(), beside=None, server_args=(), limit=60):
    """The common shape: testbed up, setup commands in each namespace, testio -s in NAME-b,
    `beside` (a function of the bed and server returning processes to stop at the end) and the client in
    NAME-a (under `sender_wrap`), then every process stopped and the testbed down."""
    with Testbed(*bed_options) as bed:
        others = []
        try:
            for command in sender_setup:
                bed.run(bed.a, *command)
            for command in receiver_setup:
                bed.run(bed.b, *command)
            with bed.server(*server_args, bind=B_ADDRESS) as server:
                if beside:
                    others = beside(bed, server)
                argv = [*in_ns(bed.a), *sender_wrap, harness.BINARY, "-c", B_ADDRESS, "-p", server.port,
                        "-t", str(SECONDS), "--json", *client_args, *extra]
                return _client(argv, bed.a, bed.b, server.port, server.process.pid, probe, limit)
        finally:
            for process in others:
                stop(process)


def network(extra=(), probe=None, rate="200mbit"):
    """1. A tbf bottleneck on the link, two connections."""
    return _testbed_test(("--rate", rate), ("-P", "2"), extra, probe)


def receive_window(extra=(), probe=None, rmem="4096 16384 16384", rate="10mbit", queue="200ms"):
    """2. The receiver's buffer pinned small: net.ipv4.tcp_rmem in NAME-b caps autotuning (testio's
    -w would pin SO_SNDBUF on the sender too). On a bare veth of some 30 us a 16 KB window still
    carries gigabits, and the sender's CPU, not the window, became the limit (CI: 3 of 5). So the
    path gets a delay as send_buffer's does: NAME-a's ingress queue kept full by a reverse test
    holds this test's ACKs some 13 ms, and 16 KB per round trip is far below what the path carries."""
    return _testbed_test((), (), extra, probe, sender_setup=ingress_queue(rate=rate, queue=queue),
                         receiver_setup=[("sysctl", "-qw", f"net.ipv4.tcp_rmem={rmem}")],
                         server_args=("--max-tests", "2"), beside=reverse_load)


SLOW_READER = r"""
import socket, sys, threading, time
chunk, pause, deadline = int(sys.argv[2]), float(sys.argv[3]), time.monotonic() + float(sys.argv[4])
listener = socket.socket()
listener.bind((sys.argv[1], 0))
listener.listen(8)
print(listener.getsockname()[1], flush=True)
listener.settimeout(1)
def drain(sock):
    sock.settimeout(1)
    while time.monotonic() < deadline:
        try:
            if not sock.recv(chunk):
                break
        except socket.timeout:
            continue
        except OSError:
            break
        time.sleep(pause)
    sock.close()
while time.monotonic() < deadline:
    try:
        sock, _ = listener.accept()
    except socket.timeout:
        continue
    threading.Thread(target=drain, args=(sock,), daemon=True).start()
"""


def peer_receiver(extra=(), probe=None, chunk=4096, pause=0.001):
    """3. A receiver that reads slowly (recv(chunk), then sleeps `pause`), a Python process in
    NAME-b; testio sends to it with --raw over one connection."""
    with Testbed() as bed:
        reader = subprocess.Popen([*in_ns(bed.b), sys.executable, "-c", SLOW_READER, B_ADDRESS, str(chunk),
                                   str(pause), str(SECONDS + 30)], stdout=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL)
        try:
            port = reader.stdout.readline().strip()
            if not port.isdigit():
                raise Failure("the slow reader did not start")
            argv = [*in_ns(bed.a), harness.BINARY, "-c", B_ADDRESS, "-p", port, "-t", str(SECONDS), "--json",
                    "-i", "1", "--raw", "--hash", "none", "1", *extra]
            return _client(argv, bed.a, bed.b, port, reader.pid, probe, 60)
        finally:
            stop(reader)
            reader.stdout.close()


def rate_limit(extra=(), probe=None, bitrate="500M"):
    """4. testio paces itself: -b is per connection (--total-rate for the whole test)."""
    return _testbed_test((), ("-b", bitrate), extra, probe)


def busy_loop(cpu, seconds):
    """A shell spinning on `cpu` for `seconds` (bounded by timeout)."""
    return subprocess.Popen(["timeout", str(seconds), "taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"],
                            stdin=subprocess.DEVNULL)


def sender_cpu(extra=(), probe=None, cpu=0):
    """5. The sender confined to one CPU beside a busy loop there; the receiver unconfined."""
    return _testbed_test((), (), extra, probe, sender_wrap=("taskset", "-c", str(cpu)),
                         beside=lambda bed, server: [busy_loop(cpu, SECONDS + 8)])


def reverse_load(bed, server, seconds=SECONDS + 3):
    """A second test, B to A (-R), that keeps NAME-b's tbf queue full: the first test's ACKs wait
    in it, so its RTT becomes the queue's delay without netem. Waits until its data flows."""
    process = subprocess.Popen([*in_ns(bed.a), harness.BINARY, "-c", B_ADDRESS, "-p", server.port, "-R",
                                "-t", str(seconds), "-i", "0"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        harness.wait_until(lambda: process.poll() is not None or re.search(
            r"bytes_received:(\d{7,})", run([*in_ns(bed.a), "ss", "-tinH", "state", "established",
                                            f"( dport = :{server.port} )"]).stdout), 20, "the reverse load")
        time.sleep(1)  # the queue fills
    except Failure:
        stop(process)
        raise
    return [process]


def ingress_queue(dev="tb1", ifb="ifb1", rate="100mbit", queue="100ms"):
    """tc commands for a tbf on `dev`'s ingress (through an ifb): a bottleneck queue after the
    link, where TCP small queues (which keep a sender's own qdisc to about a millisecond per flow)
    no longer hold it short, so a bulk flow through it fills all of `queue`."""
    return [("ip", "link", "add", ifb, "type", "ifb"), ("ip", "link", "set", ifb, "up"),
            ("tc", "qdisc", "add", "dev", ifb, "root", "tbf", "rate", rate, "burst", "32kb", "latency", queue),
            ("tc", "qdisc", "add", "dev", dev, "handle", "ffff:", "ingress"),
            ("tc", "filter", "add", "dev", dev, "parent", "ffff:", "protocol", "all", "u32", "match", "u32", "0", "0",
             "action", "mirred", "egress",
             "redirect", "dev", ifb)]


def send_buffer(extra=(), probe=None, wmem="4096 8192 8192", rate="10mbit", queue="200ms", load=True):
    """6. A small send buffer: net.ipv4.tcp_wmem in NAME-a caps SO_SNDBUF's autotuning. On a bare
    veth the RTT is microseconds and the one skb TCP may queue past the buffer (64 KB with TSO)
    covers it: nothing shows. So NAME-a's ingress gets a tbf queue (ingress_queue) that a reverse
    test (B to A) keeps full; this test's ACKs wait in it, its RTT becomes about `queue`, and the
    buffer holds far less than rate x RTT. Its own data (A to B) meets no limit. At 10 Mbit/s the
    ACKs waited some 13 ms and tcpi_sndbuf_limited came to about half of busy (at 100 Mbit/s, 5 ms
    and 2%: with cwnd far above the buffer every write leaves at once, and the kernel starts that
    clock only when a transmit empties the write queue while SOCK_NOSPACE is set).
    Tail-loss probes are off in NAME-a (tcp_early_retrans=0): ACKs that wait in a queue of varying
    depth come later than two smoothed RTTs, so the sender probed for losses that never happened
    (7 to 21 retransmissions a run here) and its cwnd shrank to what it had in flight, so about 1
    run in 5 read as a full path. Without the probes 37 of 41 runs named the send buffer, against
    23 of 29 with them. TSO and GSO are off on NAME-a's veth: the kernel lets one packet past a full
    buffer, and at up to 64 KB a packet that let 47-167 KB into flight; without them 34
    of 35 runs named it, against 17 of 20 with them in the same hour. The buffer is 8 KB, not 16:
    16 KB missed 5 of 53 runs (36-43% of the cwnd in flight, past the verdict's 35% for a cwnd
    with room, and the buffer's clock under 30%), 8 KB 1 of 44, a difference within chance
    (docs/diagnosis.md, "Causes built on purpose")."""
    setup = [("sysctl", "-qw", f"net.ipv4.tcp_wmem={wmem}"), ("sysctl", "-qw", "net.ipv4.tcp_early_retrans=0"),
             ("ethtool", "-K", "tb1", "tso", "off", "gso", "off")]
    setup += ingress_queue(rate=rate, queue=queue) if load else []
    return _testbed_test((), (), extra, probe, sender_setup=setup, server_args=("--max-tests", "2"),
                         beside=reverse_load if load else None)


def per_flow_htb(dev="tb1", classes=4, rate="100mbit"):
    """tc commands for an htb that gives each of `classes` classes `rate`, a flow going to class
    (TCP source port mod classes): with --cport, connection i gets port PORT+i, so N <= classes
    connections get N times `rate` and one gets `rate` alone."""
    commands = [("tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "99"),
                ("tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:99", "htb", "rate", "10gbit")]
    for k in range(classes):
        commands += [("tc", "class", "add", "dev", dev, "parent", "1:", "classid", f"1:{10 + k}", "htb",
                      "rate", rate, "ceil", rate, "burst", "64k", "cburst", "64k"),
                     ("tc", "qdisc", "add", "dev", dev, "parent", f"1:{10 + k}", "handle", f"{10 + k}:", "pfifo",
                      "limit", "200"),
                     ("tc", "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                      "match", "ip", "protocol", "6", "0xff", "match", "ip", "sport", str(k), hex(classes - 1),
                      "flowid", f"1:{10 + k}")]
    return commands


def too_few_streams(extra=(), probe=None, connections=1, rate="100mbit"):
    """7. A path where each flow gets `rate` (per_flow_htb on the sender's egress) but more
    flows get more: one connection against four. --cport gives the client consecutive ports
    (the first a multiple of 4), above the ephemeral range."""
    first = harness.free_port_range_outside_the_ephemeral_ones(8)
    first += -first % 4
    return _testbed_test((), ("-P", str(connections), "--cport", f"{first}-{first + 3}"), extra, probe,
                         sender_setup=per_flow_htb(rate=rate))


def loopback(extra=(), probe=None):
    """8. No cause beside the host: four connections over 127.0.0.1, the CPU the limit."""
    with Server() as server:
        argv = [harness.BINARY, "-c", "127.0.0.1", "-p", server.port, "-t", str(SECONDS), "--json", "-P", "4",
                *extra]
        return _client(argv, None, None, server.port, server.process.pid, probe, 60)


CAUSES = {"network": network, "receive_window": receive_window, "peer_receiver": peer_receiver,
          "rate_limit": rate_limit, "sender_cpu": sender_cpu, "send_buffer": send_buffer,
          "too_few_streams": too_few_streams,
          "four_streams": lambda extra=(), probe=None: too_few_streams(extra, probe, connections=4),
          "loopback": loopback}


def goodput_bps(document):
    end = document["end"]
    received = end.get("sum_received", {}).get("bits_per_second")
    return received or end["sum_sent"]["bits_per_second"]


def measure(names, runs):
    results = {}
    for name in names:
        for attempt in range(runs):
            probe = Probe()
            document = CAUSES[name](probe=probe)
            figures = probe.summary()
            figures["goodput_bps"] = goodput_bps(document)
            figures["testio_cpu"] = {side: document["end"].get("testio", {}).get(side, {}).get("cpu", {})
                                     .get("percent_of_core") for side in ("sender", "receiver")}
            results.setdefault(name, []).append(figures)
            print(json.dumps({"cause": name, "run": attempt + 1, **figures}), flush=True)
    return results


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    configure(os.path.abspath(args.pop(0)))
    runs, out = 3, None
    if "--runs" in args:
        at = args.index("--runs")
        runs = int(args[at + 1])
        del args[at:at + 2]
    if "--out" in args:
        at = args.index("--out")
        out = args[at + 1]
        del args[at:at + 2]
    atexit.register(testbed_test.teardown_all)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    results = measure(args or list(CAUSES), runs)
    if out:
        with open(out, "w") as file:
            json.dump(results, file, indent=1)


if __name__ == "__main__":
    main()

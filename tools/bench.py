#!/usr/bin/env python3
"""Side-by-side loopback throughput: testio, iperf3 and iperf (iperf2), in one run.

For each connection count and buffer setting, runs every tool REPEAT times in rotating order
(so drift on a shared machine hits all tools alike), and prints the median Gbit/s of each tool
and testio's ratio to each. Traffic goes to 127.0.0.1 only; every run is bounded by -t.

  tools/bench.py                      # 1 2 8 32 connections, default and 2 MiB buffers
  tools/bench.py --connections 2 32 --seconds 5 --repeat 3 --markdown
  tools/bench.py --recv-modes --markdown   # testio alone: receive modes, Gbit/s and CPU per GB
  tools/bench.py --io-paths --rate 4G --markdown  # every engine x receive mode at one total rate:
                                                  # Gbit/s and CPU-seconds per GB on each side
  tools/bench.py --connections 2 32 --baseline /tmp/testio-before   # a change's before and after,
                                                  # taking turns with the others in the same rounds
  tools/bench.py --connections 1 8 32 128 512 1024 --buffers default --plot docs/scale.png
                                                  # the scale curve: each server's CPU per GB and
                                                  # memory per connection too
  tools/bench.py --peers --iperf3 PATH --iperf2 PATH --neper PATH
                                                  # beside the newest iperf3, iperf 2 and neper's
                                                  # tcp_stream (and Debian's iperf3 and iperf):
                                                  # defaults, one call size, CPU per GB paced
                                                  # (tools/bench_peers.py; docs/benchmarks.md)

The tools table runs testio three times: its defaults, --recv-mode trunc, and --no-lowat (the
kernel's SO_RCVLOWAT/TCP_NOTSENT_LOWAT, as the other tools leave them).
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    """Whether a TCP socket listens on `port` (any address, IPv4 or IPv6), from /proc/net/tcp and
    tcp6: no connection, so a server that serves one test (iperf3 -s -1, iperf -s -P N, neper)
    does not take the probe for its client."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows)  # the header
                for row in rows:
                    fields = row.split()  # sl local_address rem_address st ...; st 0A is LISTEN
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except FileNotFoundError:  # no IPv6
            continue
    return False


def wait_listening(port: int, limit: float = 10.0, process=None) -> None:
    """Until something listens on `port`; fails after `limit`, or at once when `process` (the
    server, if given) has exited."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode}) before listening on port {port}")
        if listening(port):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def server_cpu_seconds(pid):
    """User + system CPU the process has used, every thread's."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class PeakRss:
    """The server's largest VmRSS while a client runs, polled every 20 ms on a thread of its own."""

    def __init__(self, pid):
        self.pid, self.peak, self.done = pid, resident_kib(pid), threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)

    def poll(self):
        while not self.done.wait(0.02):
            self.peak = max(self.peak, resident_kib(self.pid))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.done.set()
        self.thread.join()


class Tool:
    """A server started once and a client run per sample. Each sample is the receiver's Gbit/s,
    the server's (the receiver's) CPU-seconds per GB and its peak RSS above what it held before."""

    def __init__(self, name, server_argv, client, max_connections=None):
        self.name, self.server_argv, self.client = name, server_argv, client
        self.max_connections = max_connections
        self.port = free_port()
        self.server = None

    def start(self):
        argv = [a.replace("PORT", str(self.port)) for a in self.server_argv]
        self.server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self.port)

    def stop(self):
        if self.server:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()

    def runs(self, connections):
        return self.max_connections is None or connections <= self.max_connections

    def run(self, connections, seconds, buffer):
        argv = self.client(self.port, connections, seconds, buffer)
        pid = self.server.pid
        cpu_before, rss_before = server_cpu_seconds(pid), resident_kib(pid)
        with PeakRss(pid) as rss:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} failed: {' '.join(argv)}\n{done.stderr}")
        gbps = self.parse(done.stdout)
        gigabytes = gbps * seconds / 8
        cpu_per_gb = (server_cpu_seconds(pid) - cpu_before) / gigabytes if gigabytes else 0
        return gbps, cpu_per_gb, max(0, rss.peak - rss_before)


def testio_client(binary, *extra):
    def argv(port, n, seconds, buffer):
        args = [binary, "-c", "127.0.0.1", "-p", str(port), str(n), "-t", str(seconds), *extra]
        return args + (["-l", buffer] if buffer else [])
    return argv


def parse_testio(out):
    for line in out.splitlines():
        if line.startswith("[  SUM] receiver"):
            fields = line.split()
            return int(fields[3]) * 8 / float(fields[4]) / 1e9
    raise RuntimeError("no receiver sum in testio's report:\n" + out)


IPERF3_MAX_BLOCK = "1M"  # iperf3 3.12 refuses -l above 1 MiB ("block size too large")


def iperf3_client(port, n, seconds, buffer):
    if buffer and buffer.upper() in ("2M", "2MIB", "2097152"):
        buffer = IPERF3_MAX_BLOCK
    return ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-P", str(n), "-t", str(seconds), "-J"] + (
        ["-l", buffer] if buffer else [])


def parse_iperf3(out):
    return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e9


def iperf2_client(port, n, seconds, buffer):
    return ["iperf", "-c", "127.0.0.1", "-p", str(port), "-P", str(n), "-t", str(seconds), "-y", "C"] + (
        ["-l", buffer] if buffer else [])


def parse_iperf2(out):
    # CSV: ...,id,interval,bytes,bits_per_second. A SUM line has id -1; with -P 1 there is none.
    rows = [line.split(",") for line in out.splitlines() if line.count(",") >= 8]
    sums = [r for r in rows if r[5] == "-1"]
    if sums:
        return float(sums[-1][8]) / 1e9
    return sum(float(r[8]) for r in rows) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, nargs="+",
                        help="connection counts (default 1 2 8 32; with --peers 1 8 32 128)")
    parser.add_argument("--buffers", nargs="+", default=["default", "2M"],
                        help="'default' leaves each tool's own default (testio 2 MiB, iperf3 128 KiB, iperf 128 KiB)")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--testio", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--recv-modes", action="store_true",
                        help="compare testio's receive modes instead of comparing tools")
    parser.add_argument("--io-paths", action="store_true",
                        help="compare testio's engines and receive modes at one total rate (--rate)")
    parser.add_argument("--rate", default="4G", help="--io-paths: the total rate every run is paced to")
    parser.add_argument("--baseline", help="another testio binary (the build before a change) run beside the rest")
    parser.add_argument("--plot", help="also write Gbit/s and CPU-seconds per GB against connections to this PNG")
    parser.add_argument("--peers", action="store_true",
                        help="compare with the newest peers built from source (and Debian's iperf3 and iperf): "
                        "each tool's defaults, one call size for all, CPU per GB at a paced load")
    parser.add_argument("--iperf3", default=os.environ.get("TESTIO_BENCH_IPERF3"), metavar="PATH",
                        help="--peers: the newest iperf3 (default $TESTIO_BENCH_IPERF3)")
    parser.add_argument("--iperf2", default=os.environ.get("TESTIO_BENCH_IPERF2"), metavar="PATH",
                        help="--peers: the newest iperf 2 (default $TESTIO_BENCH_IPERF2)")
    parser.add_argument("--neper", default=os.environ.get("TESTIO_BENCH_NEPER"), metavar="PATH",
                        help="--peers: neper's tcp_stream (default $TESTIO_BENCH_NEPER)")
    parser.add_argument("--call-size", default="1M", help="--peers: the call size all tools use in part (b)")
    parser.add_argument("--paced", default="8x1.25G",
                        help="--peers: connections x bits/s each for the CPU per GB of parts (c) and (d)")
    parser.add_argument("--parts", default="abcd",
                        help="--peers: which parts to run: (a) defaults, (b) one call size, (c) CPU per GB, "
                        "(d) the receive path per engine and receive mode")
    args = parser.parse_args()
    if args.repeat < 1 or args.repeat > 20 or args.seconds < 1 or args.seconds > 60:
        parser.error("--repeat must be 1..20 and --seconds 1..60")
    if args.peers:
        if not os.access(args.testio, os.X_OK):
            sys.exit("bench needs testio (tools/build.sh)")
        import bench_peers  # testio and the peers built from source; it uses this file's parsers
        bench_peers.peers_table(args)
        return
    args.connections = args.connections or [1, 2, 8, 32]
    for needed in (args.testio, shutil.which("iperf3"), shutil.which("iperf")):
        if not needed or not os.access(needed, os.X_OK):
            sys.exit("bench needs testio (tools/build.sh), iperf3 and iperf (tools/install-deps.sh)")
    if args.recv_modes or args.io_paths:
        import bench_paths  # testio alone; it uses this file's Tool
        (bench_paths.recv_mode_table if args.recv_modes else bench_paths.io_path_table)(args)
        return

    tool_list = tools_for(args)
    rows = measure(tool_list, args)
    print_tables(rows, [tool.name for tool in tool_list], args)
    if args.plot:
        plot(rows, args.plot)


def tools_for(args):
    serve = ["-s", "-B", "127.0.0.1", "-p", "PORT"]
    tool_list = [
        Tool("testio", [args.testio, *serve], testio_client(args.testio)),
        Tool("testio trunc", [args.testio, *serve], testio_client(args.testio, "--recv-mode", "trunc")),
        Tool("testio --no-lowat", [args.testio, *serve], testio_client(args.testio, "--no-lowat")),
        # iperf3 3.12 refuses more than 128 streams.
        Tool("iperf3", ["iperf3", *serve], iperf3_client, max_connections=128),
        Tool("iperf2", ["iperf", *serve], iperf2_client),
    ]
    for tool, parse in zip(tool_list, (parse_testio, parse_testio, parse_testio, parse_iperf3, parse_iperf2)):
        tool.parse = parse
    if args.baseline:
        baseline = Tool("baseline", [args.baseline, *serve], testio_client(args.baseline))
        baseline.parse = parse_testio
        tool_list.append(baseline)
    return tool_list


def measure(tool_list, args):
    """Per buffer and connection count, each tool's median (Gbit/s, CPU-s/GB, KiB above idle)."""
    rows = []
    try:
        for tool in tool_list:
            tool.start()
        for buffer in args.buffers:
            for n in args.connections:
                running = [tool for tool in tool_list if tool.runs(n)]
                samples = {tool.name: [] for tool in running}
                for round_index in range(args.repeat):
                    shift = round_index % len(running)
                    for tool in running[shift:] + running[:shift]:
                        samples[tool.name].append(tool.run(n, args.seconds, None if buffer == "default" else buffer))
                medians = {name: tuple(statistics.median(v[i] for v in values) for i in range(3))
                           for name, values in samples.items()}
                rows.append((buffer, n, medians))
                print(f"# buffer {buffer}, {n} connections: " +
                      ", ".join(f"{k} {v[0]:.1f}" for k, v in medians.items()), file=sys.stderr, flush=True)
    finally:
        for tool in tool_list:
            tool.stop()
    return rows


RATIOS = [("testio", "iperf3"), ("testio", "iperf2"), ("testio trunc", "iperf2"), ("testio --no-lowat", "iperf2"),
          ("baseline", "iperf2"), ("testio", "baseline")]


def print_tables(rows, names, args):
    """Gbit/s and ratios; then each server's CPU per GB and memory per connection."""
    ratios = [(a, b) for a, b in RATIOS if a in names and b in names]
    def cell(value, form):
        return form.format(value) if value is not None else "-"
    header = ["buffer", "connections"] + [f"{name} Gbit/s" for name in names] + [f"{a}/{b}" for a, b in ratios]
    table = []
    for buffer, n, m in rows:
        rate = {name: m[name][0] if name in m else None for name in names}
        table.append([buffer, str(n)] + [cell(rate[name], "{:.1f}") for name in names] +
                     [cell(rate[a] / rate[b] if rate[a] and rate[b] else None, "{:.2f}") for a, b in ratios])
    emit(header, table, args.markdown)
    header = ["connections"] + [f"{name} CPU-s/GB" for name in names] + [f"{name} KiB/conn" for name in names]
    table = [[str(n)] + [cell(m[name][1] if name in m else None, "{:.3f}") for name in names] +
             [cell(m[name][2] / n if name in m else None, "{:.0f}") for name in names] for _, n, m in rows]
    print()
    emit(header, table, args.markdown)
    print("(iperf3 runs with -l 1M where the others use 2M: its largest block size; it serves at most 128 streams.)")
    print(f"(median of {args.repeat} runs of {args.seconds} s each; Gbit/s receiver-side for testio and iperf3, "
          "sender-side for iperf2; CPU-s/GB and KiB/conn of the server, which receives: its CPU over the bytes, "
          "and its peak RSS above what it held before the run, per connection)")


def emit(header, table, markdown):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for row in table:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(header[i]), *(len(row[i]) for row in table)) for i in range(len(header))]
    for row in [header] + table:
        print("  ".join(value.rjust(width) for value, width in zip(row, widths)))


def plot(rows, path):
    """Gbit/s and the receiver's CPU-seconds per GB against connections, a line per tool."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        sys.exit("--plot needs matplotlib: apt-get install python3-matplotlib")
    figure, (rates, costs) = pyplot.subplots(1, 2, figsize=(11, 4.2))
    names = sorted({name for _, _, m in rows for name in m}, key=lambda name: (name != "testio", name))
    for name in names:
        points = [(n, m[name]) for _, n, m in rows if name in m]
        counts = [n for n, _ in points]
        rates.plot(counts, [v[0] for _, v in points], marker="o", label=name)
        costs.plot(counts, [v[1] for _, v in points], marker="o", label=name)
    for axes, title in ((rates, "receiver Gbit/s"), (costs, "receiver CPU-seconds per GB")):
        axes.set_xscale("log", base=2)
        axes.set_xlabel("connections")
        axes.set_title(title)
        axes.grid(True, alpha=0.3)
        axes.set_ylim(bottom=0)
    rates.legend(fontsize=8)
    figure.suptitle("loopback, 2 cores: testio, iperf2 and iperf3 (medians)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"(plot written to {path})")


if __name__ == "__main__":
    main()

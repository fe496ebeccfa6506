#!/usr/bin/env python3
"""Side-by-side loopback throughput: testio, iperf3 and iperf (iperf2), in one run.

For each connection count and buffer setting, runs every tool REPEAT times in rotating order
(so drift on a shared machine hits all tools alike), and prints the median Gbit/s of each tool
and testio's ratio to each. Traffic goes to 127.0.0.1 only; every run is bounded by -t.

  tools/bench.py                      # 1 2 8 32 connections, default and 2 MiB buffers
  tools/bench.py --connections 2 32 --seconds 5 --repeat 3 --markdown
  tools/bench.py --recv-modes --markdown   # testio alone: receive modes, Gbit/s and CPU per GB
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_listening(port: int, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        # testio's server logs and drops a connection that sends nothing; harmless here.
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


class Tool:
    def __init__(self, name, server_argv, client):
        self.name, self.server_argv, self.client = name, server_argv, client
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

    def run(self, connections, seconds, buffer):
        argv = self.client(self.port, connections, seconds, buffer)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} failed: {' '.join(argv)}\n{done.stderr}")
        return self.parse(done.stdout)


def testio_client(binary):
    def argv(port, n, seconds, buffer):
        args = [binary, "-c", "127.0.0.1", "-p", str(port), str(n), "-t", str(seconds)]
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


def recv_mode_table(args):
    """testio alone, each receive mode in turn (rotating order), reading its own JSON: receiver
    Gbit/s, receive calls, bytes per call and the receiver's CPU-seconds per GB."""
    modes = ["recv", "recv_into", "trunc"]
    server = Tool("testio", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"], None)
    rows = []
    server.start()
    try:
        for n in args.connections:
            samples = {mode: [] for mode in modes}
            for round_index in range(args.repeat):
                for mode in modes[round_index % 3:] + modes[:round_index % 3]:
                    argv = [args.testio, "-c", "127.0.0.1", "-p", str(server.port), str(n), "-t", str(args.seconds),
                            "--recv-mode", mode, "--json"]
                    done = subprocess.run(argv, capture_output=True, text=True, timeout=args.seconds + 60)
                    if done.returncode != 0:
                        raise RuntimeError(f"testio failed: {done.stderr}")
                    end = json.loads(done.stdout)["end"]
                    receiver = end["testio"]["receiver"]
                    samples[mode].append((end["sum_received"]["bits_per_second"] / 1e9,
                                          receiver["cpu"]["cpu_seconds_per_gb"], receiver["bytes_per_call"]))
            for mode in modes:
                rows.append((n, mode, *(statistics.median(s[i] for s in samples[mode]) for i in range(3))))
                print(f"# {n} connections, {mode}: {rows[-1][2]:.1f} Gbit/s", file=sys.stderr, flush=True)
    finally:
        server.stop()
    if args.markdown:
        print("| connections | recv mode | Gbit/s | receiver CPU-s per GB | bytes per receive call |")
        print("|---:|---|---:|---:|---:|")
        for n, mode, rate, cpu, per_call in rows:
            print(f"| {n} | {mode} | {rate:.1f} | {cpu:.3f} | {per_call:,.0f} |")
    else:
        for n, mode, rate, cpu, per_call in rows:
            print(f"{n:>5} {mode:>10} {rate:8.1f} Gbit/s {cpu:8.3f} CPU-s/GB {per_call:12,.0f} B/call")
    print(f"(median of {args.repeat} runs of {args.seconds} s; CPU is the server process, which only receives)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 2, 8, 32])
    parser.add_argument("--buffers", nargs="+", default=["default", "2M"],
                        help="'default' leaves each tool's own default (testio 2 MiB, iperf3 128 KiB, iperf 128 KiB)")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--testio", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--recv-modes", action="store_true",
                        help="compare testio's receive modes instead of comparing tools")
    args = parser.parse_args()
    if args.repeat < 1 or args.repeat > 20 or args.seconds < 1 or args.seconds > 60:
        parser.error("--repeat must be 1..20 and --seconds 1..60")
    for needed in (args.testio, shutil.which("iperf3"), shutil.which("iperf")):
        if not needed or not os.access(needed, os.X_OK):
            sys.exit("bench needs testio (tools/build.sh), iperf3 and iperf (tools/install-deps.sh)")
    if args.recv_modes:
        recv_mode_table(args)
        return

    tool_list = [
        Tool("testio", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"], testio_client(args.testio)),
        Tool("iperf3", ["iperf3", "-s", "-B", "127.0.0.1", "-p", "PORT"], iperf3_client),
        Tool("iperf2", ["iperf", "-s", "-B", "127.0.0.1", "-p", "PORT"], iperf2_client),
    ]
    tool_list[0].parse, tool_list[1].parse, tool_list[2].parse = parse_testio, parse_iperf3, parse_iperf2
    rows = []
    try:
        for tool in tool_list:
            tool.start()
        for buffer in args.buffers:
            for n in args.connections:
                samples = {tool.name: [] for tool in tool_list}
                for round_index in range(args.repeat):
                    order = tool_list[round_index % 3:] + tool_list[:round_index % 3]
                    for tool in order:
                        samples[tool.name].append(tool.run(n, args.seconds, None if buffer == "default" else buffer))
                medians = {name: statistics.median(values) for name, values in samples.items()}
                rows.append((buffer, n, medians, samples))
                print(f"# buffer {buffer}, {n} connections: " +
                      ", ".join(f"{k} {v:.1f}" for k, v in medians.items()), file=sys.stderr, flush=True)
    finally:
        for tool in tool_list:
            tool.stop()

    if args.markdown:
        print("| buffer | connections | testio Gbit/s | iperf3 Gbit/s | iperf2 Gbit/s | testio/iperf3 | testio/iperf2 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for buffer, n, m, _ in rows:
            print(f"| {buffer} | {n} | {m['testio']:.1f} | {m['iperf3']:.1f} | {m['iperf2']:.1f} | "
                  f"{m['testio'] / m['iperf3']:.2f} | {m['testio'] / m['iperf2']:.2f} |")
    else:
        print(f"{'buffer':>8} {'conns':>5} {'testio':>8} {'iperf3':>8} {'iperf2':>8} {'/iperf3':>8} {'/iperf2':>8}")
        for buffer, n, m, _ in rows:
            print(f"{buffer:>8} {n:>5} {m['testio']:8.1f} {m['iperf3']:8.1f} {m['iperf2']:8.1f} "
                  f"{m['testio'] / m['iperf3']:8.2f} {m['testio'] / m['iperf2']:8.2f}")
    print("(iperf3 runs with -l 1M where the others use 2M: its largest block size.)")
    print(f"(median Gbit/s of {args.repeat} runs of {args.seconds} s each; receiver-side for testio and iperf3, "
          "sender-side for iperf2)")


if __name__ == "__main__":
    main()

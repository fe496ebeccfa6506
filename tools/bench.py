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


ENGINES = ["asio", "threads", "uring"]
RECV_MODES = ["recv", "recv_into", "trunc", "splice", "mmap"]


def refusal(binary, *options):
    """testio's one-sentence refusal of these options (exit 2), or None when it runs them."""
    done = subprocess.run([binary, "-c", "127.0.0.1", "-p", "1", "-n", "1K", *options], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    return done.stderr.strip().removeprefix("testio: ") if done.returncode == 2 else None


def io_path_table(args):
    """testio alone: each engine with each receive mode, every connection paced so the total is
    --rate, in rotating order. At an equal rate the CPU-seconds per GB of each side compare the
    I/O paths (recv vs recv_into, blocking threads vs event loops vs io_uring) fairly; the calls
    and bytes per call show how each moved the data."""
    total_bps = parse_rate(args.rate)
    combos = []
    for engine in ENGINES:
        for mode in RECV_MODES:
            why = refusal(args.testio, "--engine", engine, "--recv-mode", mode)
            if why:
                print(f"# {engine} + {mode}: refused ({why})", file=sys.stderr, flush=True)
            else:
                combos.append((engine, mode))
    server = Tool("testio", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"], None)
    rows = []
    server.start()
    try:
        for n in args.connections:
            per_connection = f"{total_bps / n:.0f}"
            samples = {combo: [] for combo in combos}
            for round_index in range(args.repeat):
                shift = round_index % len(combos)
                for engine, mode in combos[shift:] + combos[:shift]:
                    argv = [args.testio, "-c", "127.0.0.1", "-p", str(server.port), str(n), "-t", str(args.seconds),
                            "-b", per_connection, "--engine", engine, "--recv-mode", mode, "--json"]
                    done = subprocess.run(argv, capture_output=True, text=True, timeout=args.seconds + 60)
                    if done.returncode != 0:
                        raise RuntimeError(f"testio failed: {' '.join(argv)}\n{done.stderr}")
                    end = json.loads(done.stdout)["end"]
                    sender, receiver = end["testio"]["sender"], end["testio"]["receiver"]
                    samples[(engine, mode)].append((
                        end["sum_received"]["bits_per_second"] / 1e9, sender["cpu"]["cpu_seconds_per_gb"],
                        receiver["cpu"]["cpu_seconds_per_gb"], sender["bytes_per_call"], receiver["bytes_per_call"]))
            for combo in combos:
                rows.append((n, *combo, *(statistics.median(s[i] for s in samples[combo]) for i in range(5))))
                print(f"# {n} connections, {combo[0]} {combo[1]}: {rows[-1][3]:.2f} Gbit/s, "
                      f"{rows[-1][4]:.3f}/{rows[-1][5]:.3f} CPU-s/GB", file=sys.stderr, flush=True)
    finally:
        server.stop()
    header = ("connections", "engine", "recv mode", "Gbit/s", "sender CPU-s/GB", "receiver CPU-s/GB",
              "bytes/send call", "bytes/recv call")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|---:|---|---|---:|---:|---:|---:|---:|")
        for n, engine, mode, rate, send_cpu, recv_cpu, send_call, recv_call in rows:
            print(f"| {n} | {engine} | {mode} | {rate:.2f} | {send_cpu:.3f} | {recv_cpu:.3f} | "
                  f"{send_call:,.0f} | {recv_call:,.0f} |")
    else:
        for n, engine, mode, rate, send_cpu, recv_cpu, send_call, recv_call in rows:
            print(f"{n:>5} {engine:>8} {mode:>10} {rate:7.2f} Gbit/s  CPU-s/GB send {send_cpu:6.3f} "
                  f"recv {recv_cpu:6.3f}  B/call {send_call:10,.0f} {recv_call:10,.0f}")
    print(f"(median of {args.repeat} runs of {args.seconds} s, every connection paced with -b so the total is "
          f"{args.rate}; the client process only sends and the server only receives)")


def parse_rate(text):
    units = {"k": 1e3, "m": 1e6, "g": 1e9}
    text = text.strip().lower()
    if text[-1:] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


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
    parser.add_argument("--io-paths", action="store_true",
                        help="compare testio's engines and receive modes at one total rate (--rate)")
    parser.add_argument("--rate", default="4G", help="--io-paths: the total rate every run is paced to")
    parser.add_argument("--baseline", help="another testio binary (the build before a change) run beside the rest")
    args = parser.parse_args()
    if args.repeat < 1 or args.repeat > 20 or args.seconds < 1 or args.seconds > 60:
        parser.error("--repeat must be 1..20 and --seconds 1..60")
    for needed in (args.testio, shutil.which("iperf3"), shutil.which("iperf")):
        if not needed or not os.access(needed, os.X_OK):
            sys.exit("bench needs testio (tools/build.sh), iperf3 and iperf (tools/install-deps.sh)")
    if args.recv_modes:
        recv_mode_table(args)
        return
    if args.io_paths:
        io_path_table(args)
        return

    testio_trunc = Tool("testio trunc", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"],
                        testio_client(args.testio, "--recv-mode", "trunc"))
    testio_kernel_lowat = Tool("testio --no-lowat", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"],
                               testio_client(args.testio, "--no-lowat"))
    tool_list = [
        Tool("testio", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"], testio_client(args.testio)),
        testio_trunc,
        testio_kernel_lowat,
        Tool("iperf3", ["iperf3", "-s", "-B", "127.0.0.1", "-p", "PORT"], iperf3_client),
        Tool("iperf2", ["iperf", "-s", "-B", "127.0.0.1", "-p", "PORT"], iperf2_client),
    ]
    for tool, parse in zip(tool_list, (parse_testio, parse_testio, parse_testio, parse_iperf3, parse_iperf2)):
        tool.parse = parse
    if args.baseline:
        baseline = Tool("baseline", [args.baseline, "-s", "-B", "127.0.0.1", "-p", "PORT"], testio_client(args.baseline))
        baseline.parse = parse_testio
        tool_list.append(baseline)
    rows = []
    try:
        for tool in tool_list:
            tool.start()
        for buffer in args.buffers:
            for n in args.connections:
                samples = {tool.name: [] for tool in tool_list}
                for round_index in range(args.repeat):
                    shift = round_index % len(tool_list)
                    for tool in tool_list[shift:] + tool_list[:shift]:
                        samples[tool.name].append(tool.run(n, args.seconds, None if buffer == "default" else buffer))
                medians = {name: statistics.median(values) for name, values in samples.items()}
                rows.append((buffer, n, medians, samples))
                print(f"# buffer {buffer}, {n} connections: " +
                      ", ".join(f"{k} {v:.1f}" for k, v in medians.items()), file=sys.stderr, flush=True)
    finally:
        for tool in tool_list:
            tool.stop()

    if args.markdown:
        extra = " baseline Gbit/s | baseline/iperf2 | testio/baseline |" if args.baseline else ""
        print("| buffer | connections | testio Gbit/s | testio trunc | testio --no-lowat | iperf3 Gbit/s | "
              "iperf2 Gbit/s | testio/iperf3 | testio/iperf2 | trunc/iperf2 | --no-lowat/iperf2 |" + extra)
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if args.baseline else ""))
        for buffer, n, m, _ in rows:
            cells = (f" {m['baseline']:.1f} | {m['baseline'] / m['iperf2']:.2f} | {m['testio'] / m['baseline']:.2f} |"
                     if args.baseline else "")
            print(f"| {buffer} | {n} | {m['testio']:.1f} | {m['testio trunc']:.1f} | {m['testio --no-lowat']:.1f} | "
                  f"{m['iperf3']:.1f} | {m['iperf2']:.1f} | {m['testio'] / m['iperf3']:.2f} | "
                  f"{m['testio'] / m['iperf2']:.2f} | {m['testio trunc'] / m['iperf2']:.2f} | "
                  f"{m['testio --no-lowat'] / m['iperf2']:.2f} |" + cells)
    else:
        print(f"{'buffer':>8} {'conns':>5} {'testio':>8} {'trunc':>8} {'nolowat':>8} {'iperf3':>8} {'iperf2':>8} "
              f"{'/iperf3':>8} {'/iperf2':>8} {'trunc/i2':>8} {'nolo/i2':>8}" +
              (f" {'baseline':>8} {'base/i2':>8} {'/base':>8}" if args.baseline else ""))
        for buffer, n, m, _ in rows:
            cells = (f" {m['baseline']:8.1f} {m['baseline'] / m['iperf2']:8.2f} {m['testio'] / m['baseline']:8.2f}"
                     if args.baseline else "")
            print(f"{buffer:>8} {n:>5} {m['testio']:8.1f} {m['testio trunc']:8.1f} {m['testio --no-lowat']:8.1f} "
                  f"{m['iperf3']:8.1f} {m['iperf2']:8.1f} {m['testio'] / m['iperf3']:8.2f} "
                  f"{m['testio'] / m['iperf2']:8.2f} {m['testio trunc'] / m['iperf2']:8.2f} "
                  f"{m['testio --no-lowat'] / m['iperf2']:8.2f}" + cells)
    print("(iperf3 runs with -l 1M where the others use 2M: its largest block size.)")
    print(f"(median Gbit/s of {args.repeat} runs of {args.seconds} s each; receiver-side for testio and iperf3, "
          "sender-side for iperf2)")


if __name__ == "__main__":
    main()

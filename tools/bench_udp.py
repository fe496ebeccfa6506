#!/usr/bin/env python3
"""Side-by-side unpaced UDP on loopback: testio -u (its defaults, and with each fast path off)
beside iperf3 -u and iperf (iperf2) -u, in one run, the tools taking turns each round.

For each flow count, every tool runs REPEAT times unpaced (-b 0) with 1448-byte datagrams; the
table gives the medians of the receiver's goodput, its datagrams per second, the loss, and the
CPU-seconds each side spent per GB received (its processes' user + system time, from /proc and
getrusage). Traffic goes to 127.0.0.1 only; every run is bounded by -t.

  tools/bench_udp.py --flows 1 8 --seconds 3 --repeat 3 --markdown
"""
import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATAGRAM = 1448


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Tool:
    def __init__(self, name, server, client, parse):
        self.name, self.server, self.client, self.parse = name, server, client, parse


def testio_tool(binary, name, extra):
    def client(port, flows, seconds):
        return [binary, "-c", "127.0.0.1", "-p", str(port), "-u", "-b", "0", "-P", str(flows), "-t", str(seconds),
                "--json", *extra]

    def parse(out):
        end = json.loads(out)["end"]
        received = end["sum_received"]
        return received["bytes"], received["seconds"], end["testio"]["udp"]["received_datagrams"], end["sum"]["lost_percent"]
    return Tool(name, lambda port: [binary, "-s", "-p", str(port)], client, parse)


def iperf3_tool():
    def client(port, flows, seconds):
        return ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-u", "-b", "0", "-l", str(DATAGRAM), "-P", str(flows),
                "-t", str(seconds), "-J"]

    def parse(out):
        end = json.loads(out)["end"]
        received = end["sum_received"]
        return received["bytes"], received["seconds"], received["bytes"] // DATAGRAM, end["sum"]["lost_percent"]
    return Tool("iperf3 3.12", lambda port: ["iperf3", "-s", "-p", str(port)], client, parse)


def iperf2_tool():
    def client(port, flows, seconds):
        return ["iperf", "-c", "127.0.0.1", "-p", str(port), "-u", "-b", "100G", "-l", str(DATAGRAM), "-P", str(flows),
                "-t", str(seconds), "-f", "m"]

    def parse(out):
        # Each flow's server report: "[  1] 0.0000-2.0000 sec  642 MBytes  2692 Mbits/sec  0.000 ms 286358/751125 (38%)"
        total_bytes, lost, sent, seconds = 0.0, 0, 0, 0.0
        lines = out.splitlines()
        for k, line in enumerate(lines):
            if "Server Report" not in line:
                continue
            for report in lines[k + 1:k + 3]:
                match = re.search(r"([\d.]+)-\s*([\d.]+) sec\s+([\d.]+) MBytes.*?(\d+)/\s*(\d+)", report)
                if match:
                    seconds = max(seconds, float(match.group(2)) - float(match.group(1)))
                    total_bytes += float(match.group(3)) * 1024 * 1024
                    lost += int(match.group(4))
                    sent += int(match.group(5))
                    break
        return total_bytes, seconds, sent - lost, 100.0 * lost / sent if sent else 0.0
    return Tool("iperf2 2.1.8", lambda port: ["iperf", "-s", "-u", "-p", str(port)], client, parse)


def run_once(tool, flows, seconds):
    port = free_port()
    server = subprocess.Popen(tool.server(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        server_before, client_before = cpu_seconds(server.pid), children_cpu()
        done = subprocess.run(tool.client(port, flows, seconds), capture_output=True, text=True,
                              timeout=seconds + 60, stdin=subprocess.DEVNULL)
        client_cpu = children_cpu() - client_before
        time.sleep(0.3)  # the server's last report
        server_cpu = cpu_seconds(server.pid) - server_before
    finally:
        server.terminate()
        server.wait(10)
    if done.returncode != 0:
        raise RuntimeError(f"{tool.name}: exit {done.returncode}: {done.stderr[-300:]}")
    received_bytes, elapsed, datagrams, lost = tool.parse(done.stdout)
    gigabytes = received_bytes / 1e9
    return {"gbps": received_bytes * 8 / elapsed / 1e9 if elapsed else 0,
            "kdps": datagrams / elapsed / 1e3 if elapsed else 0, "lost": lost,
            "client_cpu_per_gb": client_cpu / gigabytes if gigabytes else 0,
            "server_cpu_per_gb": server_cpu / gigabytes if gigabytes else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--flows", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    tools = [testio_tool(args.binary, "testio (defaults: GSO, GRO, batch 16)", []),
             testio_tool(args.binary, "testio --no-gso --no-gro (batch 16)", ["--no-gso", "--no-gro"]),
             testio_tool(args.binary, "testio plain (--no-gso --no-gro --batch 1)",
                         ["--no-gso", "--no-gro", "--batch", "1"])]
    if shutil.which("iperf3"):
        tools.append(iperf3_tool())
    if shutil.which("iperf"):
        tools.append(iperf2_tool())
    for flows in args.flows:
        results = {tool.name: [] for tool in tools}
        for round_number in range(args.repeat):
            for k in range(len(tools)):  # a different tool goes first each round
                tool = tools[(k + round_number) % len(tools)]
                results[tool.name].append(run_once(tool, flows, args.seconds))
        print(f"\n{flows} flow{'s' if flows > 1 else ''}, {DATAGRAM}-byte datagrams, -b 0, {args.seconds} s, "
              f"medians of {args.repeat}")
        header = ["tool", "received Gbit/s", "k datagrams/s", "lost %", "client CPU-s/GB", "server CPU-s/GB"]
        print("| " + " | ".join(header) + " |" if args.markdown else "  ".join(header))
        if args.markdown:
            print("|" + "---|" * len(header))
        for tool in tools:
            runs = results[tool.name]
            med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            row = [tool.name, f"{med['gbps']:.2f}", f"{med['kdps']:.0f}", f"{med['lost']:.2f}",
                   f"{med['client_cpu_per_gb']:.3f}", f"{med['server_cpu_per_gb']:.3f}"]
            print("| " + " | ".join(row) + " |" if args.markdown else "  ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

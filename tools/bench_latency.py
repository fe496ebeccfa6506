#!/usr/bin/env python3
"""What latency probes cost a load, and whether a long test's interval series is complete, on
loopback (127.0.0.1 only; every run bounded by -t and a timeout):

  cost      the same load (N connections, -t SECONDS) with and without --latency (all three probe
            kinds beside it from the start, --latency-idle 0), taking turns, REPEAT times each:
            the load's median goodput both ways, their ratio, and the probes' share of its bytes.
  series    one --latency test of --long seconds with -i 1: every second has an interval, for the
            load and for the probes (with their figures), with none missing.

  tools/bench_latency.py --connections 8 --seconds 5 --repeat 3 --markdown
  tools/bench_latency.py series --long 60
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ROOT, free_port, wait_listening  # noqa: E402


def start_server(binary):
    port = free_port()
    server = subprocess.Popen([binary, "-s", "-B", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    wait_listening(port)
    return server, str(port)


def client(binary, port, *args, limit):
    done = subprocess.run([binary, "-c", "127.0.0.1", "-p", port, *args], capture_output=True, text=True,
                          timeout=limit, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"testio {' '.join(args)} failed:\n{done.stderr[-1500:]}")
    return done.stdout


def cost(binary, port, connections, seconds, repeat):
    plain, probed, shares = [], [], []
    load = [str(connections), "-t", str(seconds), "-i", "0"]
    for _ in range(repeat):
        document = json.loads(client(binary, port, *load, "--json", limit=seconds + 60))
        plain.append(document["end"]["sum_received"]["bits_per_second"])
        document = json.loads(client(binary, port, *load, "--latency", "--latency-idle", "0", "--json",
                                     limit=seconds + 60))
        # The load is the first workload, its goodput over the window it ran.
        probed.append(document["end"]["sum_received"]["bits_per_second"])
        shares.append(document["end"]["latency"][0]["probe_share"])
    return statistics.median(plain), statistics.median(probed), statistics.median(shares)


def series(binary, port, seconds):
    lines = client(binary, port, "2", "-t", str(seconds), "--latency", "--latency-idle", "0", "--json-stream",
                   limit=seconds + 60).splitlines()
    events = [json.loads(line) for line in lines]
    load = [e["data"]["sum"] for e in events if e["event"] == "interval"]
    probes = [e["data"]["interval"] for e in events if e["event"] == "with_interval"]
    whole = [i for i in load if abs(i["seconds"] - 1) < 0.05]
    with_figures = [i for i in probes if i.get("testio", {}).get("figures", {}).get("udp_count", 0) > 0]
    return len(load), len(whole), len(probes), len(with_figures)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", nargs="?", choices=("cost", "series"), default="cost")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--long", type=int, default=60)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    server, port = start_server(args.binary)
    try:
        if args.what == "cost":
            plain, probed, share = cost(args.binary, port, args.connections, args.seconds, args.repeat)
            if args.markdown:
                print("| connections | load alone Gbit/s | load with probes Gbit/s | with/alone | probes' share of the bytes |")
                print("|---:|---:|---:|---:|---:|")
            print(f"| {args.connections} | {plain / 1e9:.2f} | {probed / 1e9:.2f} | {probed / plain:.3f} | "
                  f"{share * 100:.4f}% |")
        else:
            load, whole, probes, with_figures = series(args.binary, port, args.long)
            print(f"{args.long} s test: {load} load intervals ({whole} of a whole second), {probes} probe intervals "
                  f"({with_figures} with answered udp probes)")
            if whole < args.long or with_figures < args.long:
                sys.exit(1)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

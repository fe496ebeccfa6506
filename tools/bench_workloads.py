#!/usr/bin/env python3
"""Loopback benchmarks of the workloads in WORKLOADS.md sections 3 and 4, each beside its yardstick
in the same run, in rotating order, reporting medians:

  rr         testio --rr at 1/10/100 KiB with 1 and 10 workers; sockperf ping-pong beside the
             single-connection runs (sockperf refuses messages above 64 KiB).
  transfers  testio --transfers 1000 x 6 MB, 100 at a time, on fresh and on kept connections,
             beside a bulk test moving the same bytes over the same 100 connections.

  tools/bench_workloads.py --markdown
  tools/bench_workloads.py rr --seconds 3 --repeat 3
Traffic goes to 127.0.0.1 only; every run is bounded by -t or a byte count and a timeout.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ROOT, Tool  # noqa: E402

SOCKPERF_MAX_MESSAGE = 65000


def run_json(argv, limit):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=limit, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def testio_rr(binary, port, workers, msize, seconds):
    rr = run_json([binary, "-c", "127.0.0.1", "-p", str(port), str(workers), "--rr", "--msize", msize,
                   "-t", str(seconds), "-i", "0", "--json"], seconds + 60)["end"]["testio"]["rr"]
    return rr["messages_per_second"], rr["latency_us"]["p50"], rr["latency_us"]["p99"]


def sockperf_ping_pong(port, msize_bytes, seconds):
    """Round trips/s over sockperf's measured window, and its p50/p99 as round trips (sockperf
    prints half a round trip as 'latency')."""
    done = subprocess.run(["sockperf", "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(port),
                           "-m", str(msize_bytes), "-t", str(seconds)],
                          capture_output=True, text=True, timeout=seconds + 60, stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    window = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", out)
    p50 = re.search(r"percentile 50\.000 =\s*([\d.]+)", out)
    p99 = re.search(r"percentile 99\.000 =\s*([\d.]+)", out)
    if done.returncode != 0 or not (window and p50 and p99):
        raise RuntimeError("sockperf ping-pong failed:\n" + out[-2000:])
    return int(window.group(2)) / float(window.group(1)), 2 * float(p50.group(1)), 2 * float(p99.group(1))


def median_triples(samples):
    return tuple(statistics.median(s[i] for s in samples) for i in range(3))


def rr_table(args):
    sizes = {"1K": 1024, "10K": 10240, "100K": 102400}
    testio = Tool("testio", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"], None)
    sockperf = Tool("sockperf", ["sockperf", "server", "--tcp", "-i", "127.0.0.1", "-p", "PORT"], None)
    rows = []
    try:
        testio.start()
        sockperf.start()
        for msize, size in sizes.items():
            for workers in (1, 10):
                with_sockperf = workers == 1 and size <= SOCKPERF_MAX_MESSAGE
                ours, theirs = [], []
                for round_index in range(args.repeat):
                    runs = [lambda: ours.append(testio_rr(args.testio, testio.port, workers, msize, args.seconds))]
                    if with_sockperf:
                        runs.append(lambda: theirs.append(sockperf_ping_pong(sockperf.port, size, args.seconds)))
                    for run in runs[round_index % len(runs):] + runs[:round_index % len(runs)]:
                        run()
                rows.append((msize, workers, median_triples(ours), median_triples(theirs) if theirs else None))
                print(f"# rr {msize} x {workers}: testio {rows[-1][2][0]:.0f}/s" +
                      (f", sockperf {rows[-1][3][0]:.0f}/s" if theirs else ""), file=sys.stderr, flush=True)
    finally:
        testio.stop()
        sockperf.stop()
    print("| msize | workers | testio msg/s | p50 us | p99 us | sockperf msg/s | p50 us | p99 us | testio/sockperf |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for msize, workers, (rate, p50, p99), other in rows:
        theirs = (f"{other[0]:,.0f} | {other[1]:.1f} | {other[2]:.1f} | {rate / other[0]:.2f}" if other
                  else "- | - | - | -")
        print(f"| {msize} | {workers} | {rate:,.0f} | {p50:.1f} | {p99:.1f} | {theirs} |")
    print(f"\n(medians of {args.repeat} runs of {args.seconds} s; latency is the full round trip for both tools)")


def transfers_table(args):
    count, size, at_once = args.transfers, 6_000_000, 100
    testio = Tool("testio", [args.testio, "-s", "-B", "127.0.0.1", "-p", "PORT"], None)
    base = [args.testio, "-c", "127.0.0.1", "-p", "PORT", str(at_once), "-i", "0", "--json"]
    kinds = {
        "transfers, fresh connections": ["--transfers", str(count), "--size", str(size)],
        "transfers, kept connections": ["--transfers", str(count), "--size", str(size), "--reuse"],
        "bulk stream, same bytes": ["-n", str(count * size)],
    }
    samples = {kind: [] for kind in kinds}
    try:
        testio.start()
        names = list(kinds)
        for round_index in range(args.repeat):
            for kind in names[round_index % 3:] + names[:round_index % 3]:
                argv = [a.replace("PORT", str(testio.port)) for a in base] + kinds[kind]
                end = run_json(argv, 600)["end"]
                transfers = end["testio"].get("transfers")
                if transfers:
                    samples[kind].append((transfers["seconds"], transfers["bits_per_second"] / 1e9,
                                          transfers["transfers_per_second"], transfers["transfer_ms"]["p50"],
                                          transfers["transfer_ms"]["p99"], transfers["connect_us"]["p50"],
                                          transfers["connect_seen_us"]["p50"]))
                else:
                    received = end["sum_received"]
                    samples[kind].append((received["seconds"], received["bits_per_second"] / 1e9, 0, 0, 0, 0, 0))
                print(f"# {kind}: {samples[kind][-1][1]:.1f} Gbit/s", file=sys.stderr, flush=True)
    finally:
        testio.stop()
    print(f"| {count} x 6 MB, {at_once} at a time | seconds | Gbit/s | transfers/s | transfer p50 ms | "
          "transfer p99 ms | connect p50 us | connect as seen p50 us |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, values in samples.items():
        m = [statistics.median(v[i] for v in values) for i in range(7)]
        extra = ("- | - | - | - | -" if kind.startswith("bulk")
                 else f"{m[2]:.0f} | {m[3]:.1f} | {m[4]:.1f} | {m[5]:.0f} | {m[6]:.0f}")
        print(f"| {kind} | {m[0]:.2f} | {m[1]:.1f} | {extra} |")
    print(f"\n(medians of {args.repeat} runs; the bulk line is `-n {count * size}` over {at_once} connections)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="*", help="rr, transfers or both (the default)")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--transfers", type=int, default=1000)
    parser.add_argument("--testio", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--markdown", action="store_true", help="accepted for symmetry; tables are Markdown")
    args = parser.parse_args()
    args.which = args.which or ["rr", "transfers"]
    if any(which not in ("rr", "transfers") for which in args.which):
        parser.error("choose rr and/or transfers")
    if not 1 <= args.repeat <= 20 or not 1 <= args.seconds <= 60 or not 1 <= args.transfers <= 100000:
        parser.error("--repeat must be 1..20, --seconds 1..60, --transfers 1..100000")
    if not os.access(args.testio, os.X_OK) or not shutil.which("sockperf"):
        sys.exit("needs testio (tools/build.sh) and sockperf (apt-get install sockperf)")
    for which in args.which:
        (rr_table if which == "rr" else transfers_table)(args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""testio alone, for tools/bench.py --recv-modes and --io-paths: its receive modes unpaced, and
every engine with every receive mode at one total rate. Traffic goes to 127.0.0.1 only."""
import json
import statistics
import subprocess
import sys

from bench import Tool


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


def runnable_paths(binary, said="#"):
    """Every (engine, receive mode) testio runs; each it refuses is said on stderr with its reason."""
    combos = []
    for engine in ENGINES:
        for mode in RECV_MODES:
            why = refusal(binary, "--engine", engine, "--recv-mode", mode)
            if why:
                print(f"{said} {engine} + {mode}: refused ({why})", file=sys.stderr, flush=True)
            else:
                combos.append((engine, mode))
    return combos


def io_path_table(args):
    """testio alone: each engine with each receive mode, every connection paced so the total is
    --rate, in rotating order. At an equal rate the CPU-seconds per GB of each side compare the
    I/O paths (recv vs recv_into, blocking threads vs event loops vs io_uring) fairly; the calls
    and bytes per call show how each moved the data."""
    total_bps = parse_rate(args.rate)
    combos = runnable_paths(args.testio)
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

#!/usr/bin/env python3
"""The 1000-files experiment against a real web server: COUNT files of SIZE bytes from Debian's
nginx on 127.0.0.1, PARALLEL at a time, fetched by testio (-c URL --transfers) and by curl
(--parallel --parallel-max PARALLEL), on fresh connections and on kept ones, with the bodies
discarded and saved to disk; wrk over one URL beside the kept, discarded runs. The tools take
turns each round; the table gives the medians of REPEAT rounds: wall time (the process's start to
its exit), Gbit/s of bodies over that time, and the client's CPU-seconds.

nginx serves every /same/N from one file (a rewrite), so COUNT names cost one file's space;
fresh connections for curl are forced with 'Connection: close' (curl reuses them otherwise).
Saved files go under --save-dir (a disk, not tmpfs), emptied and synced between runs.

  tools/bench_http.py --binary build/testio --count 1000 --size 6000000 --parallel 100 --repeat 3 --markdown
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from http_servers import Nginx  # noqa: E402


def timed(argv, limit=600):
    """Runs argv; returns (wall seconds, CPU-seconds of the child, exit code, stderr tail)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=limit)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")[-300:]


def curl_config(nginx, count, save_dir, fresh):
    """A curl -K file: every URL with its output, and Connection: close for fresh connections."""
    lines = ['header = "Connection: close"'] if fresh else []
    for i in range(1, count + 1):
        lines.append(f'url = "{nginx.url(f"same/{i}")}"')
        lines.append(f'output = "{os.path.join(save_dir, str(i)) if save_dir else "/dev/null"}"')
    handle = tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False)
    handle.write("\n".join(lines) + "\n")
    handle.close()
    return handle.name


def cases(args, nginx, save_dir):
    url = nginx.url("same/{i}")
    for save in (False, True):
        for fresh in (True, False):
            where = ["--save", save_dir, "--force"] if save else []
            reuse = [] if fresh else ["--reuse"]
            name = f"{'saved' if save else 'discarded'}, {'fresh' if fresh else 'kept'} connections"
            yield f"testio, {name}", [args.binary, "-c", url, str(args.parallel), "--transfers", str(args.count),
                                      *reuse, *where], save
            config = curl_config(nginx, args.count, save_dir if save else None, fresh)
            yield f"curl, {name}", ["curl", "--parallel", "--parallel-max", str(args.parallel), "-s", "--fail",
                                    "-K", config], save
    if shutil.which("wrk"):
        yield "wrk, one URL, kept connections", ["wrk", "-t2", f"-c{args.parallel}", f"-d{args.wrk_seconds}s",
                                                 nginx.url("same/1")], False


def wrk_bytes(stdout):
    """Bytes wrk read, from its 'N requests in Ts, X.XXGB read' line."""
    for line in stdout.splitlines():
        if " read" in line and "requests in" in line:
            amount = line.split(",")[-1].split()[0]
            for suffix, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10), ("B", 1)):
                if amount.endswith(suffix):
                    return float(amount[:-len(suffix)]) * scale
    return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--size", type=int, default=6_000_000)
    parser.add_argument("--parallel", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wrk-seconds", type=int, default=5)
    parser.add_argument("--save-dir", default=os.path.join(ROOT, "bench-http-save"))
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.save_dir, exist_ok=True)
    results = {}
    with Nginx({"same.bin": os.urandom(args.size)}, workers=2) as nginx:
        for _ in range(args.repeat):
            for name, argv, save in cases(args, nginx, args.save_dir):
                wall, cpu, code, stdout, err = timed(argv)
                if code != 0:
                    print(f"{name}: exit {code}: {err}", file=sys.stderr)
                body = wrk_bytes(stdout) if name.startswith("wrk") else args.count * args.size
                results.setdefault(name, []).append((wall, body * 8 / wall / 1e9, cpu))
                if "-K" in argv:
                    os.unlink(argv[argv.index("-K") + 1])
                if save:
                    shutil.rmtree(args.save_dir)
                    os.makedirs(args.save_dir)
                    subprocess.run(["sync"])
    shutil.rmtree(args.save_dir, ignore_errors=True)
    print(f"| {args.count} x {args.size} B, {args.parallel} at a time | wall s | Gbit/s | client CPU-s |")
    print("|---|---|---|---|")
    for name, runs in results.items():
        wall, rate, cpu = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"| {name} | {wall:.2f} | {rate:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()

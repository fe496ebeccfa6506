#!/usr/bin/env python3
"""Many concurrent clients at one server, side by side: testio's server (--max-tests 64) and
iperf (iperf2)'s, in one run, the tools taking turns each round.

For each client count, every tool runs REPEAT times: a fresh server, then N clients released at
once (each waits, already forked, on one FIFO that the script then closes), each with 4
connections for SECONDS and bound to a source address of its own (127.0.0.2, 127.0.0.3, ...) so
that the server sees N different peers. Per run it computes:

  aggregate Gbit/s   the bytes the server received from all clients, over the window: from the
                     first client's start to the last one's exit, each client's start being its
                     exit time less its own measured interval (about SECONDS). Clients started at
                     once still begin apart, and the window counts that spread; it also counts
                     each client's results exchange after its interval, so it errs long.
  Jain's index       fairness between the clients' goodputs: (sum x)^2 / (n * sum x^2), 1 = equal
  server CPU-s/GB    the server process's user + system time (every thread's, from /proc) over
                     the run, per GB (1e9 bytes) received

It also runs one testio client with all N x 4 connections against the same server ("testio, 1
client"): the issue's reference for the clients' aggregate (at least 0.9 of it). It prints, per
client count, the median of each over the repeats, the median window (its excess
over SECONDS is how far apart the clients ran) and of the most clients whose intervals overlapped
at one moment (placed as above, to within 20 ms), the failed clients (non-zero exit, a timeout, or
no figures in the report; never left out of the count) and testio's ratio to iperf2. The
figures are over the clients that reported; each run's figures and every failure go to stderr. Traffic goes to 127.0.0.0/8 only;
every client is killed if it runs past SECONDS + 30 s, and every server is stopped at the end.

testio's figures are each client's end.sum_received (bytes and seconds, the server's count);
iperf2's are its server's CSV lines (-y C), one per connection, matched to the client by source
address, also the receiver's count. iperf 2.1.8 prints no SUM line (id -1) in CSV with -P 4, and
exits 0 when it cannot connect, so a client with fewer than 4 stream lines counts as failed.

  tools/bench_clients.py                    # 1 8 64 clients, 5 s, 3 repeats
  tools/bench_clients.py --testio /tmp/testio --clients 1 8 64 --seconds 5 --repeat 3 --markdown
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ROOT, emit, free_port, server_cpu_seconds, wait_listening  # noqa: E402
CONNECTIONS = 4  # per client
MAX_CLIENTS = 64  # source addresses 127.0.0.2 .. 127.0.0.65, and testio's --max-tests
GRACE = 30  # seconds a client may run past -t before it is killed


def source_address(k):
    """The k-th client's own source address (k = 0 .. MAX_CLIENTS-1): 127.0.0.2 upwards."""
    return f"127.0.0.{k + 2}"


class Testio:
    name = "testio"

    def __init__(self, binary):
        self.binary = binary

    @staticmethod
    def plan(n):
        """(clients, connections each) for a run of n clients."""
        return n, CONNECTIONS

    def server(self, port):
        return [self.binary, "-s", "-p", str(port), "--max-tests", str(MAX_CLIENTS)]

    def client(self, port, source, seconds, connections=CONNECTIONS):
        return [self.binary, "-c", "127.0.0.1", "-p", str(port), str(connections), "-t", str(seconds), "--json",
                "-B", source]

    def server_settled(self, server_out, sources):
        return True

    def figures(self, stdout, source, server_out):
        """(bytes, seconds) the server received from this client, or raise ValueError."""
        try:
            report = json.loads(stdout)
        except json.JSONDecodeError as error:
            raise ValueError(f"no JSON report ({error})")
        if report.get("error"):
            raise ValueError(f"report says: {report['error']}")
        try:
            received = report["end"]["sum_received"]
            return int(received["bytes"]), float(received["seconds"])
        except (KeyError, TypeError, ValueError):
            raise ValueError("no end.sum_received.bytes/seconds in the report")


class TestioAlone(Testio):
    """The reference the clients' aggregate is held to: one testio client with all their
    connections (n x 4), against the same server."""
    name = "testio, 1 client"

    @staticmethod
    def plan(n):
        return 1, CONNECTIONS * n


class Iperf2:
    name = "iperf2"
    plan = staticmethod(Testio.plan)

    def server(self, port):
        return ["iperf", "-s", "-p", str(port), "-y", "C"]

    def client(self, port, source, seconds, connections=CONNECTIONS):
        return ["iperf", "-c", "127.0.0.1", "-p", str(port), "-P", str(connections), "-t", str(seconds), "-y", "C",
                "-B", source]

    @staticmethod
    def rows(text):
        # timestamp,src,srcport,dst,dstport,id,interval,bytes,bits_per_second; a SUM line has id -1.
        return [line.split(",") for line in text.splitlines() if line.count(",") == 8]

    def server_settled(self, server_out, sources):
        """True once the server has printed a line for every connection of every client."""
        wanted = set(sources)
        count = sum(1 for row in self.rows(server_out) if row[1] in wanted and row[5] != "-1")
        return count >= CONNECTIONS * len(wanted)

    def figures(self, stdout, source, server_out):
        sent = [row for row in self.rows(stdout) if row[5] != "-1"]
        if len(sent) < CONNECTIONS:
            raise ValueError(f"{len(sent)} of {CONNECTIONS} stream lines in the client's CSV")
        received = [row for row in self.rows(server_out) if row[1] == source and row[5] != "-1"]
        if len(received) != CONNECTIONS:
            raise ValueError(f"the server reported {len(received)} of {CONNECTIONS} connections from {source} "
                             f"(the client counted {sum(int(row[7]) for row in sent) / 1e6:.1f} MB sent)")
        total, seconds = 0, 0.0
        for row in received:
            count, rate = int(row[7]), float(row[8])
            total += count
            # The interval column is rounded to 0.1 s; bytes over bits per second is exact.
            seconds = max(seconds, count * 8 / rate if rate > 0 else float(row[6].split("-")[1]))
        return total, seconds


def reading_from(pids, fifo):
    """How many of these processes have the FIFO open as their standard input."""
    count = 0
    for pid in pids:
        try:
            count += os.readlink(f"/proc/{pid}/fd/0") == fifo
        except OSError:
            pass
    return count


def stop(processes):
    """SIGTERM to every one still running, then SIGKILL to any left after 10 s in all."""
    running = [process for process in processes if process and process.poll() is None]
    for process in running:
        process.terminate()
    deadline = time.monotonic() + 10
    for process in running:
        try:
            process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_server(tool, server_out, attempts=3):
    """The tool's server on a free port: (process, port). A server that does not come up is
    reported on stderr with what it printed, and tried again on another port."""
    for attempt in range(1, attempts + 1):
        port = free_port()
        server_out.seek(0)
        server_out.truncate()
        server = subprocess.Popen(tool.server(port), stdout=server_out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        try:
            wait_listening(port, 20, server)
            return server, port
        except RuntimeError as error:
            stop([server])
            server_out.seek(0)
            said = " | ".join(server_out.read().strip().splitlines()[-3:])
            print(f"# {tool.name} server, attempt {attempt} of {attempts}: {error}; it said: {said or '(nothing)'}",
                  file=sys.stderr, flush=True)
    raise RuntimeError(f"{tool.name}: the server did not start in {attempts} attempts")


def run_once(tool, n, seconds):
    """One server, n clients at once. Returns (per-client goodputs, per-client intervals as
    (start, end) on this script's clock, total bytes, window, CPU-s, failures)."""
    count, connections = tool.plan(n)
    sources = [source_address(k) for k in range(count)]
    server, clients, writer = None, [], None
    with tempfile.TemporaryFile("w+") as server_out, tempfile.TemporaryDirectory() as gate_dir:
        try:
            server, port = start_server(tool, server_out)
            time.sleep(0.2)
            cpu_before = server_cpu_seconds(server.pid)
            # A start line: each client is a shell blocked reading a FIFO, which execs the tool
            # when the FIFO's one writer (this script) closes it; so the n processes exist before
            # any traffic and start at once. (Started one by one, the last of 64 began seconds
            # after the first on 2 busy cores.)
            gate = os.path.join(gate_dir, "gate")
            os.mkfifo(gate)
            writer = os.open(gate, os.O_RDWR)  # lets the shells' opens return at once
            for source in sources:
                out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
                process = subprocess.Popen(["sh", "-c", 'read _ < "$0"; exec "$@"', gate,
                                            *tool.client(port, source, seconds, connections)],
                                           stdout=out, stderr=err, stdin=subprocess.DEVNULL)
                clients.append((source, process, out, err))
            lined_up = time.monotonic() + 30
            while reading_from([c[1].pid for c in clients], gate) < count:
                if time.monotonic() > lined_up:
                    raise RuntimeError(f"{tool.name}: {count} client shells did not all open {gate} in 30 s")
                time.sleep(0.02)
            os.close(writer)  # every shell reads EOF and execs its client
            writer = None
            deadline = time.monotonic() + seconds + GRACE
            exits, timed_out = {}, set()
            while len(exits) < len(clients):  # each client's exit time, to 20 ms
                now = time.monotonic()
                for source, process, _, _ in clients:
                    if source not in exits and process.poll() is not None:
                        exits[source] = now
                if now > deadline:
                    for source, process, _, _ in clients:
                        if source not in exits:
                            process.kill()
                            process.wait()
                            exits[source] = now
                            timed_out.add(source)
                    break
                time.sleep(0.02)
            settle = time.monotonic() + 5
            while True:  # iperf2's server prints a connection's line when it ends; bounded
                server_out.seek(0)
                if tool.server_settled(server_out.read(), sources) or time.monotonic() > settle:
                    break
                time.sleep(0.1)
            time.sleep(0.3)
            cpu = server_cpu_seconds(server.pid) - cpu_before
            server_out.seek(0)
            server_text = server_out.read()
            goodputs, intervals, total, failures = [], [], 0, []
            for source, process, out, err in clients:
                out.seek(0)
                err.seek(0)
                stdout, stderr = out.read(), err.read()
                try:
                    if source in timed_out:
                        raise ValueError(f"killed after {seconds + GRACE} s")
                    if process.returncode != 0:
                        raise ValueError(f"exit {process.returncode}")
                    count, elapsed = tool.figures(stdout, source, server_text)
                    if count <= 0 or elapsed <= 0:
                        raise ValueError(f"{count} bytes in {elapsed} s")
                except ValueError as error:
                    tail = " | ".join(stderr.strip().splitlines()[-3:])
                    failures.append(f"{tool.name} client {source}: {error}" + (f"; stderr: {tail}" if tail else ""))
                    continue
                goodputs.append(count * 8 / elapsed / 1e9)
                total += count
                # The client's measured interval ends shortly before it exits (the results'
                # exchange): place it there. Launched at once, clients still start apart.
                intervals.append((exits[source] - elapsed, exits[source]))
            window = max(end for _, end in intervals) - min(start for start, _ in intervals) if intervals else 0.0
            return goodputs, intervals, total, window, cpu, failures
        finally:
            if writer is not None:
                os.close(writer)
            stop([process for _, process, _, _ in clients])
            for _, _, out, err in clients:
                out.close()
                err.close()
            stop([server])


def most_at_once(intervals):
    """The most clients whose measured intervals overlap at one moment."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals],
                    key=lambda event: (event[0], event[1]))  # an end before a start at the same moment
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def jain(values):
    if not values:
        return None
    square_sum = sum(x * x for x in values)
    return sum(values) ** 2 / (len(values) * square_sum) if square_sum else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--testio", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args()
    if args.repeat < 1 or args.repeat > 20 or args.seconds < 1 or args.seconds > 60:
        parser.error("--repeat must be 1..20 and --seconds 1..60")
    if any(n < 1 or n > MAX_CLIENTS for n in args.clients):
        parser.error(f"--clients must be 1..{MAX_CLIENTS} (one source address and one test slot each)")
    for needed in (args.testio, shutil.which("iperf")):
        if not needed or not os.access(needed, os.X_OK):
            sys.exit("bench_clients needs testio (tools/build.sh) and iperf (tools/install-deps.sh)")

    tools = [Testio(args.testio), Iperf2(), TestioAlone(args.testio)]
    for n in args.clients:
        samples = {tool.name: [] for tool in tools}
        for round_number in range(args.repeat):
            for k in range(len(tools)):  # a different tool goes first each round
                tool = tools[(k + round_number) % len(tools)]
                goodputs, intervals, total, window, cpu, failures = run_once(tool, n, args.seconds)
                gigabytes = total / 1e9
                sample = {"gbps": total * 8 / window / 1e9 if window else None, "jain": jain(goodputs),
                          "cpu_per_gb": cpu / gigabytes if gigabytes else None, "window": window or None,
                          "at_once": most_at_once(intervals) if intervals else None, "failed": len(failures)}
                samples[tool.name].append(sample)
                for failure in failures:
                    print(f"# FAILED: {failure}", file=sys.stderr, flush=True)
                print(f"# {n} clients, round {round_number + 1}, {tool.name}: {show(sample['gbps'], '{:.2f}')} Gbit/s, "
                      f"Jain {show(sample['jain'], '{:.4f}')}, server {cpu:.2f} CPU-s for {gigabytes:.1f} GB "
                      f"({show(sample['cpu_per_gb'], '{:.3f}')} CPU-s/GB), window {window:.2f} s, "
                      f"at most {show(sample['at_once'], '{}')} at once, {len(failures)} of {n} clients failed", file=sys.stderr, flush=True)
        print_table(n, tools, samples, args)
    return 0


def show(value, form):
    return form.format(value) if value is not None else "-"


def print_table(n, tools, samples, args):
    print(f"\n{n} client{'s' if n > 1 else ''} x {CONNECTIONS} connections, {args.seconds} s, "
          f"medians of {args.repeat}" + (":\n" if args.markdown else ""))
    header = ["tool", "aggregate Gbit/s", "Jain's index", "server CPU-s/GB", "window s", "most at once", "failed clients"]
    table, medians = [], {}
    for tool in tools:
        runs = samples[tool.name]
        med = {key: median(run[key] for run in runs) for key in ("gbps", "jain", "cpu_per_gb", "window", "at_once")}
        medians[tool.name] = med
        table.append([tool.name, show(med["gbps"], "{:.2f}"), show(med["jain"], "{:.4f}"),
                      show(med["cpu_per_gb"], "{:.3f}"), show(med["window"], "{:.2f}"),
                      show(med["at_once"], "{:g}"), f"{sum(run['failed'] for run in runs)} of {tool.plan(n)[0] * len(runs)}"])

    def ratio(key, other):
        a, b = medians["testio"][key], medians[other][key]
        return a / b if a and b else None
    table.append(["testio / iperf2", show(ratio("gbps", "iperf2"), "{:.2f}"), "-",
                  show(ratio("cpu_per_gb", "iperf2"), "{:.2f}"), "-", "-", "-"])
    table.append(["testio / testio, 1 client", show(ratio("gbps", "testio, 1 client"), "{:.2f}"), "-",
                  show(ratio("cpu_per_gb", "testio, 1 client"), "{:.2f}"), "-", "-", "-"])
    emit(header, table, args.markdown)
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())

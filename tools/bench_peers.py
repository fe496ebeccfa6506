#!/usr/bin/env python3
"""tools/bench.py --peers: testio beside the newest peers, built from their sources (iperf3 3.21,
iperf 2.2.1, neper's tcp_stream), with Debian's iperf3 and iperf as second rows when installed, in
one run. Three parts, in each the tools taking turns every round (round r starts with the r-th
tool, so drift on a shared machine hits them all alike), medians of --repeat rounds with their
spread (min-max) and testio's ratio to each peer:

  (a) each tool at its defaults (its own call size), at each of --connections
  (b) every tool at one call size (--call-size, 1 MiB: the largest iperf3 accepts)
  (c) CPU-seconds per GB at a paced load (--paced, 8 x 1.25 Gbit/s): both processes, and the
      receiver alone
  (d) the receive path alone at that paced load: the receiver's CPU-seconds per GB for each of
      testio's engines with each receive mode it runs, against each iperf3's receiver

--parts picks some of them (default abcd).

Every sample is a fresh server and a client. Each process's CPU (user + system, every thread) is
read from /proc/PID/stat once it has exited and before it is reaped, so nothing it spent is
missed. Gbit/s is the receiver's count: testio's receiver sum (the server's), iperf3's
end.sum_received, the bytes in iperf 2's server CSV over its client's test time, neper's server
local_throughput. Traffic goes to 127.0.0.1 only. Every loop is bounded: --repeat rounds of
a fixed list; a server must listen within 10 s, a client exit within -t + 30 s and its server 15 s
after it, or both are killed and the sample counts as failed. Every process started is stopped on
the way out, whatever ends the run (an error, Ctrl-C, SIGTERM), and dies with this script if it is
killed (PR_SET_PDEATHSIG).

Where the peers come from: --iperf3, --iperf2 and --neper, or TESTIO_BENCH_IPERF3,
TESTIO_BENCH_IPERF2 and TESTIO_BENCH_NEPER; docs/benchmarks.md says how to build them. A peer not
given is left out (and said so); Debian's /usr/bin/iperf3 and /usr/bin/iperf run when installed.
"""
import ctypes
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import namedtuple

from bench import emit, free_port, parse_iperf3, parse_testio, server_cpu_seconds, wait_listening
from bench_clients import stop
from bench_paths import parse_rate, runnable_paths

GRACE = 30  # seconds a client may run past -t
SERVER_GRACE = 15  # seconds a server may take to exit after its client
LISTEN_LIMIT = 10  # seconds a server may take to listen

# connections; seconds; bytes per call (None: the tool's default); bits/s per connection (None: unpaced)
Load = namedtuple("Load", "connections seconds size rate")


class Peer:
    """A tool as the benchmark runs it: `make(ports, load)` gives the server's and the client's
    argv, `parse(client_out, server_out)` the receiver's Gbit/s. `ports` is how many it listens on."""

    def __init__(self, name, path, default_size, make, parse, ports=1, max_connections=None):
        self.name, self.path, self.default_size = name, path, default_size
        self.make, self.parse, self.ports, self.max_connections = make, parse, ports, max_connections

    def runs(self, connections):
        return self.max_connections is None or connections <= self.max_connections


def option(flag, value):
    return [flag, str(value)] if value else []


def testio_peer(binary, name="testio", *extra):
    def make(ports, load):
        port = str(ports[0])
        return ([binary, "-s", "-1", "-B", "127.0.0.1", "-p", port],
                [binary, "-c", "127.0.0.1", "-p", port, str(load.connections), "-t", str(load.seconds), *extra,
                 *option("-l", load.size), *option("-b", load.rate)])
    return Peer(name, binary, "2 MiB", make, lambda client, server: parse_testio(client))


def iperf3_peer(binary, name):
    def make(ports, load):
        port = str(ports[0])
        return ([binary, "-s", "-1", "-B", "127.0.0.1", "-p", port],
                [binary, "-c", "127.0.0.1", "-p", port, "-P", str(load.connections), "-t", str(load.seconds), "-J",
                 *option("-l", load.size), *option("-b", load.rate)])
    # iperf3 serves at most 128 streams (MAX_STREAMS, 3.12 and 3.21 alike).
    return Peer(name, binary, "128 KiB", make, lambda client, server: parse_iperf3(client), max_connections=128)


def iperf2_peer(binary, name):
    def make(ports, load):
        port, n, size = str(ports[0]), str(load.connections), option("-l", load.size)
        # -P on the server: serve N connections, then exit; its CSV has the receiver's counts.
        return ([binary, "-s", "-B", "127.0.0.1", "-p", port, "-P", n, "-y", "C", *size],
                [binary, "-c", "127.0.0.1", "-p", port, "-P", n, "-t", str(load.seconds), "-y", "C", *size,
                 *option("-b", load.rate)])
    return Peer(name, binary, "128 KiB", make, parse_iperf2_received)


def parse_iperf2_received(client, server):
    """The bytes iperf 2's server received (its CSV line per connection, added) over the client's
    test time (the longest of its connections' intervals). Neither side's SUM line serves: in a
    1 s run at -P 128 here, 2.1.8 printed none, a third of the server's lines read `0.0-0.0`
    with megabytes in them, 2.2.1's server SUM held 81% of the bytes its connections' lines did,
    and the client's threads ended up to 0.7 s after -t."""
    def rows(text):  # time,src,sport,dst,dport,id,interval,bytes,bits/s; id -1 is a SUM
        return [line.split(",") for line in text.splitlines() if line.count(",") >= 8 and line.split(",")[5] != "-1"]
    received = sum(int(row[7]) for row in rows(server))
    seconds = max(float(row[6].split("-")[1]) for row in rows(client))
    return received * 8 / seconds / 1e9


def neper_peer(binary, name, cores):
    def make(ports, load):
        # neper's default is one thread a side; it runs on min(flows, cores), as testio's -T does.
        common = ["-H", "127.0.0.1", "-C", str(ports[0]), "-P", str(ports[1]), "-F", str(load.connections),
                  "-T", str(min(load.connections, cores)), "-l", str(load.seconds), "--logtostderr",
                  *option("-B", load.size)]
        # -m: SO_MAX_PACING_RATE, the kernel paces each socket ("b": bits/s); its -D, a fixed delay
        # between sends, sets no rate.
        return [binary, *common], [binary, "-c", *common, *option("-m", f"{load.rate}b" if load.rate else None)]
    return Peer(name, binary, "16 KiB", make, parse_neper, ports=2)


def parse_neper(client, server):
    for line in server.splitlines():
        if line.startswith("local_throughput="):  # bits/s the server received
            return int(line.split("=", 1)[1]) / 1e9
    raise RuntimeError("no local_throughput in neper's server output:\n" + server[-2000:])


def version(argv, word):
    """The `word`-th word of the first line a tool prints for its version flag (stdout or
    stderr: iperf 2 prints it on stderr), or '?'."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = (done.stdout + done.stderr).strip().splitlines()
    words = lines[0].split() if lines else []
    return words[word] if len(words) > word else "?"


def peers_for(args, cores):
    """testio twice (defaults, --recv-mode trunc), then each peer: the one given, then Debian's.
    Returns the peers and the options of those not given."""
    peers, missing = [testio_peer(args.testio), testio_peer(args.testio, "testio trunc", "--recv-mode", "trunc")], []
    kinds = [  # option, path given, Debian's path, version flag and word ("iperf 3.21 (cJSON ...)"), name, maker
        ("--iperf3", args.iperf3, "/usr/bin/iperf3", ["--version"], 1, "iperf3 {}", iperf3_peer),
        ("--iperf2", args.iperf2, "/usr/bin/iperf", ["-v"], 2, "iperf {}", iperf2_peer),  # "iperf version 2.2.1 ..."
        ("--neper", args.neper, None, ["--nolog", "-v"], 0, "neper {} tcp_stream",  # "1.1.0"; --nolog: no log file
         lambda path, name: neper_peer(path, name, cores)),
    ]
    for flag, given, debian, version_flag, word, name, make in kinds:
        if given and not os.access(given, os.X_OK):
            sys.exit(f"bench --peers: {flag} {given}: not an executable file")
        if not given:
            missing.append(flag)
        if debian and not os.access(debian, os.X_OK) or given and debian and os.path.samefile(given, debian):
            debian = None
        for path, where in ((given, ""), (debian, " (Debian)")):
            if path:
                peers.append(make(path, name.format(version([path, *version_flag], word)) + where))
    return peers, missing


def die_with_parent():
    """In each child, before exec: SIGKILL when this script dies, however it dies; and the signals
    this script blocks while it starts processes unblocked again."""
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


class Processes:
    """The processes of the running sample, each with its output in temporary files. Ctrl-C and
    SIGTERM wait while one is started or they are stopped, so none escapes the list."""

    def __init__(self):
        self.live = []

    def start(self, argv):
        out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            # A session of its own: the terminal's Ctrl-C reaches this script only, which stops them all.
            process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                       start_new_session=True, preexec_fn=die_with_parent)
        except OSError as error:
            out.close()
            err.close()
            raise RuntimeError(f"cannot start {argv[0]}: {error}") from error
        else:
            process.out, process.err = out, err
            self.live.append(process)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return process

    @staticmethod
    def exited(process, deadline):
        """The process's CPU-seconds once it has exited, read from /proc/PID/stat while it is a
        zombie (every thread's time is in it then), before it is reaped; None if it still runs at
        `deadline` (time.monotonic())."""
        while os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.02)
        cpu = server_cpu_seconds(process.pid)
        process.wait()
        return cpu

    def stop(self):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            stop(self.live)
            for process in self.live:
                process.out.close()
                process.err.close()
            self.live = []
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def said(process):
    """The last lines a process printed, for an error message."""
    text = ""
    for stream in (process.out, process.err):
        stream.seek(0)
        text += stream.read()
    return " | ".join(text.strip().splitlines()[-4:]) or "(nothing)"


def sample(processes, peer, load):
    """One run with a fresh server: (receiver Gbit/s, client CPU-s, server CPU-s)."""
    ports = [free_port() for _ in range(peer.ports)]
    server_argv, client_argv = peer.make(ports, load)
    try:
        server = processes.start(server_argv)
        for port in ports:
            wait_listening(port, LISTEN_LIMIT, server)
        client = processes.start(client_argv)
        client_cpu = processes.exited(client, time.monotonic() + load.seconds + GRACE)
        if client_cpu is None:
            raise RuntimeError(f"the client ran past {load.seconds + GRACE} s: {' '.join(client_argv)}")
        server_cpu = processes.exited(server, time.monotonic() + SERVER_GRACE)
        if server_cpu is None:
            raise RuntimeError(f"the server still ran {SERVER_GRACE} s after its client; it said: {said(server)}")
        for process, argv in ((client, client_argv), (server, server_argv)):
            if process.returncode != 0:
                raise RuntimeError(f"exit {process.returncode}: {' '.join(argv)}; it said: {said(process)}")
        client.out.seek(0)
        server.out.seek(0)
        try:
            gbps = peer.parse(client.out.read(), server.out.read())
        except (ValueError, KeyError, IndexError) as error:  # iperf3's JSON, iperf 2's CSV
            raise RuntimeError(f"no figures in the output ({error!r}): {' '.join(client_argv)}") from error
        if gbps <= 0:
            raise RuntimeError(f"0 bytes received: {' '.join(client_argv)}")
        return gbps, client_cpu, server_cpu
    finally:
        processes.stop()


def rounds(processes, peers, load, repeat):
    """Each peer's samples under `load`, a list a peer (None for a failed one), rounds interleaved."""
    running = [peer for peer in peers if peer.runs(load.connections)]
    samples = {peer.name: [None] * repeat for peer in running}
    for round_index in range(repeat):
        shift = round_index % len(running)
        for peer in running[shift:] + running[:shift]:
            try:
                samples[peer.name][round_index] = sample(processes, peer, load)
            except RuntimeError as error:
                print(f"# {peer.name}, {load.connections} connections: failed: {error}", file=sys.stderr, flush=True)
    medians = []
    for name, values in samples.items():
        rates = [s[0] for s in values if s]
        medians.append(f"{name} {statistics.median(rates):.1f}" if rates else f"{name} failed")
    print(f"# {plural(load.connections, 'connection')}" + (f", {size_text(load.size)} a call" if load.size else "") +
          (f", paced to {load.rate / 1e9:g} Gbit/s each" if load.rate else "") + ": " + ", ".join(medians),
          file=sys.stderr, flush=True)
    return samples


def spread(values, form):
    """'median (min-max)' of the values present, the median alone for one, '-' for none."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return form.format(values[0])
    return f"{form.format(statistics.median(values))} ({form.format(min(values))}-{form.format(max(values))})"


def ratio(mine, theirs):
    """testio's median over the peer's, and the min-max of the rounds' own ratios (the tools ran
    side by side in each round): '1.23 (1.10-1.31)'."""
    pairs = [(a, b) for a, b in zip(mine, theirs) if a is not None and b]
    if not pairs:
        return "-"
    of_medians = statistics.median(a for a, _ in pairs) / statistics.median(b for _, b in pairs)
    if len(pairs) == 1:
        return f"{of_medians:.2f}"
    each = [a / b for a, b in pairs]
    return f"{of_medians:.2f} ({min(each):.2f}-{max(each):.2f})"


def size_text(size):
    """1048576 -> '1 MiB', 131072 -> '128 KiB', 1000 -> '1000 B'."""
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} B"


def plural(count, noun):
    return f"{count} {noun}{'s' if count != 1 else ''}"


def of_rounds(args):
    return f"{plural(args.repeat, 'round')} of {args.seconds} s"


def failures(samples):
    return sum(1 for values in samples.values() for s in values if s is None)


def say_failures(count):
    if count:
        print(f"({plural(count, 'sample')} failed and left out: the reasons are on stderr)")


def rate_tables(title, peers, per_count, size_of, args):
    """A part's Gbit/s table (a row a tool, a column a connection count) and testio's ratios."""
    counts = [n for n, _ in per_count]
    print(f"\n{title}: receiver Gbit/s, median (min-max) of {of_rounds(args)}")
    header = ["tool", "call size"] + [f"{n} conn" for n in counts]
    table = [[peer.name, size_of(peer)] +
             [spread([s[0] if s else None for s in samples[peer.name]], "{:.1f}") if peer.name in samples else "-"
              for _, samples in per_count] for peer in peers]
    emit(header, table, args.markdown)
    print("\ntestio / peer: ratio of the medians (min-max of each round's ratio)")
    header = ["testio / peer"] + [f"{n} conn" for n in counts]
    table = []
    for peer in peers:
        if peer.name.startswith("testio"):
            continue
        row = [peer.name]
        for _, samples in per_count:
            if peer.name not in samples:
                row.append("-")
                continue
            row.append(ratio([s[0] if s else None for s in samples["testio"]],
                             [s[0] if s else None for s in samples[peer.name]]))
        table.append(row)
    emit(header, table, args.markdown)
    say_failures(sum(failures(samples) for _, samples in per_count))


def cpu_per_gb(samples, load, both):
    """Each sample's CPU-seconds per GB (None for a failed one): both processes', or the receiver's
    (the server's) alone."""
    def per_gb(s):
        gigabytes = s[0] * load.seconds / 8
        return ((s[1] + s[2]) if both else s[2]) / gigabytes if gigabytes else None
    return [per_gb(s) if s else None for s in samples]


def cpu_table(peers, samples, load, args):
    """(c): each tool's Gbit/s and CPU-seconds per GB, both processes and the receiver alone."""
    print(f"\n(c) CPU per GB at {load.connections} x {load.rate / 1e9:g} Gbit/s paced, each tool's own call size: "
          f"median (min-max) of {of_rounds(args)}")
    header = ["tool", "Gbit/s", "both CPU-s/GB", "receiver CPU-s/GB", "testio / tool both", "testio / tool receiver"]
    table = []
    mine = samples.get("testio", [])
    for peer in peers:
        got = samples.get(peer.name)
        if got is None:
            continue
        both, receiver = cpu_per_gb(got, load, True), cpu_per_gb(got, load, False)
        row = [peer.name, spread([s[0] if s else None for s in got], "{:.2f}"), spread(both, "{:.3f}"),
               spread(receiver, "{:.3f}")]
        if peer.name.startswith("testio"):
            row += ["", ""]
        else:
            row += [ratio(cpu_per_gb(mine, load, True), both), ratio(cpu_per_gb(mine, load, False), receiver)]
        table.append(row)
    emit(header, table, args.markdown)
    say_failures(failures(samples))


def receive_paths(args, peers):
    """(d)'s receivers: testio with each engine and each receive mode it does not refuse (the
    client's --engine runs on both sides, so the paced sender is that engine's too), then every
    iperf3 of the run (their receiver is iperf3's one way to read)."""
    variants = [testio_peer(args.testio, f"testio {engine} {mode}", "--engine", engine, "--recv-mode", mode)
                for engine, mode in runnable_paths(args.testio, "# (d) testio")]
    return variants + [peer for peer in peers if peer.name.startswith("iperf3")]


def receive_path_table(receivers, samples, load, args):
    """(d): each receiver's CPU-seconds per GB, and its ratio to each iperf3's receiver."""
    iperf3s = [peer.name for peer in receivers if peer.name.startswith("iperf3") and peer.name in samples]
    print(f"\n(d) the receive path at {load.connections} x {load.rate / 1e9:g} Gbit/s paced: the receiver's "
          f"CPU-s per GB, median (min-max) of {of_rounds(args)}")
    header = ["receiver", "Gbit/s", "receiver CPU-s/GB"] + [f"/ {name}" for name in iperf3s]
    table = []
    for peer in receivers:
        got = samples.get(peer.name)
        if got is None:
            continue
        cost = cpu_per_gb(got, load, False)
        row = [peer.name, spread([s[0] if s else None for s in got], "{:.2f}"), spread(cost, "{:.3f}")]
        for name in iperf3s:
            row.append("" if name == peer.name else ratio(cost, cpu_per_gb(samples[name], load, False)))
        table.append(row)
    emit(header, table, args.markdown)
    say_failures(failures(samples))


def parse_size(text):
    """'1M', '128K', '1048576': bytes, binary multiples (as -l takes them in all four tools)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().removesuffix("ib")
    if text[-1:] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def parse_paced(text):
    """'8x1.25G': (8 connections, 1.25e9 bits/s each)."""
    count, _, rate = text.lower().partition("x")
    return int(count), int(parse_rate(rate))


def peers_table(args):
    cores = len(os.sched_getaffinity(0))
    peers, missing = peers_for(args, cores)
    size = parse_size(args.call_size)
    paced_count, paced_rate = parse_paced(args.paced)
    connections = args.connections or [1, 8, 32, 128]
    if size < 1024 or size > 1 << 20 or paced_count < 1 or paced_count > 128 or paced_rate < 1e6 or \
            max(connections) > 1024 or min(connections) < 1:
        sys.exit("bench --peers: --call-size 1K..1M (iperf3's largest), --paced N x RATE with N 1..128 and RATE "
                 "at least 1M, --connections 1..1024")
    parts = set(args.parts)
    if not parts or not parts <= set("abcd"):
        sys.exit(f"bench --peers: --parts {args.parts}: letters of abcd, e.g. --parts d")
    receivers = receive_paths(args, peers) if "d" in parts else []
    runs = args.repeat * (len(peers) * (len(connections) * len(parts & set("ab")) + ("c" in parts)) +
                          len(receivers))
    print(f"# {runs} runs of {args.seconds} s: about {runs * (args.seconds + 1) / 60:.0f} min",
          file=sys.stderr, flush=True)

    def interrupted(signum, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)
    processes = Processes()
    try:
        defaults = [(n, rounds(processes, peers, Load(n, args.seconds, None, None), args.repeat))
                    for n in connections] if "a" in parts else []
        sized = [(n, rounds(processes, peers, Load(n, args.seconds, size, None), args.repeat))
                 for n in connections] if "b" in parts else []
        paced = Load(paced_count, args.seconds, None, paced_rate)
        cpu = rounds(processes, peers, paced, args.repeat) if "c" in parts else {}
        received = rounds(processes, receivers, paced, args.repeat) if receivers else {}
    except KeyboardInterrupt:
        sys.exit("bench --peers: interrupted; every process it started is stopped")
    finally:
        processes.stop()

    print(f"tools/bench.py --peers: loopback (127.0.0.1), {cores} cores, Linux {platform.release()}; "
          f"the tools take turns in each round, a fresh server for every run")
    for peer in peers:
        print(f"  {peer.name:<24} {peer.path}")
    if missing:
        print(f"  not given, so not run: {', '.join(missing)} (or TESTIO_BENCH_IPERF3, _IPERF2, _NEPER)")
    if defaults:
        rate_tables("(a) each tool at its defaults", peers, defaults, lambda peer: peer.default_size, args)
    if sized:
        rate_tables(f"(b) one call size for all, {size_text(size)}", peers, sized, lambda peer: size_text(size),
                    args)
    if cpu:
        cpu_table(peers, cpu, paced, args)
    if received:
        receive_path_table(receivers, received, paced, args)
    print("""
Call size: testio -l (the client's, which the server reads with too); iperf3 -l (the client's,
sent to the server); iperf 2 -l on both sides (each reads or writes its own); neper -B on both
sides. Engine: testio's default (uring; asio before f4cde6e). Threads: testio min(connections,
cores) a side; iperf3 3.16 and later one a stream, 3.12 one in all; iperf 2 one a connection;
neper -T min(connections, cores) a side (its own default is 1). Pacing in (c): testio, iperf3 and iperf 2 -b (in the application, per connection); neper
-m (SO_MAX_PACING_RATE: the kernel paces). Gbit/s is the receiver's; CPU is user + system of
every thread from /proc/PID/stat at exit, over GB = Gbit/s x seconds / 8; the receiver is the
server in every tool. In (d) testio's --engine runs on both sides (the paced sender too) and
--recv-mode on the receiver; iperf3 reads with read() into one buffer a stream.""")

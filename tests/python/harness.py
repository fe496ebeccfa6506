"""Shared pieces of the Python integration tests: a testio server on a kernel-chosen port of
127.0.0.1, a client runner, raw protocol helpers and a small TAP runner. Traffic goes to
127.0.0.1 only; every wait is bounded."""
import fcntl
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import shutil
import tempfile
import time

IPERF3 = shutil.which("iperf3") or "/usr/bin/iperf3"  # Debian's, for tests beside testio

BINARY = os.environ.get("TESTIO_BINARY", "")


def _sanitized():
    """Whether the binary under test runs under ASan or TSan: tools/test.sh sets ASAN_OPTIONS or
    TSAN_OPTIONS for those steps; run by hand, the binary (argv[1]) links libasan or libtsan."""
    if os.environ.get("ASAN_OPTIONS") or os.environ.get("TSAN_OPTIONS"):
        return True
    binary = sys.argv[1] if len(sys.argv) > 1 and os.path.isfile(sys.argv[1]) else BINARY
    if not binary:
        return False
    try:
        linked = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(re.search(r"\blib[at]san\.so", linked))


# Sanitizers keep freed memory in quarantine, shadow every byte and slow every start and call:
# the suites check memory only without them, and the heaviest run the same checks on fewer
# processes and connections under them (the release run keeps the full scale).
SANITIZED = _sanitized()

# The pace of a client whose test only holds a place on the server (a slot, a queue position, a
# series) while something else is checked: unpaced, its seconds of loopback traffic take both cores
# from the processes under test (one such 20 s client was 31 of its test's 37 CPU-s under ASan).
HOLDS_A_SLOT = ("-b", "100M")

# The pace of a testio client whose bytes or report a test checks, but never its rate: in all, over
# its connections. Unpaced, every second of a loopback test copies as fast as both cores allow, and
# in CI suites run side by side beside a compiler: the release suites' unpaced seconds were
# most of their CPU (430 of 630 CPU-s in the kernel). 1 Gbit/s still fills every interval.
RATE_NOT_CHECKED = ("--total-rate", "1G")
# The same for iperf3's own client, whose -b is per stream.
IPERF3_RATE_NOT_CHECKED = ("-b", "500M")


class Failure(AssertionError):
    pass


class Skip(Exception):
    """Raised by a test that cannot run here; the text says why (printed as a TAP SKIP)."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_until(predicate, limit, what):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise Failure(f"timed out after {limit} s waiting for {what}")


def appending_file():
    """A temporary file for a child's output. The child shares its offset with our reads, so the
    child's writes must go to the end whatever that offset is (O_APPEND); without it a write made
    while we read lands at the read position, over earlier output."""
    file = tempfile.TemporaryFile(mode="w+")
    fcntl.fcntl(file.fileno(), fcntl.F_SETFL, fcntl.fcntl(file.fileno(), fcntl.F_GETFL) | os.O_APPEND)
    return file


class Server:
    """testio -s on 127.0.0.1 with a kernel-chosen port; terminated (then killed) on exit.
    `prefix` runs it under another command (e.g. ip netns exec NS)."""

    def __init__(self, *extra, bind="127.0.0.1", prefix=(), env=None):
        self.err, self.out = appending_file(), appending_file()
        self.process = subprocess.Popen([*prefix, BINARY, "-s", "-B", bind, "-p", "0", *extra],
                                        stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL, env=env)
        self.port = None
        try:
            wait_until(lambda: self._find_port() or self.process.poll() is not None, 10, "the server to listen")
        except Failure:
            pass
        if self.port is None:
            self.process.kill()
            self.process.wait(10)
            raise Failure("the server did not start: " + self.stderr())

    def _find_port(self):
        match = re.search(r"listening on \S+:(\d+)", self.stderr())
        if match:
            self.port = match.group(1)
        return self.port is not None

    def stderr(self):
        self.err.seek(0)
        return self.err.read()

    def stdout(self):
        self.out.seek(0)
        return self.out.read()

    def wait_log(self, text, limit=20, count=1):
        wait_until(lambda: self.stderr().count(text) >= count, limit, f"the server to log {text!r}")

    def wait_for_tests(self, count=1, limit=20):
        """Until the server has logged the requests of `count` testio tests ("test #N from PEER: ...")."""
        wait_until(lambda: len(re.findall(r"test #\d+ from \S+: ", self.stderr())) >= count, limit,
                   f"the server to log {count} test requests")

    def wait_for_reports(self, count=1):
        """Until the server has written the reports of `count` tests. It answers the client with
        its results first, so a client that has ended does not mean the server's report is out;
        the "finished" line is logged after it."""
        self.wait_log(" finished", count=count)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.out.close()
        self.err.close()


def client_argv(server, *args):
    return [BINARY, "-c", "127.0.0.1", "-p", server.port, *args]


def client(server, *args, code=0, limit=120):
    done = subprocess.run(client_argv(server, *args), capture_output=True, text=True, timeout=limit,
                          stdin=subprocess.DEVNULL)
    if done.returncode != code:
        # What the server said too: a test it ended early is explained only in its log.
        said = server.stderr()[-1500:] if hasattr(server, "stderr") else ""
        raise Failure(f"client {' '.join(args)}: exit {done.returncode}, wanted {code}: {done.stderr}"
                      + (f"\nthe server's log ends: {said}" if said else ""))
    return done


def testio(*args, code=0, limit=120):
    """The binary with `args` (no server of ours), checked to exit with `code`."""
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=limit, stdin=subprocess.DEVNULL)
    check(done.returncode == code, f"testio {' '.join(args)}: exit {done.returncode}, wanted {code}: "
                                   f"{done.stderr[-800:]}")
    return done


def free_port_range_outside_the_ephemeral_ones(length):
    """`length` consecutive ports no socket holds, above the kernel's ephemeral range: ports in it
    come and go with every connection another test (or anything on the host) opens."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
        ephemeral_last = int(ranges.read().split()[1])
    held = {int(port) for port in re.findall(r":(\d+)\s", subprocess.run(
        ["ss", "-tanH"], capture_output=True, text=True).stdout)}
    candidates = [first for first in range(ephemeral_last + 1, 65537 - length)
                  if not held.intersection(range(first, first + length))]
    check(candidates, f"no {length} free ports above {ephemeral_last}")
    return random.choice(candidates)


def wait_for_data(port, connections, limit=20):
    """Until `connections` client connections to 127.0.0.1:`port` have each moved over 64 KiB
    (the control connection moves less): the test is past its start and data flows. Polls ss."""
    def moving():
        listing = subprocess.run(["ss", "-tinH", "state", "established", f"( dport = :{port} )"],
                                 capture_output=True, text=True).stdout
        moved = [max([int(count) for count in re.findall(r"bytes_(?:acked|received):(\d+)", block)] or [0])
                 for block in re.split(r"\n(?=\S)", listing)]
        return sum(count > 65536 for count in moved) >= connections
    wait_until(moving, limit, f"data on {connections} connections to port {port}")


def start_client(server, *args):
    return subprocess.Popen(client_argv(server, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)


def start_client_following(server, *args):
    """start_client() with -v, its stderr in a file that can be read while it runs: for a test that
    must know when the window has opened (wait_for_window()), which no fixed sleep tells on a busy
    machine."""
    said = appending_file()
    process = subprocess.Popen(client_argv(server, "-v", *args), stdout=subprocess.PIPE, stderr=said,
                               text=True, stdin=subprocess.DEVNULL)
    process.said = said
    return process


def client_said(process):
    """What a client started with start_client_following() has written to stderr so far."""
    process.said.seek(0)
    return process.said.read()


def wait_for_client_to_say(process, text, count=1, limit=30):
    """Until a client started with start_client_following() has said `text` `count` times; fails
    if it ends first."""
    wait_until(lambda: client_said(process).count(text) >= count or process.poll() is not None, limit,
               f"the client to say {text!r}")
    check(process.poll() is None, f"the client ended before it said {text!r}: {client_said(process)}")


def wait_for_window(process, limit=30):
    """Until a client started with start_client_following() says its test started: the window is
    open, so a SIGINT now ends it early instead of stopping the client."""
    wait_for_client_to_say(process, "test started", limit=limit)


def interrupt_client(process, limit=30):
    """SIGINT to a client started with start_client() or start_client_following(): (stdout,
    stderr) once it has ended, which it must within `limit` seconds, with exit 1 (the test ended
    early)."""
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise Failure(f"the client did not end within {limit} s of SIGINT")
    if hasattr(process, "said"):
        err = client_said(process)
    check(process.returncode == 1, f"exit {process.returncode} after SIGINT: {err}")
    return out, err


def finish(process, limit=60):
    """(exit code, stdout, stderr) of a started process, once it ends within `limit`."""
    out, err = process.communicate(timeout=limit)
    return process.returncode, out, err


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failure(f"no VmRSS for {pid}")


def settled_figures(pid):
    """An idle server's (descriptors, threads) once three samples half a second apart agree (a
    sanitizer runtime may keep a thread of its own for a while)."""
    samples = []

    def settled():
        samples.append(descriptors_and_threads(pid))
        time.sleep(0.5)
        return len(samples) >= 3 and samples[-1] == samples[-2] == samples[-3]
    wait_until(settled, 30, "the idle server's descriptors and threads to settle")
    return samples[-1]


def sums(report):
    """(sender bytes, receiver bytes) from a text report's SUM lines; -1 where missing."""
    sent = re.search(r"\[  SUM\] sender\s+(\d+)", report)
    received = re.search(r"\[  SUM\] receiver\s+(\d+)", report)
    return (int(sent.group(1)) if sent else -1, int(received.group(1)) if received else -1)


def random_file(directory, size, name="data.bin"):
    """A file of `size` random bytes in `directory`; its path."""
    path = os.path.join(directory, name)
    with open(path, "wb") as out:
        out.write(os.urandom(size))
    return path


def connect(port, timeout=10):
    return socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)


PREAMBLE_MAGIC = b"\x9etio"
PROTOCOL_VERSION = 5  # src/control/protocol.hpp's kProtocolVersion


def preamble(kind=b"C", version=PROTOCOL_VERSION, test_id=0, stream=0):
    return PREAMBLE_MAGIC + kind + bytes([version]) + b"\0\0" + struct.pack(">QI", test_id, stream) + b"\0" * 4


def frame(body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return struct.pack(">I", len(data)) + data


def read_frame(sock):
    """One control frame as a dict, or None when the server closed first."""
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            return None
        header += chunk
    (length,) = struct.unpack(">I", header)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return json.loads(body)


def read_until_closed(sock, limit=20):
    sock.settimeout(limit)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:  # closed on us with data unread: closed all the same
            return data
        if not chunk:
            return data
        data += chunk


def children_of(pid):
    """Pids whose parent is `pid`, from /proc (zombies left out: they are gone but for a reaper)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return found


def alive(pid):
    """Whether `pid` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def descriptors_and_threads(pid):
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def engine_refuses(engine, *options):
    """True when testio refuses --engine ENGINE with these options up front (exit 2) on this build and host."""
    done = subprocess.run([BINARY, "-c", "127.0.0.1", "-p", "1", "-n", "1K", "--engine", engine, *options],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    return done.returncode == 2


TESTS = []


def test(function):
    """Registers a test function of the suite being run (one suite per process)."""
    TESTS.append(function)
    return function


def schema_checker(schema_path):
    """A function that checks a JSON document against the schema at `schema_path` and returns it."""
    import jsonschema  # only the suites that read JSON need python3-jsonschema
    with open(schema_path) as schema_file:
        validator = jsonschema.Draft7Validator(json.load(schema_file))

    def valid(document):
        errors = list(validator.iter_errors(document))
        check(not errors, f"schema: {[e.message[:150] for e in errors[:2]]}")
        return document
    return valid


def run_tap(tests):
    """Runs each test function, printing TAP; returns the exit code."""
    print(f"1..{len(tests)}", flush=True)
    failed = 0
    for number, function in enumerate(tests, 1):
        started = time.monotonic()
        try:
            function()
            print(f"ok {number} - {function.__name__}", flush=True)
        except Skip as reason:
            print(f"ok {number} - {function.__name__} # SKIP {reason}", flush=True)
        except Exception as error:  # report every failure and go on to the next test
            failed += 1
            print(f"not ok {number} - {function.__name__}", flush=True)
            for line in f"{type(error).__name__}: {error}".splitlines():
                print(f"# {line}", flush=True)
                # meson prints a failed test's stderr, not its TAP comments: CI logs need the reason
                print(f"{function.__name__}: {line}", file=sys.stderr, flush=True)
        print(f"# {function.__name__} took {time.monotonic() - started:.2f} s", flush=True)
    return 1 if failed else 0


def listening(port):
    wanted = f":{int(port):04X} "
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            if any(wanted in line and line.split()[3] == "0A" for line in lines):
                return True
    return False


class Iperf3Server:
    """A one-off `iperf3 -s -1 -J` on 127.0.0.1; its report is read once it exits."""

    def __init__(self, one_off=True):
        # A port above the ephemeral range, free when chosen; should something take it before
        # iperf3 binds it, iperf3 exits and another port is tried.
        for _ in range(3):
            self.port = str(free_port_range_outside_the_ephemeral_ones(1))
            argv = [IPERF3, "-s", "-B", "127.0.0.1", "-p", self.port] + (["-1", "-J"] if one_off else [])
            self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            stdin=subprocess.DEVNULL)
            wait_until(lambda: listening(self.port) or self.process.poll() is not None, 10,
                               "iperf3 -s to listen")
            if self.process.poll() is None:
                return
        raise Failure(f"iperf3 -s could not listen: {self.process.communicate()}")

    def report(self):
        out, _ = self.process.communicate(timeout=30)
        return json.loads(out)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=10)


def main(tests=None):
    global BINARY
    if len(sys.argv) > 1:
        BINARY = sys.argv[1]
    os.environ["TESTIO_BINARY"] = BINARY
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(run_tap(TESTS if tests is None else tests))

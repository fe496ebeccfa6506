#!/usr/bin/python3
"""iperf3's command line as scripts type it: every option of iperf3 3.21 is accepted or refused
in one sentence (never "does not exist"), docs/iperf3-options.md holds the table the binary
prints, the command lines real tools build run against `testio -s` with the JSON keys their
consumers read, and -S/--dscp's TOS byte is on both sides' data packets in a tshark capture.
Traffic goes to 127.0.0.1 only.
Usage: iperf3_cli_test.py TESTIO_BINARY DOCS_DIR."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema

import harness
from harness import Server, check

DOCS = sys.argv[2] if len(sys.argv) > 2 else "docs"
IPERF3 = shutil.which("iperf3") or "/usr/bin/iperf3"
TSHARK = shutil.which("tshark")
tests = []


def test(function):
    tests.append(function)
    return function


_table = []


def options_table():
    """`testio --iperf3-options`'s output, asked for once: three tests read it."""
    if not _table:
        _table.append(harness.testio("--iperf3-options").stdout)
    return _table[0]


def option_rows():
    """(names, argument, fit, text) for each row of `testio --iperf3-options`."""
    rows = []
    for line in options_table().splitlines()[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        names = re.findall(r"`(-[^`]+)`", cells[0])
        rows.append((names, cells[1].strip("`"), cells[2], cells[3].replace("\\|", "|")))
    return rows


def argument_for(argument):
    """A value of the kind iperf3's placeholder names, for a parse."""
    if not argument or argument.startswith("[="):
        return []
    return {"host[%dev]": ["127.0.0.1"], "algo": ["reno"], "dscp": ["ef"], "[kmgtKMGT]": ["m"],
            "dev": ["lo"], "str": ["words"], "name": ["/dev/null"], "file": ["/dev/null"],
            "n/n,m": ["0"], "username": ["user"], "port": ["5999"]}.get(argument, ["3000"])


@test
def every_iperf3_option_is_known_to_the_parser():
    rows = option_rows()
    check(len(rows) == 73, f"{len(rows)} rows, wanted iperf3 3.21's 73")
    # The names given a value parse in one run (a sanitized start costs 0.4 s): each value stands
    # right after its name, so none can take the next name as its value. A name given none could
    # (the parser takes any next word as a required value), so each of those parses alone.
    valued = [word for names, argument, _, _ in rows if argument_for(argument)
              for name in names for word in (name, *argument_for(argument))]
    alone = [[name] for names, argument, _, _ in rows if not argument_for(argument) for name in names]
    check(len(valued) > 100 and len(alone) > 30, f"{len(valued)} words with values, {len(alone)} names alone")
    # Under a sanitizer the names given none parse in one run too: each still goes through the
    # parser there, and whether one would take a next word as its value is the table's matter,
    # the same in every build, which the release run checks name by name.
    if harness.SANITIZED:
        alone = [[name for line in alone for name in line]]
    for line in [valued, *alone]:
        done = subprocess.run([harness.BINARY, "--help", *line], capture_output=True, text=True, timeout=60)
        check(done.returncode == 0 and "does not exist" not in done.stderr,
              f"{' '.join(line[:1]) if len(line) == 1 else 'the names with values'}: exit {done.returncode}: "
              f"{done.stderr}")


@test
def refused_options_say_what_to_use_in_one_sentence():
    refused = [row for row in option_rows() if row[2] == "refused"]
    check(len(refused) > 0, "no refused rows")
    for names, argument, _, text in refused:
        for name in names:
            done = harness.testio("-c", "127.0.0.1", "-p", "9", name, *argument_for(argument), code=2)
            line = done.stderr.strip()
            check(line == "testio: " + text and line.count("\n") == 0, f"{name}: {line!r}, wanted {text!r}")


@test
def the_docs_hold_the_table_the_binary_prints():
    with open(os.path.join(DOCS, "iperf3-options.md")) as page:
        text = page.read()
    check(options_table() in text,
          "docs/iperf3-options.md differs from `testio --iperf3-options`: paste its output between the markers")


@test
def letters_that_mean_something_else_here_say_so():
    done = harness.testio("-c", "127.0.0.1", "-T", "nightly run", code=2)
    check("--title" in done.stderr, done.stderr)
    check(harness.testio("-v").stdout.startswith("testio "), "-v alone should print the version")
    done = harness.testio("-c", "127.0.0.1", "-S", "300", code=2)
    check("0 to 255" in done.stderr, done.stderr)
    done = harness.testio("-c", "127.0.0.1", "-k", "10", "-t", "3", code=2)
    check("-k" in done.stderr, done.stderr)


def consumer_keys(document, udp=False):
    """What exporters and schedulers read from iperf3's -J, typed as iperf3 types them."""
    check("error" not in document, document.get("error"))
    end = document["end"]
    for key in ("sum_sent", "sum_received"):
        check(isinstance(end[key]["bits_per_second"], (int, float)), f"end.{key}.bits_per_second")
        check(isinstance(end[key]["bytes"], int), f"end.{key}.bytes")
    check(isinstance(end["cpu_utilization_percent"]["host_total"], (int, float)), "cpu_utilization_percent")
    check(document["intervals"] and "sum" in document["intervals"][0], "intervals[].sum")
    if udp:
        check(isinstance(end["sum"]["lost_percent"], (int, float)) and isinstance(end["sum"]["jitter_ms"], (int, float)),
              "end.sum's UDP keys")
    else:
        check(all(isinstance(s["sender"]["retransmits"], int) for s in end["streams"]), "streams[].sender.retransmits")


# Command lines as the tools build them, after their docs: an exporter's -J -t T -c HOST -p PORT
# [-R] [-b RATE]; pScheduler's iperf3 tool (parallel, omit, reverse, UDP bandwidth, zero-copy,
# congestion, window); a scheduler's -k; UDP with -u -b R -P N -O 2 -l L.
# Each also runs toward Debian's iperf3 -s (with --iperf3) where testio's iperf3 client takes it:
# not -b on TCP (iperf3's server would pace), nor -Z (testio's zero-copy is testio-to-testio).
REAL_LINES = [
    (["-J", "-t", "2"], False, True),
    (["-J", "-t", "2", "-R", "-b", "200M"], False, False),
    (["-P", "2", "-O", "1", "-R", "-t", "2", "-Z", "-C", "reno", "-w", "1M", "-J"], False, False),
    (["-P", "2", "-O", "1", "-R", "-t", "2", "-C", "reno", "-w", "1M", "-J"], False, True),
    (["-u", "-b", "50M", "-P", "2", "-O", "2", "-l", "1400", "-t", "2", "-J"], True, True),
    (["-k", "200", "-l", "128K", "-J", "--connect-timeout", "3000"], False, True),
]


def real_line(port, args):
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", port, *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"{args}: exit {done.returncode}: {done.stderr[-400:]}")
    return done.stdout


@test
def real_command_lines_run_against_iperf3s_server_too():
    for args, udp, toward_iperf3 in REAL_LINES:
        if toward_iperf3:
            with harness.Iperf3Server(one_off=True) as stock:
                consumer_keys(json.loads(real_line(stock.port, ["--iperf3", *args])), udp)


@test
def real_command_lines_run_with_their_consumers_keys():
    with Server() as server:
        for args, udp, _ in REAL_LINES:
            consumer_keys(json.loads(real_line(server.port, args)), udp)
        # A scheduler's --get-server-output --json --logfile FILE: the document goes to the file.
        with tempfile.TemporaryDirectory() as scratch:
            log = os.path.join(scratch, "run.json")
            done = harness.client(server, "-t", "1", "--get-server-output", "--json", "--logfile", log)
            with open(log) as written:
                document = json.load(written)
            consumer_keys(document)
            check(document["server_output_json"]["end"]["sum_received"]["bytes"] > 0, "no server output in the file")
        done = harness.client(server, "-J", "-k", "200", "-l", "128K")
        check(json.loads(done.stdout)["end"]["sum_received"]["bytes"] == 200 * 128 * 1024, "-k 200 -l 128K moved other bytes")


@test
def title_timestamps_and_extra_data():
    with Server() as server:
        done = harness.client(server, "-t", "1", "--title", "nightly", "--timestamps=%H:%M:%S ", "--forceflush")
        lines = [line for line in done.stdout.splitlines() if line]
        check(lines and all(re.match(r"\d\d:\d\d:\d\d nightly:  ", line) for line in lines), done.stdout[:400])
        document = json.loads(harness.client(server, "-t", "1", "-J", "--title", "nightly", "--extra-data", "run 7",
                                             "--dscp", "af21").stdout)
        check(document.get("title") == "nightly" and document.get("extra_data") == "run 7", str(document.keys()))
        check(document["start"]["testio"]["spec"].get("tos") == 18 << 2, "--dscp af21 is TOS 72 in the spec")


@test
def server_output_and_the_full_stream_document():
    with Server() as server:
        document = json.loads(harness.client(server, "-t", "2", "-J", "--get-server-output", *harness.RATE_NOT_CHECKED).stdout)
        with open(os.path.join(DOCS, "testio-output.schema.json")) as schema:
            errors = list(jsonschema.Draft7Validator(json.load(schema)).iter_errors(document))
        check(not errors, f"--get-server-output's document does not match the schema: {errors[:1]}")
        theirs = document["server_output_json"]
        check(theirs["start"]["testio"]["role"] == "server", "server_output_json is not the server's side")
        check(theirs["end"]["sum_received"]["bytes"] == document["end"]["sum_received"]["bytes"],
              "the server's received bytes differ from the client's report of them")
        check(len(theirs["intervals"]) >= 1, "no server intervals")
        text = harness.client(server, "-t", "1", "--get-server-output", *harness.RATE_NOT_CHECKED).stdout
        check("\nServer output:\n" in text and "cpu local (server)" in text.split("Server output:")[1], text[-600:])
        lines = harness.client(server, "-t", "1", "--json-stream", "--json-stream-full-output",
                               *harness.RATE_NOT_CHECKED).stdout
        events, at = [], 0
        for line in lines.splitlines():
            if line.startswith("{\"event\""):
                events.append(json.loads(line)["event"])
                at += len(line) + 1
        check(events[0] == "start" and "end" in events, f"events {events}")
        whole = json.loads(lines[at:])
        check(whole["end"]["sum_received"]["bytes"] > 0 and whole["intervals"], "no whole document after the events")
        # A stock iperf3 client asks testio's server for its output: its streams as it counted them.
        done = subprocess.run([IPERF3, "-c", "127.0.0.1", "-p", server.port, "-t", "1", "-P", "2", "--get-server-output",
                               *harness.IPERF3_RATE_NOT_CHECKED],
                              capture_output=True, text=True, timeout=60)
        told = done.stdout.split("Server output:")[-1]
        check(done.returncode == 0 and "testio" in told and told.count("receiver") == 3, done.stdout[-600:])
    # Toward a stock iperf3 server, its own document comes back (iperf3 listens on a port it is given).
    port = str(harness.free_port_range_outside_the_ephemeral_ones(1))
    # iperf3 -s -J sends its JSON document, iperf3 -s its text: each is kept as it came.
    for json_server, key in ((["-J"], "server_output_json"), ([], "server_output_text")):
        iperf3 = subprocess.Popen([IPERF3, "-s", "-1", "-p", port, *json_server], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            done = harness.testio("-c", "127.0.0.1", "-p", port, "--iperf3", "-t", "1", "-J", "--get-server-output")
            theirs = json.loads(done.stdout)[key]
            check((theirs["start"]["version"] if json_server else theirs).startswith("iperf")
                  or "Server listening" in str(theirs) or "Accepted connection" in str(theirs),
                  f"{key} is not iperf3's own output: {str(theirs)[:200]}")
        finally:
            iperf3.kill()
            iperf3.wait(10)


@test
def a_detached_server_writes_its_pid_and_removes_it():
    scratch = tempfile.mkdtemp()
    pidfile, log = os.path.join(scratch, "testio.pid"), os.path.join(scratch, "testio.log")
    port = str(harness.free_port_range_outside_the_ephemeral_ones(1))
    try:
        harness.testio("-s", "-B", "127.0.0.1", "-p", port, "-D", "-I", pidfile, "--logfile", log)
        harness.wait_until(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(), 10, "the pid file")
        pid = int(open(pidfile).read())
        harness.wait_until(lambda: "listening" in open(log).read(), 10, "the detached server to listen")
        check(pid != os.getpid() and os.path.exists(f"/proc/{pid}"), "the pid file names no running process")
        done = harness.testio("-c", "127.0.0.1", "-p", port, "-t", "1", "-J")
        check(json.loads(done.stdout)["end"]["sum_received"]["bytes"] > 0, "the detached server moved nothing")
        os.kill(pid, 15)
        harness.wait_until(lambda: not os.path.exists(pidfile), 20, "the pid file to go")
        check(harness.testio("-c", "127.0.0.1", "-D", code=2).stderr.count("server option") == 1, "-D with -c")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@test
def a_one_off_server_that_no_test_reaches_exits_at_its_idle_timeout():
    started = time.monotonic()
    done = harness.testio("-s", "-1", "-B", "127.0.0.1", "-p", "0", "--idle-timeout", "1", limit=30)
    check("--idle-timeout" in done.stderr and time.monotonic() - started < 20, done.stderr)
    harness.testio("-c", "127.0.0.1", "--idle-timeout", "1", code=2)


@test
def control_keepalive_is_on_the_control_connection():
    # -P 2: two data connections beside the control one, which the server names in its log
    # ("test #1 from 127.0.0.1:PORT"). ss -o shows a keepalive timer only on a socket with
    # SO_KEEPALIVE: the control connection's, counting down from IDLE (7 s, not the kernel's 7200).
    with Server() as server:
        running = harness.start_client(server, "-t", "4", "-P", "2", "--cntl-ka=7/3/2", "--snd-timeout", "9000",
                                       *harness.RATE_NOT_CHECKED)
        try:
            server.wait_for_tests()
            control_port = int(re.search(r"test #\d+ from 127\.0\.0\.1:(\d+): ", server.stderr()).group(1))
            harness.wait_for_data(server.port, 2)
            timers = {}

            def keepalive_on_control():
                shown = subprocess.run(["ss", "-tnoH", "state", "established", f"( dport = :{server.port} )"],
                                       capture_output=True, text=True, timeout=10).stdout
                timers.clear()
                for line in shown.splitlines():
                    local = re.search(r"127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:\d+", line)
                    if local:
                        timers[int(local.group(1))] = re.search(r"timer:\((\w+),([^,]*),", line)
                control = timers.get(control_port)
                return len(timers) == 3 and control is not None and control.group(1) == "keepalive"
            harness.wait_until(keepalive_on_control, 10,
                               f"ss -o to show the client's 3 connections, a keepalive timer on the control one "
                               f"(port {control_port})")
            left = timer_seconds(timers[control_port].group(2))
            check(left <= 7, f"the control connection's keepalive fires in {left} s: --cntl-ka's IDLE of 7 s was not set")
            data = {port: timer.group(0) for port, timer in timers.items()
                    if port != control_port and timer and timer.group(1) == "keepalive"}
            check(not data, f"keepalive on data connections: {data}")
        finally:
            code, _, err = harness.finish(running)
        check(code == 0, f"the client with --cntl-ka=7/3/2: exit {code}: {err[-400:]}")


def timer_seconds(text):
    """ss -o's time left on a timer in seconds: iproute2 prints minutes, seconds and milliseconds
    as "1min", "12sec", "6.744ms" (6 s 744 ms), "850ms" or "119min"."""
    parts = re.fullmatch(r"(?:(\d+)min)?(?:(\d+)(?:sec|\.))?(?:(\d+)ms)?", text)
    check(parts and text, f"ss -o printed a timer of {text!r}")
    minutes, seconds, milliseconds = (float(part or 0) for part in parts.groups())
    return minutes * 60 + seconds + milliseconds / 1000


class Tshark:
    """tshark on lo with capture filter `capture_filter`, printing `fields` of each packet; it
    captures once the constructor returns (tshark said "Capturing on"), and rows() stops it."""

    def __init__(self, capture_filter, *fields):
        self.out = tempfile.TemporaryFile(mode="w+")
        self.err = harness.appending_file()
        self.process = subprocess.Popen([TSHARK, "-i", "lo", "-f", capture_filter, "-l", "-T", "fields",
                                         *[word for field in fields for word in ("-e", field)],
                                         "-a", "duration:60"], stdout=self.out, stderr=self.err,
                                        stdin=subprocess.DEVNULL)
        harness.wait_until(lambda: "Capturing on" in self._stderr(), 20, "tshark to capture")

    def _stderr(self):
        self.err.seek(0)
        return self.err.read()

    def rows(self):
        """Each packet's fields, once what the kernel holds for tshark is in and it has stopped."""
        time.sleep(1)  # what the kernel holds for tshark
        self.process.terminate()
        self.process.wait(20)
        self.out.seek(0)
        return [line.split("\t") for line in self.out.read().splitlines()]


class Capture(Tshark):
    """tshark on lo for TCP port `port`: (tos, source port, destination port, payload) per packet
    but the handshake's (a SYN-ACK carries the listener's TOS: the kernel sends it before accept)."""

    def __init__(self, port):
        super().__init__(f"tcp port {port}", "ip.dsfield", "tcp.srcport", "tcp.dstport", "tcp.len", "tcp.flags.syn")

    def packets(self):
        return [(int(r[0], 0), int(r[1]), int(r[2]), int(r[3] or 0))
                for r in self.rows() if len(r) == 5 and r[0] and r[4] not in ("1", "True")]


def data_connection(packets, server_port):
    """Both directions of the connection that carried the most payload."""
    carried = {}
    for _, source, destination, length in packets:
        client_port = destination if source == int(server_port) else source
        carried[client_port] = carried.get(client_port, 0) + length
    busiest = max(carried, key=carried.get)
    return [p for p in packets if busiest in (p[1], p[2])]


def marked_both_ways(packets, server_port, tos, what):
    connection = data_connection(packets, server_port)
    to_server = [p for p in connection if p[2] == int(server_port)]
    to_client = [p for p in connection if p[1] == int(server_port)]
    check(to_server and to_client, f"{what}: no packets both ways")
    # A side's socket is marked once its process has it: an ACK the kernel sends before the
    # server's accept() returns is not. From the first marked packet on, every one must be.
    for direction, name in ((to_server, "to the server"), (to_client, "to the client")):
        marked = [i for i, p in enumerate(direction) if p[0] == tos]
        check(marked, f"{what}: no packet {name} carries TOS {tos:#x}")
        wrong = sorted({p[0] for p in direction[marked[0]:] if p[0] != tos})
        check(not wrong and marked[0] <= 2, f"{what}: packets {name} carry TOS {wrong} (first marked: packet "
                                            f"{marked[0]}), wanted {tos:#x}")


@test
def tos_is_on_both_sides_data_packets_on_the_wire():
    if not TSHARK:
        raise harness.Skip("tshark is not installed (tools/install-deps.sh adds it)")
    if os.geteuid() != 0:
        raise harness.Skip("capturing on lo needs root")
    with Server() as server:
        for args, tos in ((["-S", "0x10"], 0x10), (["-R", "--dscp", "ef"], 46 << 2)):
            capture = Capture(server.port)
            harness.client(server, "-t", "1", *args, *harness.RATE_NOT_CHECKED)
            marked_both_ways(capture.packets(), server.port, tos, " ".join(args))
        capture = Capture(server.port)
        done = subprocess.run([IPERF3, "-c", "127.0.0.1", "-p", server.port, "-t", "1", "-S", "0x10",
                               *harness.IPERF3_RATE_NOT_CHECKED],
                              capture_output=True, text=True, timeout=60)
        check(done.returncode == 0, done.stderr)
        marked_both_ways(capture.packets(), server.port, 0x10, "iperf3 -S 0x10 against testio -s")


@test
def repeating_payload_and_dont_fragment_on_the_wire():
    if not TSHARK or os.geteuid() != 0:
        raise harness.Skip("needs tshark and root to capture on lo")
    with Server() as server:
        capture = Tshark(f"port {server.port}", "udp.length", "ip.flags.df", "tcp.payload")
        harness.client(server, "-t", "2", "--repeating-payload", "-b", "100M")
        harness.client(server, "-t", "2", "-u", "-b", "10M", "--dont-fragment")
        rows = capture.rows()
        check(any(len(r) > 2 and "30313233343536373839" in r[2] for r in rows), "no TCP payload of repeating digits")
        udp = [r for r in rows if r[0]]
        check(udp and all(r[1] in ("1", "True") for r in udp), f"UDP datagrams without DF: {udp[:3]}")


@test
def a_server_bitrate_limit_refuses_and_ends_tests_above_it():
    # 10 Mbit/s averaged over 1 s: any unpaced loopback test moves far more.
    with Server("--server-bitrate-limit", "10M/1") as server:
        asked = harness.client(server, "2", "-b", "6M", "-t", "1", code=1)
        check("asks for 12.00 Mbit/s in all, above the server's cap of 10.00 Mbit/s (--server-bitrate-limit)"
              in asked.stderr, f"request over the cap: {asked.stderr}")
        ended = harness.client(server, "2", "-t", "5", "--json", code=1)
        error = json.loads(ended.stdout).get("error", "")
        check("above the server's cap of 10.00 Mbit/s" in error, f"the ended test's JSON error: {error!r}")
        for argv in (["-t", "5"], ["-t", "2", "-b", "6M", "-P", "2"]):
            stock = subprocess.run([IPERF3, "-c", "127.0.0.1", "-p", server.port, *argv], capture_output=True,
                                   text=True, timeout=60)
            check(stock.returncode != 0 and "total required bandwidth is larger than server limit" in stock.stdout + stock.stderr,
                  f"iperf3 {' '.join(argv)}: {stock.stdout[-300:]} {stock.stderr}")
        harness.client(server, "1", "-b", "5M", "-t", "1")  # under the cap: the server kept serving
    harness.testio("-c", "127.0.0.1", "--server-bitrate-limit", "1G", code=2)
    harness.testio("-s", "--server-bitrate-limit", "1G/90", code=2)


@test
def flow_label_is_on_the_clients_data_packets():
    if not TSHARK or os.geteuid() != 0:
        raise harness.Skip("needs tshark and root to capture on lo")
    with Server() as v4:
        refused = harness.client(v4, "-t", "1", "-L", "0x12345", code=1)
        check("-L labels IPv6 packets" in refused.stderr, f"-L toward IPv4: {refused.stderr}")
    with Server(bind="::1") as server:
        capture = Tshark(f"ip6 and tcp port {server.port}", "ipv6.flow", "tcp.dstport", "tcp.len")
        harness.testio("-c", "::1", "-p", server.port, "-t", "2", "-L", "0x12345", *harness.RATE_NOT_CHECKED)
        rows = capture.rows()
    # The data connection's packets to the server, by their payload (the control connection's are few).
    sent = [r for r in rows if len(r) == 3 and r[1] == server.port and r[2] and int(r[2]) > 1000]
    labels = sorted({int(r[0], 0) for r in sent})
    check(sent and labels == [0x12345], f"the data packets to the server carry flow labels {labels}, wanted 0x12345")


if __name__ == "__main__":
    harness.main(tests)

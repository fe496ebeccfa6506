#!/usr/bin/python3
"""iperf3 wire compatibility, both ways, against Debian's iperf3 on 127.0.0.1: stock iperf3 clients
against `testio -s`, and `testio -c --iperf3` against a stock `iperf3 -s`. Received byte counts
must agree exactly between the two programs' reports, rates within 10%.
Usage: iperf3_test.py TESTIO_BINARY SCHEMA_FILE."""
import json
import shutil
import struct
import subprocess
import sys

import jsonschema

import harness
from harness import Iperf3Server, Server, check, listening

with open(sys.argv[2]) as schema_file:
    VALIDATOR = jsonschema.Draft7Validator(json.load(schema_file))


def valid(document, what):
    errors = sorted(VALIDATOR.iter_errors(document), key=lambda e: list(e.path))
    check(not errors, f"{what} does not match the schema: " +
          "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:3]))

tests = []
IPERF3 = shutil.which("iperf3") or "/usr/bin/iperf3"


def test(function):
    tests.append(function)
    return function


def documents(text):
    """Every JSON document in `text` (testio prints one per test, whatever its directions)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        rest = text[at:].lstrip()
        if not rest:
            return found
        document, used = decoder.raw_decode(rest)
        found.append(document)
        at = len(text) - len(rest) + used


# A sanitized testio (tools/test.sh's ASan and TSan stages) runs many times slower, and the two
# programs' clocks drift apart with it: rates are compared on the release build only.
SANITIZED = harness.SANITIZED


# The rates compared come from equal byte counts (checked exactly), so they differ only in how each
# program timed the test. Beside the other half of the suites (tools/test.sh runs two at a time)
# one program's end of a 1 s test came 75 ms after the other's (7%, CI at 95cd97a), where 5% had
# held with one suite at a time: 10%, which a clock that misses by a whole interval still fails.
def close_enough(a, b, tolerance=0.10):
    if SANITIZED:
        return a > 0 and b > 0
    return a > 0 and b > 0 and abs(a - b) <= tolerance * max(a, b)


def iperf3_client(server, *args, code=0, limit=60):
    done = subprocess.run([IPERF3, "-c", "127.0.0.1", "-p", server.port, "-J", *args], capture_output=True,
                          text=True, timeout=limit, stdin=subprocess.DEVNULL)
    check(done.returncode == code, f"iperf3 {' '.join(args)}: exit {done.returncode}: {done.stdout[-600:]}")
    return json.loads(done.stdout)


def complete_lines(server):
    """The --json-stream lines the server has finished writing (a long line reaches the file in
    pieces; the last piece ends it with a newline)."""
    text = server.stdout()
    return text[:text.rfind("\n") + 1].splitlines()


def testio_ends(server, count):
    """The last `count` end events of a --json-stream server."""
    def ends():
        events = [json.loads(line) for line in complete_lines(server) if line.startswith("{")]
        return [event["data"] for event in events if event.get("event") == "end"]
    harness.wait_until(lambda: len(ends()) >= count, 20, f"{count} end events from the server")
    return ends()[-count:] if count else []


def testio_iperf3(port, *args, code=0):
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", port, "--iperf3", "-J", *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    check(done.returncode == code, f"testio --iperf3 {' '.join(args)}: exit {done.returncode}: {done.stderr}")
    return done


# --- stock iperf3 clients against testio -s ---------------------------------------------------

def check_against_testio(iperf3_end, testio_end, label):
    """Byte counts equal; rates within 10% for timed tests (a -n test of a few ms has no stable rate:
    iperf3 and testio time a few milliseconds differently)."""
    for key in ("sum_sent", "sum_received"):
        mine, theirs = testio_end[key], iperf3_end[key]
        check(mine["bytes"] == theirs["bytes"], f"{label} {key}: testio {mine['bytes']} iperf3 {theirs['bytes']}")
        check("-n" in label or close_enough(mine["bits_per_second"], theirs["bits_per_second"]),
              f"{label} {key} rate: testio {mine['bits_per_second']} iperf3 {theirs['bits_per_second']}")


@test
def iperf3_clients_forward_and_reverse_agree_with_the_testio_server():
    with Server("--json-stream") as server:
        for args in (["-t", "1"], ["-P", "8", "-t", "1"], ["-n", "40M"], ["-P", "8", "-n", "40M"],
                     ["-R", "-t", "1"], ["-R", "-P", "8", "-t", "1"], ["-R", "-n", "40M"]):
            report = iperf3_client(server, *args)
            end = report["end"]
            check(end["sum_received"]["bits_per_second"] > 0, f"{args}: no receiver rate")
            if "-R" not in args:  # testio's receivers count every byte the client sent
                check(end["sum_sent"]["bytes"] == end["sum_received"]["bytes"], f"{args}: {end['sum_sent']} {end['sum_received']}")
            check_against_testio(end, testio_ends(server, 1)[0], " ".join(args))
            server.out.truncate(0)


@test
def iperf3_clients_bidirectional_at_one_and_eight_streams():
    with Server("--json-stream") as server:
        for parallel in ("1", "8"):
            report = iperf3_client(server, "--bidir", "-P", parallel, "-t", "1")
            forward = testio_ends(server, 1)[0]  # one end event holds both directions
            for line in complete_lines(server):  # the end event is the last the server writes
                if line:
                    valid(json.loads(line), "the server's --json-stream line")
            end = report["end"]
            check(end["sum_received"]["bits_per_second"] > 0 and end["sum_received_bidir_reverse"]["bytes"] > 0,
                  f"-P {parallel}: {end.keys()}")
            check(len(end["streams"]) == 2 * int(parallel), f"-P {parallel}: {len(end['streams'])} streams")
            backward = forward["testio"]["bidir_reverse"]["end"]
            check_against_testio(end, forward, f"bidir -P {parallel} forward")
            reverse = {"sum_sent": end["sum_sent_bidir_reverse"], "sum_received": end["sum_received_bidir_reverse"]}
            check_against_testio(reverse, backward, f"bidir -P {parallel} reverse")
            server.out.truncate(0)


@test
def iperf3_client_options_are_honoured():
    with Server() as server:
        report = iperf3_client(server, "-l", "1M", "-w", "1M", "-M", "1400", "-N", "-C", "reno", "-O", "1", "-t", "1")
        check(report["end"]["sum_received"]["bits_per_second"] > 0, "no receiver rate")
        report = iperf3_client(server, "-P", "128", "-n", "16M", limit=90)
        check(report["end"]["sum_received"]["bytes"] == 16 * 1024 * 1024, f"{report['end']['sum_received']}")
        server.wait_log("iperf3 test from", count=2)


@test
def iperf3_udp_clients_agree_with_the_testio_server():
    """iperf3 -u against testio -s, each way, 32- and 64-bit counters: the received datagrams and
    their loss as testio's server counted them are what the iperf3 client reports."""
    with Server("--json-stream") as server:
        for args in (["-b", "100M"], ["-b", "100M", "-R"], ["-b", "50M", "--bidir", "-P", "2"],
                     ["-b", "100M", "--udp-counters-64bit", "-P", "3"], ["-b", "0", "-l", "1448"]):
            report = iperf3_client(server, "-u", "-t", "1", *args)
            end = report["end"]
            label = " ".join(args)
            check(end["sum"]["packets"] > 0 and end["sum_received"]["bytes"] > 0, f"{label}: {end['sum']}")
            testio_end = testio_ends(server, 1)[0]
            for key in ("sum_sent", "sum_received"):
                check(testio_end[key]["bytes"] == end[key]["bytes"],
                      f"{label} {key}: testio {testio_end[key]['bytes']} iperf3 {end[key]['bytes']}")
            check(testio_end["sum"]["lost_packets"] >= 0 and "udp" in testio_end["testio"], f"{label}: no udp part")
            if "-R" not in args and "--bidir" not in args:
                # testio received: the gaps it counted are iperf3's loss (iperf3 does not count the
                # datagrams lost after the last one that arrived; testio's sum does), its jitter iperf3's.
                gaps = sum(stream["receiver"]["testio"]["udp"]["lost"] for stream in testio_end["streams"])
                check(end["sum"]["lost_packets"] == gaps <= testio_end["sum"]["lost_packets"],
                      f"{label}: iperf3 says {end['sum']}, testio's gaps {gaps}, its sum {testio_end['sum']}")
                check(abs(end["sum"]["jitter_ms"] - testio_end["sum"]["jitter_ms"]) < 1e-6, f"{label}: jitter differs")
            server.out.truncate(0)
        iperf3_client(server, "-t", "1")  # TCP after UDP


@test
def hostile_iperf3_peers_leave_the_server_serving():
    cookie = b"abcdefghijklmnopqrstuvwxyz2345672345\0"
    with Server("--handshake-timeout", "1") as server:
        for params in (struct.pack(">I", 100000), struct.pack(">I", 5) + b"[1,2]",
                       struct.pack(">I", 15) + b'{"parallel":-3}', b""):
            with harness.connect(server.port) as peer:
                peer.sendall(cookie)
                check(peer.recv(1) == b"\x09", "no PARAM_EXCHANGE")
                if params:
                    peer.sendall(params)
                    answer = harness.read_until_closed(peer)
                    check(answer[:1] == b"\xfe" and len(answer) == 9, f"answer to {params!r}: {answer!r}")
        with harness.connect(server.port) as half:  # a cookie cut short
            half.sendall(cookie[:20])
            check(harness.read_until_closed(half) == b"", "a short cookie got an answer")
        server.wait_log("nor an iperf3 one")
        iperf3_client(server, "-t", "1")
        check(server.process.poll() is None, "the server exited")


@test
def a_busy_testio_server_gives_iperf3_clients_iperf3s_busy_answer():
    with Server() as server:
        running = harness.start_client(server, "-t", "3", *harness.HOLDS_A_SLOT)
        server.wait_for_tests()
        done = subprocess.run([IPERF3, "-c", "127.0.0.1", "-p", server.port, "-t", "1"], capture_output=True,
                              text=True, timeout=30)
        running.communicate(timeout=30)
        check(done.returncode != 0 and "busy" in (done.stdout + done.stderr), f"{done.returncode}: {done.stdout}{done.stderr}")


@test
def a_keyed_testio_server_refuses_iperf3_clients():
    with harness.tempfile.TemporaryDirectory() as directory:
        key = f"{directory}/key"
        with open(key, "w") as out:
            out.write("0123456789abcdef0123456789abcdef\n")
        harness.os.chmod(key, 0o600)
        with Server("--psk-file", key) as server:
            done = subprocess.run([IPERF3, "-c", "127.0.0.1", "-p", server.port, "-t", "1"], capture_output=True,
                                  text=True, timeout=30)
            check(done.returncode != 0 and "authorization" in (done.stdout + done.stderr).lower(),
                  f"{done.returncode}: {done.stdout}{done.stderr}")
            server.wait_log("which iperf3 cannot give")


# --- testio --iperf3 against a stock iperf3 -s ------------------------------------------------

@test
def testio_against_iperf3_forward_reverse_bidir():
    for args in (["-t", "1"], ["-P", "8", "-t", "1"], ["-n", "40M"], ["-R", "-t", "1"], ["-R", "-P", "8", "-t", "1"],
                 ["--bidir", "-t", "1"], ["--bidir", "-P", "8", "-t", "1"]):
        with Iperf3Server() as stock:
            done = testio_iperf3(stock.port, *args)
            theirs = stock.report()["end"]
        ours = documents(done.stdout)
        check(len(ours) == 1, f"{args}: {len(ours)} documents")
        valid(ours[0], f"testio --iperf3 {' '.join(args)} -J")
        if "--bidir" in args:  # the reverse direction rides in the one document
            ours.append(ours[0]["end"]["testio"]["bidir_reverse"])
        # iperf3 -s -J fills in only what it measured itself: what it received, or what it sent.
        pairs = [(ours[0]["end"]["sum_sent"], theirs["sum_sent"])] if "-R" in args else \
                [(ours[0]["end"]["sum_received"], theirs["sum_received"])]
        if "--bidir" in args:
            pairs.append((ours[1]["end"]["sum_sent"], theirs["sum_sent_bidir_reverse"]))
        for mine, stock_side in pairs:
            check(mine["bytes"] == stock_side["bytes"], f"{args}: testio {mine['bytes']} iperf3 {stock_side['bytes']}")
            check("-n" in args or close_enough(mine["bits_per_second"], stock_side["bits_per_second"]),
                  f"{args}: rates {mine['bits_per_second']} {stock_side['bits_per_second']}")
        # Receiving, testio reads to the EOF iperf3 sends at TEST_END: every byte. Sending, it waits
        # for its bytes to be acknowledged before TEST_END, but iperf3 stops counting at TEST_END,
        # and a single-threaded iperf3 busy sending streams of its own (--bidir) leaves some in its
        # socket buffers: 3-11% here, as iperf3 -c shows against its own server. So that side must
        # not exceed what was sent, and no stream may go uncounted.
        for document in ours:
            end = document["end"]
            sent, received = end["sum_sent"]["bytes"], end["sum_received"]["bytes"]
            if document is not ours[0] or "-R" in args:
                check(sent == received, f"{args}: {sent} sent, {received} received")
            else:
                check(0 < received <= sent, f"{args}: {sent} sent, {received} received")
                counted = [stream["receiver"]["bytes"] for stream in end["streams"]]
                check(all(counted), f"{args}: a stream iperf3 received nothing from: {counted}")


@test
def testio_udp_against_iperf3_each_way():
    """testio -c --iperf3 -u against iperf3 -s: what iperf3 received (or sent) is what testio's
    report says it did, and loss is never negative."""
    for args in (["-b", "100M"], ["-b", "100M", "-R"], ["-b", "50M", "--bidir", "-P", "2"], ["-n", "4M", "-b", "200M"],
                 ["-b", "100M", "--udp-counters-64bit", "-P", "2"]):
        with Iperf3Server() as stock:
            done = testio_iperf3(stock.port, "-u", *(["-t", "1"] if "-n" not in args else []), *args)
            theirs = stock.report()["end"]
        label = " ".join(args)
        ours = documents(done.stdout)
        check(len(ours) == 1, f"{label}: {len(ours)} documents")
        valid(ours[0], f"testio --iperf3 -u {label}")
        end = ours[0]["end"]
        udp = end["testio"]["udp"]
        check(udp["lost_datagrams"] <= udp["sent_datagrams"] and end["sum"]["packets"] > 0, f"{label}: {udp}")
        if "-R" in args:
            check(end["sum_sent"]["bytes"] == theirs["sum_sent"]["bytes"],
                  f"{label}: iperf3 sent {theirs['sum_sent']['bytes']}, testio says {end['sum_sent']['bytes']}")
        else:
            check(end["sum_received"]["bytes"] == theirs["sum_received"]["bytes"],
                  f"{label}: iperf3 received {theirs['sum_received']['bytes']}, testio says {end['sum_received']['bytes']}")
        if "-n" in args:
            check(end["sum_sent"]["bytes"] == 4 * 1024 * 1024, f"{label}: sent {end['sum_sent']['bytes']}")


@test
def testio_text_report_against_iperf3():
    with Iperf3Server() as stock:
        done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", stock.port, "--iperf3", "-t", "1"],
                              capture_output=True, text=True, timeout=60)
        stock.report()
    sent, received = harness.sums(done.stdout)
    check(done.returncode == 0 and sent > 0 and sent == received, f"{done.returncode}: {done.stdout}{done.stderr}")


@test
def testio_passes_tuning_to_an_iperf3_server():
    with Iperf3Server() as stock:
        done = testio_iperf3(stock.port, "-t", "1", "-C", "reno", "-M", "1200", "-N")
        theirs = stock.report()
    ours = json.loads(done.stdout)
    check(ours["end"]["sender_tcp_congestion"] == "reno", f"testio's congestion {ours['end']['sender_tcp_congestion']}")
    check(ours["start"]["testio"]["tuning"]["mss_requested"] == 1200 and ours["start"]["testio"]["tuning"]["no_delay"],
          f"tuning {ours['start']['testio']['tuning']}")
    test_start = theirs["start"]["test_start"]
    check(theirs["end"].get("receiver_tcp_congestion") == "reno", f"iperf3 -s congestion {theirs['end']}"[:300])
    check(ours["end"]["sum_received"]["bytes"] > 0 and test_start["num_streams"] == 1, "iperf3 ran the test")


@test
def a_busy_iperf3_server_is_reported_clearly():
    with Iperf3Server(one_off=False) as stock:
        running = subprocess.Popen([IPERF3, "-c", "127.0.0.1", "-p", stock.port, "-t", "10"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            harness.wait_for_data(stock.port, 1)
            done = testio_iperf3(stock.port, "-t", "1", code=1)
        finally:
            running.kill()
            running.wait(30)
    check("busy" in done.stderr, done.stderr)


@test
def options_iperf3_cannot_carry_are_one_sentence():
    cases = [(["-s", "--iperf3"], "client option"),
             (["-c", "127.0.0.1", "--iperf3", "-l", "2M"], "at most 1M"),
             (["-c", "127.0.0.1", "--iperf3", "-P", "129"], "128"),
             (["-c", "127.0.0.1", "--iperf3", "-R", "--bidir"], "exclude"),
             (["-c", "127.0.0.1", "--iperf3", "--recv-mode", "trunc"], "testio's own receiving side"),
             (["-c", "127.0.0.1", "--iperf3", "-A", "0"], "testio-to-testio only")]
    for args, mentions in cases:
        done = subprocess.run([harness.BINARY, *args], capture_output=True, text=True, timeout=30)
        check(done.returncode == 2 and mentions in done.stderr, f"{args}: {done.returncode} {done.stderr}")


if __name__ == "__main__":
    harness.main(tests)

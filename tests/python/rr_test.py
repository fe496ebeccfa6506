#!/usr/bin/python3
"""Request/response tests on 127.0.0.1: --rr against testio's own echo, and --rr --raw against
socat's EXEC:cat and a few lines of Python echo server. Usage: rr_test.py TESTIO_BINARY SCHEMA.
Counts and orderings only; no latency or rate is asserted."""
import json
import socket
import subprocess
import sys
import threading

import harness
from harness import Server, check, client, test

valid = harness.schema_checker(sys.argv[2])


def ordered(latency):
    keys = ["min", "p50", "p90", "p99", "p99_9", "max"]
    return all(latency[a] <= latency[b] for a, b in zip(keys, keys[1:]))


@test
def counted_messages_arrive_and_echo_exactly():
    with Server() as server:
        for msize, connections, num, depth in (("1K", "2", "300", "1"), ("100K", "1", "50", "1"), ("10K", "3", "200", "4")):
            document = json.loads(client(server, connections, "--rr", "--msize", msize, "--num", num, "--depth", depth,
                                         "--json").stdout)
            valid(document)
            rr = document["end"]["testio"]["rr"]
            size = {"1K": 1024, "100K": 102400, "10K": 10240}[msize]
            total = int(connections) * int(num)
            check(rr["messages"] == total, f"{rr['messages']} messages, want {total}")
            check(document["end"]["sum_sent"]["bytes"] == total * size == document["end"]["sum_received"]["bytes"],
                  "bytes sent, echoed and counted differ")
            check(ordered(rr["latency_us"]) and rr["latency_us"]["min"] > 0, f"latency figures: {rr['latency_us']}")
            check(rr["depth"] == int(depth) and document["start"]["testio"]["workload"] == "rr", "rr start fields")


@test
def timed_rr_reports_text():
    with Server() as server:
        text = client(server, "2", "--rr", "-t", "1").stdout
    check("request/response of 1 KiB, depth 1" in text, text.splitlines()[0])
    check("rr: " in text and "p99.9" in text and "messages/s" in text, f"no rr line:\n{text}")
    sent, received = harness.sums(text)
    check(sent > 0 and sent == received, "sender and receiver bytes differ")


def python_echo_server():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def serve(connection):
        with connection:
            while True:
                data = connection.recv(65536)
                if not data:
                    return
                connection.sendall(data)

    def accept():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


def raw_rr(port, *args):
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-p", str(port), "--raw", "--rr", *args, "--json"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"raw rr exit {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)["data"]


@test
def raw_rr_drives_a_python_echo_server():
    listener = python_echo_server()
    try:
        data = raw_rr(listener.getsockname()[1], "3", "--num", "200", "--msize", "4K", "--depth", "2")
    finally:
        listener.close()
    check(data["messages"] == 600 and ordered(data["latency_us"]), f"raw rr: {data}")
    # The rate is over the time the messages took (it once read 0 s and 0 messages/s).
    check(data["seconds"] > 0 and data["messages_per_second"] > 0, f"raw rr rate: {data}")


@test
def raw_rr_drives_socat_cat():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    echo = subprocess.Popen(["socat", f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr", "EXEC:cat"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        harness.wait_until(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 10, "socat to listen")
        data = raw_rr(port, "2", "--num", "100")
    finally:
        echo.terminate()
        echo.wait(10)
    check(data["messages"] == 200, f"raw rr against socat: {data}")


@test
def bad_rr_options_are_one_sentence():
    cases = [(["-c", "h", "--rr", "-n", "1M"], "--num"), (["-c", "h", "--msize", "2K"], "--rr"),
             (["-c", "h", "--rr", "--num", "5", "-t", "2"], "exclude"), (["-c", "h", "--rr", "--depth", "0"], "--depth"),
             (["-c", "h", "--rr", "--msize", "0"], "--msize"), (["-s", "--rr"], "client option")]
    for args, mentions in cases:
        done = subprocess.run([harness.BINARY, *args], capture_output=True, text=True, timeout=30)
        check(done.returncode == 2 and mentions in done.stderr, f"{args}: {done.returncode} {done.stderr}")


if __name__ == "__main__":
    harness.main()

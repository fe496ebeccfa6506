#!/usr/bin/python3
"""Hardening tests against the real binary on 127.0.0.1: concurrent tests, busy answers, keys,
access lists, hostile input, faults, signals, leaks, and a load of garbage and idle connections
beside a real test. Usage: hardening_test.py TESTIO_BINARY. Prints TAP.

No time or rate is asserted; waits are bounded only so that a hang fails instead of blocking."""
import os
import random
import signal
import socket
import stat
import struct
import tempfile
import time

import harness
from harness import (Server, check, client, connect, frame, preamble, read_frame, read_until_closed, start_client,
                     sums, wait_until)

tests = []


def test(function):
    tests.append(function)
    return function


finish = harness.finish
def equal_counts(report):
    sent, received = sums(report)
    check(sent > 0 and sent == received, f"sender {sent} and receiver {received} bytes: {report}")


@test
def concurrent_tests_run_side_by_side_and_say_so():
    with Server("--max-tests", "2") as server:
        first = start_client(server, "2", "-t", "4", *harness.RATE_NOT_CHECKED)
        server.wait_for_tests()
        second = client(server, "2", "-t", "1", *harness.RATE_NOT_CHECKED)
        code, out, err = finish(first)
        check(code == 0, f"the first test failed: {err}")
    equal_counts(out)
    equal_counts(second.stdout)
    check("1 other test beside this one" in out, f"the first report does not mention its neighbour:\n{out}")
    check("1 other test beside this one" in second.stdout, "the second report does not mention its neighbour")


@test
def beyond_max_tests_is_busy():
    with Server("--max-tests", "2") as server:
        running = [start_client(server, "1", "-t", "4", *harness.HOLDS_A_SLOT) for _ in range(2)]
        server.wait_for_tests(2)
        refused = client(server, "1", "-t", "1", "--max-wait", "0", code=1)
        check("busy running 2 tests" in refused.stderr and "--max-wait" in refused.stderr,
              f"busy message: {refused.stderr}")
        for process in running:
            code, _, err = finish(process)
            check(code == 0, f"a running test failed: {err}")


@test
def a_key_is_required_checked_and_never_shown():
    with tempfile.TemporaryDirectory() as directory:
        key_path = os.path.join(directory, "key")
        wrong_path = os.path.join(directory, "wrong")
        secret = "correct horse battery staple 1234"
        for path, text in ((key_path, secret), (wrong_path, "not the key at all")):
            with open(path, "w") as key_file:
                key_file.write(text + "\n")
            os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        with Server("--psk-file", key_path) as server:
            missing = client(server, "1", "-t", "1", code=1)
            check("requires a pre-shared key" in missing.stderr, f"no-key message: {missing.stderr}")
            wrong = client(server, "1", "-t", "1", "--psk-file", wrong_path, code=1)
            check("authentication failed" in wrong.stderr, f"wrong-key message: {wrong.stderr}")
            right = client(server, "1", "-t", "1", "--psk-file", key_path, "--json")
            check(secret not in right.stdout + right.stderr, "the key appears in the client's output")
            check(secret not in server.stderr() + server.stdout(), "the key appears in the server's output")
            check("authentication failed" in server.stderr(), "the server did not log the failed attempt")
        os.chmod(key_path, 0o644)
        with Server("--psk-file", key_path) as server:
            server.wait_log("readable by group or others")


@test
def allow_list_refuses_other_networks():
    with Server("--allow", "198.18.0.0/15,fd00::/8") as server:
        refused = client(server, "1", "-t", "1", code=1)
        check("closed" in refused.stderr or "reset" in refused.stderr.lower(), f"refusal: {refused.stderr}")
        server.wait_log("not in --allow")
    with Server("--allow", "10.0.0.0/8,127.0.0.0/8") as server:
        equal_counts(client(server, "1", "-t", "1").stdout)
    bad = harness.subprocess.run([harness.BINARY, "-s", "--allow", "127.0.0.1/40"], capture_output=True, text=True,
                                 timeout=30)
    check(bad.returncode == 2 and "prefix" in bad.stderr, f"bad --allow: {bad.returncode} {bad.stderr}")


def hello(sock):
    sock.sendall(preamble())
    message = read_frame(sock)
    check(message and message["type"] == "hello", f"no hello: {message}")


@test
def hostile_control_messages_get_an_error_and_the_server_keeps_serving():
    with Server() as server:
        cases = [
            (frame(b"{not json"), "not a JSON object"),
            (struct.pack(">I", 0xFFFFFFF0), "cap"),
            (frame({"type": "test_request", "connections": "many"}), "connections"),
            (frame({"type": "test_request", "connections": -4, "duration_s": 1}), "connections"),
            (frame({"type": "test_request", "connections": 1, "duration_s": 1e30, "total_bytes": 0, "threads": 0,
                    "client_threads": 1, "buffer": 1, "window": 0, "recv_mode": "recv", "interval_s": 1,
                    "omit_s": 0, "workload": "stream", "client_version": "x", "auth": ""}),
             "-t 1e+30 is above the cap"),
            (frame({"type": "test_request", "connections": 1, "duration_s": 1, "total_bytes": 0, "threads": 0,
                    "client_threads": 1, "buffer": 1, "window": 0, "recv_mode": "recv", "interval_s": 1,
                    "omit_s": 0, "client_version": "x", "auth": ""}), "workload"),
            (frame({**raw_request(1, 1.0), "connections": 100000}), "connection count 100000 is above the cap"),
            (frame({"type": "results"}), "test_request"),
        ]
        for payload, mentions in cases:
            with connect(server.port) as sock:
                hello(sock)
                sock.sendall(payload)
                answer = read_frame(sock)
                check(answer and answer["type"] == "error" and mentions in answer["message"],
                      f"answer to {payload[:40]!r}: {answer}")
        with connect(server.port) as sock:  # a newer protocol version
            sock.sendall(preamble(version=9))
            answer = read_frame(sock)
            check(answer and answer["code"] == "version", f"version answer: {answer}")
        with connect(server.port) as sock:  # a data connection for a test that does not exist
            sock.sendall(preamble(kind=b"D", test_id=12345, stream=0))
            read_until_closed(sock)
        server.wait_log("unknown test")
        equal_counts(client(server, "2", "-t", "1").stdout)


def raw_request(connections, duration_s=0.0, total_bytes=0):
    return {"type": "test_request", "connections": connections, "duration_s": duration_s,
            "total_bytes": total_bytes, "threads": 0, "client_threads": 1, "buffer": 65536, "window": 0,
            "recv_mode": "recv_into", "interval_s": 0, "omit_s": 0, "workload": "stream",
            "client_version": "raw", "auth": ""}


@test
def wrong_streams_and_a_reset_stream_are_handled():
    with Server() as server, connect(server.port) as control:
        hello(control)
        control.sendall(frame(raw_request(2, total_bytes=2000)))
        accepted = read_frame(control)
        check(accepted["type"] == "test_accepted", f"not accepted: {accepted}")
        test_id = accepted["test_id"]
        beyond = connect(server.port)
        beyond.sendall(preamble(kind=b"D", test_id=test_id, stream=7))
        read_until_closed(beyond)
        streams = [connect(server.port) for _ in range(2)]
        streams[0].sendall(preamble(kind=b"D", test_id=test_id, stream=0))
        # While the test still gathers (stream 1 has not come), so the server cannot have started.
        twice = connect(server.port)
        twice.sendall(preamble(kind=b"D", test_id=test_id, stream=0))
        read_until_closed(twice)
        streams[1].sendall(preamble(kind=b"D", test_id=test_id, stream=1))
        check(read_frame(control)["type"] == "start", "no start")
        streams[0].sendall(b"x" * 1000)
        streams[0].shutdown(socket.SHUT_WR)
        # Stream 1 is reset mid-test instead of closed: SO_LINGER 0 makes close() send RST.
        streams[1].sendall(b"y" * 10)
        streams[1].setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        streams[1].close()
        done = {"type": "sender_done", "intervals": [], "cpu": {"user_s": 0, "system_s": 0, "wall_s": 1},
                "congestion": "", "tests_beside": 0,
                "streams": [{"bytes": 1000, "calls": 1, "start_s": 0, "end_s": 1, "failed": False},
                            {"bytes": 1000, "calls": 1, "start_s": 0, "end_s": 1, "failed": False}]}
        control.sendall(frame(done))
        results = read_frame(control)
        check(results and results["type"] == "results", f"no results: {results}")
        check(results["streams"][0]["bytes"] == 1000 and not results["streams"][0]["failed"], "stream 0 is wrong")
        check(results["streams"][1]["failed"], f"the reset stream is not marked failed: {results['streams'][1]}")
        streams[0].close()
        beyond.close()
        twice.close()
        server.wait_log("beyond the test")
        server.wait_log("arrived twice")
        equal_counts(client(server, "2", "-t", "1").stdout)


@test
def a_client_gone_while_its_streams_gather_ends_its_test_at_once():
    """One of two data connections came, then the control connection closed: the server ends the
    test as the client goes (the wait for a stream that never comes would take 30 s or more), and
    a message out of turn instead of heartbeats ends it too."""
    with Server() as server:
        for goes in ("by closing", "by a message out of turn"):
            with connect(server.port) as control:
                hello(control)
                control.sendall(frame(raw_request(2, total_bytes=2000)))
                accepted = read_frame(control)
                check(accepted["type"] == "test_accepted", f"not accepted: {accepted}")
                stream = connect(server.port)
                stream.sendall(preamble(kind=b"D", test_id=accepted["test_id"], stream=0))
                if goes == "by closing":
                    control.close()
                else:
                    control.sendall(frame({"type": "results"}))
                    answer = read_frame(control)
                    check(answer and answer["type"] == "error" and "before the test started" in answer["message"],
                          f"answer to a message out of turn: {answer}")
            server.wait_log(" ended: ", limit=10, count=1 if goes == "by closing" else 2)
            read_until_closed(stream)
            stream.close()
        check("ended: the client went away" in server.stderr(), f"the log: {server.stderr()[-600:]}")
        equal_counts(client(server, "2", "-t", "1").stdout)


@test
def a_truncated_frame_times_out_with_an_error():
    with Server("--handshake-timeout", "1") as server, connect(server.port) as sock:
        hello(sock)
        sock.sendall(frame(raw_request(1, 1.0))[:20])  # the header promises more than arrives
        answer = read_frame(sock)
        check(answer and answer["type"] == "error" and "timed out" in answer["message"], f"answer: {answer}")


@test
def silent_and_trickling_connections_are_dropped():
    with Server("--handshake-timeout", "1") as server:
        with connect(server.port) as silent, connect(server.port) as trickle:
            for byte in preamble()[:3]:  # under the 4-byte magic, one byte at a time
                trickle.sendall(bytes([byte]))
                time.sleep(0.25)
            read_until_closed(silent, limit=20)
            read_until_closed(trickle, limit=20)
        server.wait_log("timed out", count=2)
        equal_counts(client(server, "1", "-t", "1").stdout)


@test
def garbage_and_idle_connections_do_not_spoil_a_running_test():
    with Server() as server:
        runner = start_client(server, "4", "-t", "3", *harness.RATE_NOT_CHECKED)
        # Running means its data flows: a data connection still before its preamble is as idle as
        # the load's (the server may close it for a newer one from the same address).
        harness.wait_for_data(server.port, 4)
        idle = [connect(server.port) for _ in range(50)]
        rng = random.Random(7)
        for _ in range(200):
            with connect(server.port) as garbage:
                garbage.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))))
        code, out, err = finish(runner)
        for sock in idle:
            sock.close()
        check(code == 0, f"the real test failed beside the load: {err}")
        equal_counts(out)
        equal_counts(client(server, "2", "-t", "1", *harness.RATE_NOT_CHECKED).stdout)


@test
def idle_connections_from_a_clients_own_address_do_not_lock_it_out():
    # More idle handshakes from 127.0.0.1 than --max-pending-per-peer allows it, then a real
    # client from that address: its connections take the places of the oldest idle ones.
    with Server("--max-pending-per-peer", "8") as server:
        idle = [connect(server.port) for _ in range(20)]
        try:
            equal_counts(client(server, "4", "-t", "1").stdout)
        finally:
            for sock in idle:
                sock.close()
        server.wait_log("closed the oldest idle one of 8 handshakes from 127.0.0.1")


@test
def client_sigint_ends_early_and_still_reports():
    with Server() as server:
        runner = start_client(server, "2", "-t", "60")
        harness.wait_for_data(server.port, 2)
        runner.send_signal(signal.SIGINT)
        code, out, err = finish(runner, limit=30)
    check(code == 1, f"exit {code} after SIGINT")
    check("INCOMPLETE: interrupted by SIGINT" in out, f"no interrupted note:\n{out}")
    equal_counts(out)


@test
def server_killed_mid_test_leaves_partial_results():
    with Server() as server:
        runner = start_client(server, "2", "-t", "60")
        harness.wait_for_data(server.port, 2)
        server.process.kill()
        code, out, err = finish(runner, limit=60)
    check(code == 1, f"exit {code} after the server died")
    check("INCOMPLETE" in out and "[  SUM] sender" in out, f"no partial report:\n{out}\n{err}")


@test
def server_sigterm_stops_cleanly():
    with Server() as server:
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(20)
        check(server.process.returncode == 0, f"exit {server.process.returncode} on SIGTERM")


@test
def no_descriptors_or_threads_leak_across_tests_and_faults():
    with Server("--max-tests", "2") as server:
        pid = server.process.pid
        equal_counts(client(server, "4", "-t", "1").stdout)  # first test: anything lazily created
        before = harness.settled_figures(pid)  # the idle count, once it stops changing
        victim = start_client(server, "8", "-t", "30")
        server.wait_for_tests(2)
        time.sleep(0.5)
        victim.kill()
        victim.wait(10)
        server.wait_log("went away")
        with connect(server.port) as sock:
            sock.sendall(b"garbage")
        equal_counts(client(server, "3", "-n", "30M").stdout)
        with connect(server.port) as sock:
            sock.sendall(preamble(version=9))
            read_until_closed(sock)
        wait_until(lambda: harness.descriptors_and_threads(pid) == before, 20,
                   f"descriptors and threads to return to {before} (now {harness.descriptors_and_threads(pid)})")


if __name__ == "__main__":
    harness.main(tests)

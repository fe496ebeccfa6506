#!/usr/bin/python3
"""--raw tests: nc (netcat-openbsd), socat and testio itself send a file to `testio -s --raw` over
127.0.0.1, and every digest printed must equal hashlib's of the file. Usage: raw_test.py TESTIO_BINARY."""
import hashlib
import json
import os
import re
import subprocess
import tempfile

import harness
from harness import Server, check, client

tests = []


def test(function):
    tests.append(function)
    return function


def sink_lines(server, count):
    harness.wait_until(lambda: server.stdout().count("\n") >= count, 30, f"{count} raw report lines")
    return server.stdout().splitlines()


@test
def nc_and_socat_digests_match_sha1sum():
    with tempfile.TemporaryDirectory() as directory, Server("--raw") as server:
        path = harness.random_file(directory, 5_000_003)
        with open(path, "rb") as data:
            expected = hashlib.sha1(data.read()).hexdigest()
        with open(path, "rb") as data:
            subprocess.run(["nc", "-N", "127.0.0.1", server.port], stdin=data, check=True, timeout=60,
                           capture_output=True)
        subprocess.run(["socat", "-u", f"FILE:{path}", f"TCP:127.0.0.1:{server.port}"], check=True, timeout=60,
                       capture_output=True)
        lines = sink_lines(server, 2)
    for line in lines:
        check(f"5000003 bytes" in line and line.endswith(f"sha1 {expected}"), f"sink line: {line}")


@test
def testio_raw_sender_and_sink_agree_on_sha256():
    with tempfile.TemporaryDirectory() as directory, Server("--raw", "--hash", "sha256", "--json") as server:
        path = harness.random_file(directory, 3_000_000)
        with open(path, "rb") as data:
            expected = hashlib.sha256(data.read()).hexdigest()
        sent = json.loads(client(server, "--raw", "--hash", "sha256", "-F", path, "--json").stdout)["data"]
        received = json.loads(sink_lines(server, 1)[0])["data"]
    check(sent["digest"] == expected and received["digest"] == expected, f"digests {sent} {received}")
    check(sent["bytes"] == received["bytes"] == 3_000_000, "byte counts differ")
    check(received["complete"] and received["calls"] > 0, f"sink figures: {received}")


@test
def generated_data_and_several_senders_at_once():
    with Server("--raw", "--hash", "none") as server:
        senders = [harness.start_client(server, "--raw", "-n", "20M", "--hash", "none") for _ in range(3)]
        for sender in senders:
            out, err = sender.communicate(timeout=60)
            check(sender.returncode == 0, f"a sender failed: {err}")
        lines = sink_lines(server, 3)
    ports = {re.search(r":(\d+):", line).group(1) for line in lines}
    check(len(ports) == 3, f"want one line per sender: {lines}")
    check(all("20971520 bytes" in line and line.endswith("none -") for line in lines), f"lines: {lines}")


@test
def one_off_sink_exits_after_one_connection():
    with tempfile.TemporaryDirectory() as directory, Server("--raw", "-1") as server:
        path = harness.random_file(directory, 1000)
        client(server, "--raw", "-F", path)
        server.process.wait(20)
        check(server.process.returncode == 0, f"exit {server.process.returncode}")


@test
def bad_raw_input_is_one_sentence():
    with Server("--raw") as server:
        missing = client(server, "--raw", "-F", "/nonexistent/file", code=1)
        check("cannot read /nonexistent/file" in missing.stderr, missing.stderr)
    cases = [(["-c", "127.0.0.1", "--raw", "4"], "one connection"),
             (["-c", "127.0.0.1", "--raw", "-F", "x", "-t", "3"], "whole file"),
             (["-c", "127.0.0.1", "-F", "x", "--rr"], "--rr"),
             (["-s", "--raw", "--hash", "md5"], "sha1, sha256, none"),
             (["-c", "127.0.0.1", "--hash", "sha256"], "--raw")]
    for args, mentions in cases:
        done = subprocess.run([harness.BINARY, *args], capture_output=True, text=True, timeout=30)
        check(done.returncode == 2 and mentions in done.stderr, f"{args}: {done.returncode} {done.stderr}")


if __name__ == "__main__":
    harness.main(tests)

#!/usr/bin/python3
"""HTTP downloads (-c URL --transfers) against servers testio did not write: Debian's nginx (plain
and TLS with a self-signed certificate made here), python3 -m http.server, and a Python server
that misbehaves on purpose. Saved files are compared byte for byte; 404s, redirects, a short body,
a reset, a stall and bad URLs each get their sentence. Usage: http_test.py TESTIO_BINARY SCHEMA.
Counts and contents only; no rate or time is asserted."""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

import harness
from harness import check, test, testio
from http_servers import MisbehavingServer, Nginx, PythonHttpServer, chunked_body

valid = harness.schema_checker(sys.argv[2])
SANITIZED = harness.SANITIZED

# Sizes around the edges: empty, one byte, below and above a read, a few MB.
SIZES = [0, 1, 4095, 65536, 300_001, 2_000_003, 6_000_000]


def files_of_sizes():
    return {f"files/{i}.bin": os.urandom(size) for i, size in enumerate(SIZES, 1)}


def transfers_of(done):
    document = valid(json.loads(done.stdout))
    return document, document["end"]["testio"]["transfers"]


@test
def nginx_bodies_are_counted_and_saved_byte_for_byte():
    files = files_of_sizes()
    with Nginx(files) as nginx, tempfile.TemporaryDirectory() as save:
        for extra in ([], ["--reuse"]):
            for name in os.listdir(save):
                os.unlink(os.path.join(save, name))
            done = testio("-c", nginx.url("files/{i}.bin"), "3", "--transfers", str(len(SIZES)), "--save", save,
                          "--json", *extra)
            document, transfers = transfers_of(done)
            total = sum(SIZES)
            check(transfers["completed"] == len(SIZES) and transfers["failed"] == 0, f"{extra}: {transfers}")
            check(transfers["http"]["bytes"] == total == document["end"]["sum_received"]["bytes"],
                  f"{extra}: {transfers['http']['bytes']} body bytes, counted "
                  f"{document['end']['sum_received']['bytes']}, served {total}")
            check(transfers["http"]["status_codes"] == {"200": len(SIZES)}, f"statuses {transfers['http']}")
            opened = transfers["connections_opened"]
            check(opened <= 3 if extra else opened == len(SIZES), f"{extra}: {opened} connections opened")
            check(document["start"]["testio"]["workload"] == "http", "workload name")
            for i, size in enumerate(SIZES, 1):
                with open(os.path.join(save, f"{i}.bin"), "rb") as saved:
                    check(saved.read() == files[f"files/{i}.bin"], f"{extra}: {i}.bin differs from the served file")
            check(sorted(os.listdir(save)) == sorted(f"{i}.bin" for i in range(1, len(SIZES) + 1)),
                  f"files left: {os.listdir(save)}")
            for key in ("connect_us", "connect_seen_us", "transfer_ms"):
                latency = transfers[key]
                check(latency["min"] <= latency["p50"] <= latency["p99"] <= latency["max"], f"{key} {latency}")
        # A second run refuses to overwrite before it connects; --force overwrites.
        refused = testio("-c", nginx.url("files/{i}.bin"), "--transfers", "2", "--save", save, code=1)
        check("would be overwritten" in refused.stderr and "--force" in refused.stderr, refused.stderr)
        testio("-c", nginx.url("files/{i}.bin"), "--transfers", "2", "--save", save, "--force")


@test
def libcurl_is_opened_by_http_alone():
    """testio does not link libcurl (src/curl_on_demand.cpp): a server that has served a TCP test
    has none of it mapped, and a client of an HTTP server opens it when it first calls curl."""
    with harness.Server() as server:
        harness.client(server, "1", "-n", "64K", "-i", "0")
        with open(f"/proc/{server.process.pid}/maps", encoding="utf-8") as maps:
            mapped = maps.read()
    check("libcurl" not in mapped, "testio -s mapped libcurl without serving any HTTP")
    with Nginx(files_of_sizes()) as nginx:
        done = subprocess.run([harness.BINARY, "-c", nginx.url("files/1.bin")], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL, env={**os.environ, "LD_DEBUG": "files"})
    check(done.returncode == 0, f"the HTTP client: exit {done.returncode}: {done.stderr[-2000:]}")
    check(re.search(r"file=libcurl\.so\.4 \[0\];\s+dynamically loaded by", done.stderr),
          "the HTTP client did not open libcurl.so.4 with dlopen (LD_DEBUG=files says how each library came)")


@test
def json_stream_lines_follow_the_schema():
    with Nginx({"same.bin": os.urandom(200_000)}) as nginx:
        done = testio("-c", nginx.url("same/{i}"), "4", "--transfers", "40", "--json-stream", "-i", "0.1")
        events = [valid(json.loads(line)) for line in done.stdout.splitlines()]
        kinds = [event["event"] for event in events]
        check(kinds[0] == "start" and kinds[-1] == "end" and "interval" in kinds, f"events {sorted(set(kinds))}")
        transfers = events[-1]["data"]["testio"]["transfers"]
        check(transfers["completed"] == 40 and transfers["http"]["bytes"] == 40 * 200_000, f"{transfers}")


@test
def sigint_ends_the_run_with_a_report_and_no_partial_file():
    with Nginx({"same.bin": os.urandom(6_000_000)}) as nginx, tempfile.TemporaryDirectory() as save:
        process = subprocess.Popen([harness.BINARY, "-c", nginx.url("same/{i}"), "4", "--transfers", "100000",
                                    "--save", save, "--json", "-l", "16K"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            whole = lambda: [name for name in os.listdir(save) if not name.endswith(".testio-part")]  # noqa: E731
            harness.wait_until(lambda: len(whole()) >= 3, 60, "the first files saved whole")
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
        check(process.returncode == 1, f"exit {process.returncode}: {err.decode()[-400:]}")
        document, transfers = transfers_of(subprocess.CompletedProcess([], 1, out.decode(), ""))
        check(document["end"]["testio"].get("ended_because") == "interrupted by SIGINT", f"{document.get('error')}")
        names = os.listdir(save)
        check(not [name for name in names if name.endswith(".testio-part")], f"part files left: {names}")
        check(len(names) == transfers["completed"] and 3 <= transfers["completed"] < 100000 and
              transfers["failed"] == 0, f"{len(names)} files, {transfers}")


@test
def one_url_repeated_is_saved_under_transfer_numbers():
    with Nginx({"one.bin": b"x" * 1000}) as nginx, tempfile.TemporaryDirectory() as save:
        text = testio("-c", nginx.url("one.bin"), "2", "--transfers", "5", "--save", save).stdout
        check("transfers: 5 of 5" in text and "HTTP status: 200 x 5" in text, text[-600:])
        check(sorted(os.listdir(save)) == [f"transfer-{i}" for i in range(1, 6)], f"files: {os.listdir(save)}")


@test
def python_http_server_and_a_url_list():
    with tempfile.TemporaryDirectory() as served, tempfile.TemporaryDirectory() as save:
        names = ["a.dat", "b.dat", "c.dat"]
        contents = {name: os.urandom(100_000 * (i + 1)) for i, name in enumerate(names)}
        for name, data in contents.items():
            with open(os.path.join(served, name), "wb") as f:
                f.write(data)
        with PythonHttpServer(served) as server:
            url_list = os.path.join(save, "..", f"urls-{os.getpid()}.txt")
            with open(url_list, "w") as f:
                f.write("# the three files\n\n" + "".join(server.url(name) + "\n" for name in names))
            try:
                done = testio("--urls", url_list, "2", "--save", save, "--json")
            finally:
                os.unlink(url_list)
            _, transfers = transfers_of(done)
            check(transfers["requested"] == 3 and transfers["completed"] == 3, f"{transfers}")
            for name, data in contents.items():
                with open(os.path.join(save, name), "rb") as f:
                    check(f.read() == data, f"{name} differs")
        # IPv6: a literal address in brackets, and -6.
        with PythonHttpServer(served, host="::1") as server:
            done = testio("-c", server.url("c.dat"), "-6", "--json")
            _, transfers = transfers_of(done)
            check(transfers["http"]["bytes"] == len(contents["c.dat"]), f"::1: {transfers}")


@test
def tls_needs_insecure_for_a_self_signed_certificate():
    files = {"files/1.bin": os.urandom(3_000_000), "files/2.bin": os.urandom(5)}
    with Nginx(files, tls=True) as nginx, tempfile.TemporaryDirectory() as save:
        url = nginx.url("files/{i}.bin", tls=True)
        refused = testio("-c", url, "--transfers", "2", "--json", code=1)
        _, transfers = transfers_of(refused)
        check(transfers["failed"] == 2 and "certificate" in transfers["first_error"].lower(), transfers["first_error"])
        check(refused.stderr.count("transfer ") >= 2, refused.stderr)
        for extra in ([], ["--reuse"]):
            done = testio("-c", url, "2", "--transfers", "2", "--insecure", "--save", save, "--force", "--json", *extra)
            _, transfers = transfers_of(done)
            check(transfers["completed"] == 2 and transfers["http"]["bytes"] == 3_000_005, f"{extra}: {transfers}")
            for name in ("1.bin", "2.bin"):
                with open(os.path.join(save, name), "rb") as f:
                    check(f.read() == files[f"files/{name}"], f"{extra}: {name} differs over TLS")


@test
def not_found_and_redirects_are_counted_and_named():
    with Nginx({"files/1.bin": b"redirected here"}) as nginx, tempfile.TemporaryDirectory() as save:
        done = testio("-c", nginx.url("missing/{i}"), "2", "--transfers", "4", "--save", save, "--json", code=1)
        _, transfers = transfers_of(done)
        check(transfers["failed"] == 4 and transfers["http"]["status_codes"] == {"404": 4}, f"{transfers}")
        for i in range(1, 5):
            check(f"transfer {i} ({nginx.url(f'missing/{i}')}): HTTP 404" in done.stderr, done.stderr)
        check("4 of 4 transfers failed" in done.stderr, done.stderr)
        check(os.listdir(save) == [], f"a failed transfer left {os.listdir(save)}")
        moved = testio("-c", nginx.url("old"), code=1)
        check("HTTP 301 (a redirect; --location follows it)" in moved.stderr, moved.stderr)
        followed = testio("-c", nginx.url("old"), "--location", "--save", save)
        check("HTTP status: 200 x 1" in followed.stdout, followed.stdout[-400:])
        with open(os.path.join(save, "old"), "rb") as f:
            check(f.read() == b"redirected here", "the redirect's target was not saved")


@test
def short_reset_and_stalled_bodies_fail_without_partial_files():
    with MisbehavingServer() as server, tempfile.TemporaryDirectory() as save:
        for path, words in (("short", "transfer closed with 50000 bytes remaining"),
                            ("reset", "recv failure"), ("stall", "timed out after 15")):
            started = time.monotonic()
            done = testio("-c", server.url(path), "--max-time", "1.5", "--save", save, "--json", code=1, limit=30)
            _, transfers = transfers_of(done)
            check(transfers["failed"] == 1 and transfers["completed"] == 0, f"{path}: {transfers}")
            check(words in transfers["first_error"].lower(), f"{path}: {transfers['first_error']}")
            check(f"transfer 1 ({server.url(path)}): " in done.stderr, done.stderr)
            check(os.listdir(save) == [], f"{path} left {os.listdir(save)}")
            check(transfers["partial_files_removed"] == 1, f"{path}: {transfers['partial_files_removed']}")
            check(time.monotonic() - started < 20, f"{path} took {time.monotonic() - started:.1f} s")
        # A chunked body is whole, and equal to what was sent.
        done = testio("-c", server.url("chunked/123457"), "--save", save, "--json")
        _, transfers = transfers_of(done)
        check(transfers["http"]["bytes"] == 123457, f"chunked: {transfers}")
        with open(os.path.join(save, "123457"), "rb") as f:
            check(f.read() == chunked_body(123457), "the chunked body differs")


@test
def five_hundred_slots_count_exactly_in_bounded_memory():
    """500 transfers at a time from nginx: every body counted, and the client's peak RSS (about
    16 MB plus 16 KiB a slot here) far below a generous bound. Memory is the sanitizer's in a
    sanitized build, so there only the counts are checked."""
    with Nginx({"small.bin": os.urandom(1000)}) as nginx:
        process = subprocess.Popen([harness.BINARY, "-c", nginx.url("small.bin"), "500", "--transfers", "1500",
                                    "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        out, err = process.communicate(timeout=120)
        check(process.returncode == 0, err.decode()[-500:])
        # The largest of every child waited for so far: testio's peak, or above it.
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        _, transfers = transfers_of(subprocess.CompletedProcess([], 0, out.decode(), ""))
        check(transfers["completed"] == 1500 and transfers["http"]["bytes"] == 1_500_000, f"{transfers}")
        check(transfers["connections_opened"] == 1500, f"{transfers['connections_opened']} connections opened")
    if not SANITIZED:
        check(peak_kib < 150 * 1024, f"peak RSS {peak_kib} KiB for 500 slots")


@test
def bad_urls_and_options_are_one_sentence():
    for args, code, words in (
            (["-c", "http://[::1"], 2, "does not parse as a URL"),
            (["-c", "ftp://127.0.0.1/x"], 2, "http:// and https://"),
            (["-c", "http://127.0.0.1:1/x"], 1, "couldn't connect"),
            (["-c", "http://127.0.0.1/x", "--size", "1M"], 2, "an HTTP server decides"),
            (["-c", "http://127.0.0.1/x", "-t", "3"], 2, "drop -t"),
            (["-c", "http://127.0.0.1/x", "-u"], 2, "-u"),
            (["-c", "127.0.0.1", "--location"], 2, "apply to HTTP downloads"),
            (["--urls", "/nonexistent/urls.txt"], 2, "cannot be read")):
        done = testio(*args, code=code)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        check(any(words.lower() in line.lower() for line in lines), f"{args}: {done.stderr}")
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as urls:
        urls.write("http://127.0.0.1/a\nnot a url\n")
        urls.flush()
        done = testio("--urls", urls.name, code=2)
        check("line 2" in done.stderr, done.stderr)


if __name__ == "__main__":
    harness.main()

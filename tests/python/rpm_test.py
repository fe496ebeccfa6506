#!/usr/bin/python3
"""--rpm against Debian's nginx over HTTP/2 and TLS with a self-signed certificate made here,
serving a large file, a small one and an upload location: both directions measured, by URL options
and by the draft's /.well-known/nq, the report in JSON and --prometheus; a server without HTTP/2,
an untrusted certificate and bad options each get their sentence. The RPM figures themselves are
not asserted (a shared machine): they are printed; their repeatability is docs/latency.md's benchmark.
Usage: rpm_test.py TESTIO_BINARY SCHEMA."""
import json
import os
import sys
import tempfile

import harness
from harness import check, test, testio
from http_servers import Nginx

valid = harness.schema_checker(sys.argv[2])
LARGE = 64 << 20
FILES = {"large.bin": bytes(LARGE), "small.bin": b"x"}
SECONDS = "6"


def serve():
    files = dict(FILES)
    return Nginx(files, tls=True, http2=True, workers=2)


def rpm_args(nginx, *extra):
    return ["-c", nginx.url("large.bin", tls=True), "--rpm", "--rpm-small", nginx.url("small.bin", tls=True),
            "--rpm-upload", nginx.url("upload/blob", tls=True), "--insecure", "--rpm-time", SECONDS, *extra]


def check_direction(result, name):
    check(result["direction"] == name, f"direction {result['direction']}, wanted {name}")
    check(result["rpm"] > 0 and result["confidence"] in ("high", "medium", "low"), f"{name}: {result}")
    check(result["foreign_probes"] > 0 and result["self_probes"] > 0 and result["failed_probes"] == 0,
          f"{name} probes: {result}")
    check(result["tcp_ms"] > 0 and result["tls_ms"] > 0 and result["http_self_ms"] > 0, f"{name} times: {result}")
    check(1 <= result["load_connections"] <= 16 and result["bytes"] > 0, f"{name} load: {result}")


@test
def both_directions_over_http2_and_tls():
    with serve() as nginx:
        for _ in range(1):  # (repeatability is a benchmark's: docs/latency.md)
            document = valid(json.loads(testio(*rpm_args(nginx, "--json"), limit=120).stdout))
            rpm = document["end"]["testio"]["rpm"]
            check([r["direction"] for r in rpm["directions"]] == ["download", "upload"], f"directions {rpm}")
            for result, name in zip(rpm["directions"], ("download", "upload")):
                check_direction(result, name)
            check(document["start"]["testio"]["workload"] == "rpm", "workload name")
            check(document["end"]["sum_received"]["bytes"] >= sum(r["bytes"] for r in rpm["directions"]) > 0,
                  "the load's bytes are not the streams' figures")
            print(f"# RPM download, upload: {[round(r['rpm']) for r in rpm['directions']]}", flush=True)


@test
def the_wellknown_nq_configuration_names_the_urls():
    with serve() as nginx:
        config = {"version": 1, "urls": {"large_https_download_url": nginx.url("large.bin", tls=True),
                                         "small_https_download_url": nginx.url("small.bin", tls=True)}}
        os.makedirs(os.path.join(nginx.prefix, "www", ".well-known"), mode=0o755, exist_ok=True)
        path = os.path.join(nginx.prefix, "www", ".well-known", "nq")
        with open(path, "w") as out:
            json.dump(config, out)
        os.chmod(path, 0o644)
        done = testio("-c", nginx.url(".well-known/nq", tls=True), "--rpm", "--insecure", "--rpm-time", "5", "--json",
                      limit=120)
    rpm = valid(json.loads(done.stdout))["end"]["testio"]["rpm"]
    check(len(rpm["directions"]) == 1, f"no upload URL, yet {len(rpm['directions'])} directions")
    check_direction(rpm["directions"][0], "download")


@test
def the_prometheus_file_has_the_rpm():
    with serve() as nginx, tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "rpm.prom")
        testio("-c", nginx.url("large.bin", tls=True), "--rpm", "--rpm-small", nginx.url("small.bin", tls=True),
               "--insecure", "--rpm-time", "5", "--prometheus", path, limit=120)
        with open(path) as metrics:
            text = metrics.read()
    check('testio_rpm{direction="download"' in text, f"no testio_rpm sample: {text[:600]}")


@test
def failures_and_bad_options_get_one_sentence():
    with serve() as nginx:
        # The plain port speaks HTTP/1.1 only: --rpm's HTTP/2 load cannot start there.
        done = testio("-c", nginx.url("large.bin"), "--rpm", "--rpm-small", nginx.url("small.bin"), "--rpm-time", "5",
                      code=1, limit=120)
        check("no RPM was measured" in done.stderr + done.stdout, f"plain HTTP/1.1: {done.stderr[-400:]}")
        done = testio("-c", nginx.url("large.bin", tls=True), "--rpm", "--rpm-small", nginx.url("small.bin", tls=True),
                      "--rpm-time", "5", code=1, limit=120)
        check("certificate" in (done.stderr + done.stdout).lower(), f"untrusted: {done.stderr[-400:]}")
        for args, named in ((("-c", nginx.url("large.bin", tls=True), "--rpm"), "--rpm-small"),
                            (("-c", nginx.url("large.bin", tls=True), "--rpm", "--rpm-small", nginx.url("small.bin", tls=True),
                              "--rpm-probes", "500"), "--rpm-probes"),
                            (("-c", "127.0.0.1", "--rpm"), "--rpm"),
                            (("-c", nginx.url("large.bin", tls=True), "--rpm-time", "9"), "--rpm")):
            done = testio(*args, code=2)
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            check(lines and named in lines[-1], f"{args}: {done.stderr!r}")


if __name__ == "__main__":
    harness.main()

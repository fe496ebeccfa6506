#!/usr/bin/python3
"""Latency under load against known answers: two network namespaces (tools/testbed.sh) joined by a
50 Mbit/s tbf bottleneck whose queue holds 100 ms (bloated) or about 5 ms (short), TCP load under
reno or BBR. testio --latency runs with irtt and ping beside it on the same path in the same run:
its idle UDP round trip is within 0.2 ms of ping's, its loaded one within 10% (or 1 ms) of irtt's
and ping's; a short queue adds little, and BBR less than reno. Needs root, ip netns, irtt and
ping; every test is skipped with the reason otherwise. Traffic goes only to 198.18.0.0/15 inside
namespaces this suite created, and every namespace and process is gone when it ends.
Usage: latency_testbed_test.py TESTIO_BINARY TESTBED_SCRIPT SCHEMA."""
import json
import re
import shutil
import subprocess
import time

import harness
import testbed_test
from harness import Skip, check
from testbed_test import Testbed, median

tests = []
ADDRESS = "198.18.1.2"
BOTTLENECK = ("--rate", "50mbit", "--burst", "16kb")
IDLE_S, LOAD_S = 2, 5
# How close the issue (#27) asks the figures to be.
IDLE_TOLERANCE_MS = 0.2
LOADED_TOLERANCE, LOADED_FLOOR_MS = 0.10, 1.0
ATTEMPTS = 3


def test(function):
    tests.append(function)
    return function


def needs_references():
    for tool in ("irtt", "ping"):
        if not shutil.which(tool):
            raise Skip(f"'{tool}' is not installed (tools/install-deps.sh installs it)")


def ping_median_ms(text):
    times = [float(value) for value in re.findall(r"time=([0-9.]+) ms", text)]
    check(len(times) > 20, f"ping answered {len(times)} times")
    return median(times)


def ns_command(ns, *argv):
    return ["ip", "netns", "exec", ns, *argv]


def run_once(bed, server_port, with_references):
    """testio --latency (IDLE_S idle, LOAD_S of 4 connections uploading), with ping during its idle
    phase and irtt and ping during its load: (testio's JSON, ping idle ms, irtt ms, ping loaded ms)."""
    client = subprocess.Popen(ns_command(bed.a, harness.BINARY, "-c", ADDRESS, "-p", server_port, "4", "-t",
                                         str(LOAD_S), "--latency", "--latency-idle", str(IDLE_S), "--json"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    started = time.monotonic()
    references = (None, None, None)
    try:
        if with_references:
            time.sleep(0.4)
            idle = subprocess.run(ns_command(bed.a, "ping", "-n", "-i", "0.01", "-c", "100", ADDRESS),
                                  capture_output=True, text=True, timeout=30).stdout
            time.sleep(max(0.0, started + IDLE_S + 1.2 - time.monotonic()))  # the queue has filled
            loaded_ping = subprocess.Popen(ns_command(bed.a, "ping", "-n", "-i", "0.01", "-c", "250", ADDRESS),
                                           stdout=subprocess.PIPE, text=True)
            irtt = subprocess.run(ns_command(bed.a, "irtt", "client", "-i", "10ms", "-d", "2500ms", "-Q", "-o", "-",
                                             f"{ADDRESS}:2112"), capture_output=True, text=True, timeout=30)
            loaded = loaded_ping.communicate(timeout=30)[0]
            irtt_ms = json.loads(irtt.stdout)["stats"]["rtt"]["median"] / 1e6
            references = (ping_median_ms(idle), irtt_ms, ping_median_ms(loaded))
        out, err = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(10)
    check(client.returncode == 0, f"testio --latency: exit {client.returncode}: {err[-500:]}")
    return (json.loads(out), *references)


def phases(document):
    named = {phase["name"]: phase for phase in document["end"]["latency"]}
    check(set(named) == {"idle", "upload"}, f"phases {list(named)}")
    return named["idle"], named["upload"]


def bottleneck(queue, cc, with_references=True):
    """The figures of one run over a bottleneck with `queue`, TCP under `cc`: retried up to
    ATTEMPTS times while testio and the references disagree (a neighbour on this shared machine)."""
    with Testbed(*BOTTLENECK, "--queue", queue, "--cc", cc) as bed:
        irtt_server = subprocess.Popen(ns_command(bed.b, "irtt", "server", "-b", f"{ADDRESS}:2112"),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with bed.server(bind=ADDRESS) as server:
                for attempt in range(1, ATTEMPTS + 1):
                    document, ping_idle, irtt_ms, ping_loaded = run_once(bed, server.port, with_references)
                    idle, loaded = phases(document)
                    udp_idle, udp_loaded = idle["udp"]["p50_ms"], loaded["udp"]["p50_ms"]
                    print(f"# queue {queue}, {cc}, attempt {attempt}: testio udp p50 idle {udp_idle:.3f} ms, loaded "
                          f"{udp_loaded:.3f} ms (tcp {loaded['tcp']['p50_ms']:.3f}, load rtt "
                          f"{loaded.get('load', {}).get('p50_ms', 0):.3f}); ping idle {ping_idle}, irtt {irtt_ms}, "
                          f"ping loaded {ping_loaded}", flush=True)
                    if not with_references or agrees(udp_idle, udp_loaded, ping_idle, irtt_ms, ping_loaded):
                        break
        finally:
            irtt_server.terminate()
            irtt_server.wait(10)
    return idle, loaded, ping_idle, irtt_ms, ping_loaded


def close_enough(measured, reference):
    return abs(measured - reference) <= max(LOADED_TOLERANCE * reference, LOADED_FLOOR_MS)


def agrees(udp_idle, udp_loaded, ping_idle, irtt_ms, ping_loaded):
    return (abs(udp_idle - ping_idle) <= IDLE_TOLERANCE_MS and close_enough(udp_loaded, irtt_ms)
            and close_enough(udp_loaded, ping_loaded))


@test
def a_bloated_queue_agrees_with_irtt_and_ping():
    needs_references()
    idle, loaded, ping_idle, irtt_ms, ping_loaded = bottleneck("100ms", "reno")
    check(abs(idle["udp"]["p50_ms"] - ping_idle) <= IDLE_TOLERANCE_MS,
          f"idle: testio {idle['udp']['p50_ms']:.3f} ms, ping {ping_idle:.3f} ms")
    check(close_enough(loaded["udp"]["p50_ms"], irtt_ms), f"loaded: testio {loaded['udp']['p50_ms']:.3f} ms, irtt {irtt_ms:.3f}")
    check(close_enough(loaded["udp"]["p50_ms"], ping_loaded),
          f"loaded: testio {loaded['udp']['p50_ms']:.3f} ms, ping {ping_loaded:.3f}")
    # The queue's 100 ms is what the load adds, up the loaded direction (the echo's way back is idle).
    check(60 <= loaded["udp"]["added_ms"] <= 130, f"the load added {loaded['udp']['added_ms']:.1f} ms")
    check(loaded["udp"]["up"]["p50_ms"] > 10 * max(loaded["udp"]["down"]["p50_ms"], 1),
          f"one-way: up {loaded['udp']['up']['p50_ms']} ms, down {loaded['udp']['down']['p50_ms']} ms")
    check(loaded["probe_share"] <= 0.01, f"the probes cost {loaded['probe_share']:.4f} of the load")


@test
def a_short_queue_adds_little_and_bbr_less_than_reno():
    needs_references()
    _, short, *_ = bottleneck("2ms", "reno", with_references=False)
    _, bloated_reno, *_ = bottleneck("100ms", "reno", with_references=False)
    _, bloated_bbr, *_ = bottleneck("100ms", "bbr", with_references=False)
    print(f"# added p50: short queue {short['udp']['added_ms']:.2f} ms, bloated reno "
          f"{bloated_reno['udp']['added_ms']:.2f} ms, bloated bbr {bloated_bbr['udp']['added_ms']:.2f} ms", flush=True)
    check(short["udp"]["added_ms"] < 0.2 * bloated_reno["udp"]["added_ms"],
          f"a short queue added {short['udp']['added_ms']:.2f} ms, a bloated one {bloated_reno['udp']['added_ms']:.2f}")
    check(bloated_bbr["udp"]["added_ms"] < bloated_reno["udp"]["added_ms"],
          f"bbr added {bloated_bbr['udp']['added_ms']:.2f} ms, reno {bloated_reno['udp']['added_ms']:.2f}")


if __name__ == "__main__":
    testbed_test.run_suite(tests)

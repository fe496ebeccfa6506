#!/usr/bin/python3
"""The "why is it slow" verdict against causes built on purpose (diagnosis_causes.py): a tbf
bottleneck, a pinned receive buffer, a slow Python reader, -b, a sender on a CPU it shares with a
busy loop, a small send buffer behind a queue its ACKs wait in, one connection where each flow
gets its own share (with --diagnose), and loopback with no cause but the CPUs. Each case runs
up to RUNS times and must name its cause in `end.diagnosis[].limit` of the direction that carries
the load at least NEEDED times. A case stops once that is decided (NEEDED hits, or more than
RUNS - NEEDED misses): the runs after it could not change the outcome. Its hit rate is printed
("# network: 4/4"), and each miss with the verdict's summary, evidence and what the expected
limit's check said (its entry in `others`).
Needs root and ip netns (skipped otherwise; loopback needs neither). Traffic goes only to
198.18.0.0/15 inside namespaces this suite created, and to 127.0.0.1; every namespace and process
is gone when it ends. Usage: diagnosis_test.py TESTIO_BINARY TESTBED_SCRIPT [--paced | --alone |
CASE...]: --paced runs the cases of PACED, --alone every other one."""
import os
import subprocess
import sys

import diagnosis_causes as causes
import harness
import testbed_test
from harness import Failure, Skip, check

tests = []
RUNS, NEEDED = 5, 4
# Three seconds hold every signature here (the sender's TCP_INFO counts from the first segment);
# the reverse load of send_buffer lasts its own default (seven seconds) around it.
causes.SECONDS = 3
CPU_LIMITS = ("sender_cpu", "receiver_cpu", "rx_softirq")
# The cases whose rates stay at 200 Mbit/s or less and whose verdicts rest on TCP_INFO and the
# link, not on a CPU: tools/test.sh runs them beside a build at nice 19 (suite testbed_paced),
# and the rest with the machine to themselves: a pace of 500 Mbit/s, a busy CPU, loopback, and
# the small send buffer, whose clock (tcpi_sndbuf_limited) runs only while the sender's thread
# is late to write: beside an ASan build at nice 19 it named the buffer in 3 of 5 runs, against
# 43 of 44 alone. A new case runs alone unless it is named here.
PACED = ("network", "receive_window", "peer_receiver", "too_few_streams")


def test(function):
    tests.append(function)
    return function


def verdict(document, direction="forward"):
    """The entry of end.diagnosis for `direction`."""
    entries = document.get("end", {}).get("diagnosis", [])
    chosen = [entry for entry in entries if entry.get("direction") == direction]
    check(len(chosen) == 1, f"end.diagnosis has {len(chosen)} entries for {direction}: "
                            f"{[entry.get('direction') for entry in entries]}")
    return chosen[0]


def figures(evidence):
    return ", ".join(f"{name} {entry['value']:.4g}" if isinstance(entry.get("value"), (int, float))
                     else f"{name} {entry.get('value')}" for name, entry in evidence.items())


def describe(entry, expected):
    """Why a verdict is not the one expected: its own summary and evidence, and what each expected
    limit's check said about itself."""
    lines = [f"limit {entry['limit']} ({entry['confidence']:.2f}): {entry['summary']}",
             f"evidence: {figures(entry.get('evidence', {}))}"]
    for other in entry.get("others", []):
        if other["limit"] in expected:
            lines.append(f"{other['limit']}: {other['why']}")
    return lines


def hit_rate(name, build, expected, direction="forward", runs=RUNS, needed=NEEDED):
    """Runs `build` (a cause of diagnosis_causes) up to `runs` times; fails below `needed` verdicts
    in `expected`. It stops once the outcome is decided, `needed` hits or too many misses to reach
    them: the testbed step runs alone, so every run it skips is wall time CI gets back. A run that
    fails outright counts as a miss, with its error."""
    expected = (expected,) if isinstance(expected, str) else tuple(expected)
    hits, misses = 0, []
    for run in range(1, runs + 1):
        if hits >= needed or len(misses) > runs - needed:
            break
        try:
            entry = verdict(build(), direction)
        except Failure as error:
            misses.append([f"run {run}: {str(error)[:600]}"])
            print(f"# {name} run {run}: {str(error)[:600]}", flush=True)
            continue
        if entry["limit"] in expected:
            hits += 1
            continue
        lines = describe(entry, expected)
        misses.append([f"run {run}: " + lines[0], *lines[1:]])
        for line in lines:
            print(f"# {name} run {run}: {line}", flush=True)
    print(f"# {name}: {hits}/{hits + len(misses)}", flush=True)
    check(hits >= needed, f"{name}: {hits} of {hits + len(misses)} verdicts were {'/'.join(expected)} (at least "
                          f"{needed} of {runs} wanted); the misses:\n" + "\n".join("\n  ".join(miss) for miss in misses))


@test
def network():
    """A tbf of 200 Mbit/s on the link, two connections."""
    hit_rate("network", causes.network, "network")


@test
def receive_window():
    """The receiver's net.ipv4.tcp_rmem pinned at 16 KB, the ACKs held some 10 ms behind a reverse load."""
    hit_rate("receive_window", causes.receive_window, "receive_window")


@test
def peer_receiver():
    """A Python reader that sleeps between 4 KB reads; testio sends --raw 1 to it."""
    hit_rate("peer_receiver", causes.peer_receiver, "peer_receiver")


@test
def rate_limit():
    """-b 500M per connection, far below the veth's rate."""
    hit_rate("rate_limit", causes.rate_limit, "rate_limit")


@test
def sender_cpu():
    """The sender under taskset on one CPU beside a busy loop there."""
    hit_rate("sender_cpu", causes.sender_cpu, "sender_cpu")


@test
def send_buffer():
    """The sender's tcp_wmem pinned at 8 KB while a reverse test keeps the queue its ACKs cross full
    (the verdict of the client's own test, which sends: "forward")."""
    hit_rate("send_buffer", causes.send_buffer, "send_buffer")


@test
def too_few_streams():
    """One connection through an htb that gives each flow 100 Mbit/s: only --diagnose, which tries
    more connections, can tell it from the network."""
    help_text = subprocess.run([harness.BINARY, "--help"], capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL)
    if "--diagnose" not in help_text.stdout + help_text.stderr:
        raise Skip("--diagnose not in this binary")
    hit_rate("too_few_streams", lambda: causes.too_few_streams(extra=("--diagnose", "--diagnose-time", "6")), "too_few_streams")


@test
def loopback():
    """Four connections over 127.0.0.1, nothing in the way: a CPU is the limit, either side's or
    the receive softirq's."""
    hit_rate("loopback", causes.loopback, CPU_LIMITS)


if __name__ == "__main__":
    causes.configure(os.path.abspath(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
    wanted = sys.argv[3:]
    if wanted in (["--paced"], ["--alone"]):
        paced = wanted == ["--paced"]
        wanted = [function.__name__ for function in tests if (function.__name__ in PACED) == paced]
    testbed_test.run_suite([function for function in tests if not wanted or function.__name__ in wanted])

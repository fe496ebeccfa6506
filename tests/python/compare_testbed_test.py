#!/usr/bin/python3
"""testio compare on campaigns run through a tbf bottleneck (tools/testbed.sh): 80 Mbit/s after
100 is slower, exit 1 with --fail-if-slower 5; two campaigns at one rate are no difference, exit 0,
in at least 9 of 10 pairs (the count is printed). Root only: skipped with the reason otherwise.
Traffic only inside the namespaces the suite makes. Usage: compare_testbed_test.py TESTIO_BINARY
TESTBED_SCRIPT."""
import json
import os
import subprocess
import tempfile

import harness
import testbed_test
from harness import check
from testbed_test import Testbed

SERVER_ADDRESS = "198.18.1.2"
RUNS = 5               # a campaign's measured runs: Mann-Whitney's smallest p at 5 and 5 is 0.008
SECONDS = "1"          # each run's -t, after -O's half second of slow start left out
PAIRS, PAIRS_WANTED = 10, 9

tests = []


def test(function):
    tests.append(function)
    return function


def run_campaign(bed, server, directory):
    """A campaign of RUNS runs from namespace a to the server in b; exit 0 wanted."""
    done = subprocess.run(["ip", "netns", "exec", bed.a, harness.BINARY, "campaign", "-c", SERVER_ADDRESS,
                           "-p", server.port, "-t", SECONDS, "-O", "0.5", "--repeat", str(RUNS), "--pause", "0.2",
                           "--json", "-o", directory], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    check(done.returncode == 0, f"campaign: exit {done.returncode}: {done.stderr[-800:]}")
    return json.loads(done.stdout)["campaign"]


def compare(a, b, *options):
    done = subprocess.run([harness.BINARY, "compare", a, b, "--json", *options], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    check(done.returncode in (0, 1), f"compare: exit {done.returncode}: {done.stderr[-600:]}")
    return done.returncode, json.loads(done.stdout)["compare"]


def campaign_at(rate, directory):
    with Testbed("--rate", rate) as bed, bed.server(bind=SERVER_ADDRESS) as server:
        return run_campaign(bed, server, directory)


@test
def eighty_after_a_hundred_mbit_is_slower_and_fails_the_pipeline():
    with tempfile.TemporaryDirectory(prefix="compare-testbed-") as scratch:
        fast, slow = os.path.join(scratch, "100mbit"), os.path.join(scratch, "80mbit")
        campaign_at("100mbit", fast)
        campaign_at("80mbit", slow)
        code, result = compare(fast, slow, "--fail-if-slower", "5")
        verdicts = [cell["verdict"] for cell in result["cells"]]
        print(f"# 100 then 80 Mbit/s: {verdicts}, exit {code}", flush=True)
        check(verdicts == ["slower"] and code == 1 and result["failed"], f"{json.dumps(result)[:800]}")


@test
def one_rate_twice_is_no_difference_in_nine_pairs_of_ten():
    with (tempfile.TemporaryDirectory(prefix="compare-testbed-") as scratch, Testbed("--rate", "100mbit") as bed,
          bed.server(bind=SERVER_ADDRESS) as server):
        passed = 0
        for pair in range(PAIRS):
            first, second = os.path.join(scratch, f"{pair}-a"), os.path.join(scratch, f"{pair}-b")
            run_campaign(bed, server, first)
            run_campaign(bed, server, second)
            code, result = compare(first, second, "--fail-if-slower", "5")
            verdicts = [cell["verdict"] for cell in result["cells"]]
            passed += code == 0 and verdicts == ["no difference"]
            print(f"# pair {pair + 1}: {verdicts}, exit {code}", flush=True)
        print(f"# the same rate (100 Mbit/s) twice: no difference and exit 0 in {passed} of {PAIRS} pairs",
              flush=True)
        check(passed >= PAIRS_WANTED, f"no difference in {passed} of {PAIRS} pairs, wanted {PAIRS_WANTED}")


if __name__ == "__main__":
    testbed_test.run_suite(tests)

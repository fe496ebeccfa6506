#!/usr/bin/python3
"""testio compare on campaign directories and reports written by hand in a temporary directory (no
network, no runs): the verdicts, --fail-if-slower's exit 1, --json's keys, warm-ups, failed runs
and a line cut short left out, report files alone and as sets, and bad input's exit 2.
Usage: compare_test.py TESTIO_BINARY."""
import json
import os
import subprocess
import tempfile

import harness
from harness import check

tests = []
ENVIRONMENT = {"kernel": "6.1.0", "cpu_model": "test CPU", "governor": "performance",
               "sysctls": {"net.ipv4.tcp_congestion_control": "cubic"}}
# Five runs a side around 100 and 80 Mbit/s, spread by a percent or two: every B below every A.
FAST = [100.0e6, 101.0e6, 99.0e6, 100.5e6, 99.5e6]
SLOW = [80.0e6, 81.0e6, 79.0e6, 80.5e6, 79.5e6]
# The same rate, interleaved: no difference.
FAST_AGAIN = [100.2e6, 99.2e6, 100.7e6, 99.7e6, 100.9e6]


def test(function):
    tests.append(function)
    return function


def run_line(cell, number, goodput, warmup=False, ok=True):
    return {"cell": cell["id"], "round": number, "warmup": warmup, "settings": cell["settings"],
            "args": cell["args"], "started": "2026-12-05T22:00:00Z", "wall_s": 1.0, "exit": 0 if ok else 1,
            "ok": ok, "reason": "" if ok else "exit 1",
            "figures": {"goodput_bps": goodput, "sender_cpu_s_per_gb": goodput / 1e9} if ok else {},
            "environment_changed": [], "report": None}


def write_campaign(directory, runs_by_connections, environment=ENVIRONMENT, warmup=0, failed=0, tail=""):
    """A campaign with a connections axis: {connections: [goodput per round]}. `warmup` rounds
    of ten times the goodput come first; `failed` failed runs follow; `tail` ends runs.jsonl."""
    os.makedirs(directory)
    cells = [{"id": f"c{i}", "settings": {"connections": connections},
              "args": ["-c", "127.0.0.1", "-t", "10", "-P", connections]}
             for i, connections in enumerate(runs_by_connections)]
    definition = {"format": "testio-campaign/1", "name": os.path.basename(directory),
                  "created": "2026-12-05T22:00:00Z", "base_args": ["-c", "127.0.0.1", "-t", "10"],
                  "axes": [{"name": "connections", "option": "-P", "values": list(runs_by_connections)}],
                  "repeat": 5, "warmup": warmup, "shuffle": False, "seed": 1, "pause_s": 0.0,
                  "cells": cells, "environment": environment}
    with open(os.path.join(directory, "campaign.json"), "w") as file:
        json.dump(definition, file)
    with open(os.path.join(directory, "runs.jsonl"), "w") as file:
        for cell in cells:
            values = runs_by_connections[cell["settings"]["connections"]]
            lines = [run_line(cell, r, values[0] * 10, warmup=True) for r in range(warmup)]
            lines += [run_line(cell, warmup + r, value) for r, value in enumerate(values)]
            lines += [run_line(cell, warmup + len(values) + r, 0, ok=False) for r in range(failed)]
            file.writelines(json.dumps(line) + "\n" for line in lines)
        file.write(tail)
    return directory


def write_report(path, goodput, connections=1, kernel="Linux host 6.1.0 x86_64"):
    """The parts of a testio --json report that compare reads."""
    spec = {"workload": "stream", "direction": "forward", "connections": connections, "threads": 0,
            "buffer": 131072, "window": 0, "recv_mode": "recv", "duration_s": 10.0}
    report = {"start": {"version": "testio 0.1.0", "system_info": kernel,
                        "connecting_to": {"host": "127.0.0.1", "port": 5201},
                        "testio": {"spec": spec}},
              "intervals": [],
              "end": {"sum_received": {"bytes": goodput * 10 / 8, "seconds": 10.0, "bits_per_second": goodput},
                      "testio": {"sender": {"calls": 1000, "cpu": {"cpu_seconds_per_gb": 0.1}},
                                 "receiver": {"calls": 4000, "cpu": {"cpu_seconds_per_gb": 0.2}}}}}
    with open(path, "w") as file:
        json.dump(report, file)
    return path


def compare(*args, code=0):
    done = subprocess.run([harness.BINARY, "compare", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    check(done.returncode == code, f"compare {' '.join(args)}: exit {done.returncode}, wanted {code}: "
                                   f"{done.stderr[-600:]}{done.stdout[-600:]}")
    return done


def compare_json(*args, code=0):
    return json.loads(compare(*args, "--json", code=code).stdout)["compare"]


def verdicts(found):
    return {cell["settings"]["connections"]: cell["verdict"] for cell in found["cells"]}


@test
def a_slower_campaign_is_called_slower_and_fails_the_pipeline():
    with tempfile.TemporaryDirectory() as root:
        a = write_campaign(os.path.join(root, "a"), {"1": FAST, "8": FAST})
        b = write_campaign(os.path.join(root, "b"), {"1": SLOW, "8": SLOW})
        found = compare_json(a, b)
        check(verdicts(found) == {"1": "slower", "8": "slower"}, f"{verdicts(found)}")
        cell = found["cells"][0]
        check(cell["p"] < 0.05 and cell["method"] == "exact", f"{cell}")
        check(0.79 < cell["ratio"] < 0.81 and cell["ratio_ci95"][0] <= cell["ratio"] <= cell["ratio_ci95"][1], f"{cell}")
        check(not found["failed"], "without --fail-if-slower nothing fails")
        failing = compare_json(a, b, "--fail-if-slower", "5", code=1)
        check(failing["failed"] and all(cell["fails"] for cell in failing["cells"]), f"{failing['cells']}")
        # 20% slower is within a 30% allowance.
        compare(a, b, "--fail-if-slower", "30")
        text = compare(a, b, "--fail-if-slower", "5", code=1).stdout
        check("slower" in text and "FAILS" in text and "connections=8" in text, text)


@test
def the_same_rate_is_no_difference():
    with tempfile.TemporaryDirectory() as root:
        a = write_campaign(os.path.join(root, "a"), {"1": FAST, "8": FAST})
        b = write_campaign(os.path.join(root, "b"), {"1": FAST_AGAIN, "8": FAST_AGAIN})
        found = compare_json(a, b, "--fail-if-slower", "5")
        check(verdicts(found) == {"1": "no difference", "8": "no difference"}, f"{verdicts(found)}")
        check(found["environment_differences"] == [], f"{found['environment_differences']}")


@test
def a_significant_change_within_the_noise_threshold_is_no_difference():
    # Runs through a shaper barely vary: 0.3% lower in every run ranks as significant, but stays
    # within the 1% noise threshold unless --noise lowers it.
    steady = [95.70e6, 95.71e6, 95.69e6, 95.72e6, 95.70e6]
    lower = [value * 0.997 for value in steady]
    with tempfile.TemporaryDirectory() as root:
        a = write_campaign(os.path.join(root, "a"), {"1": steady})
        b = write_campaign(os.path.join(root, "b"), {"1": lower})
        found = compare_json(a, b)
        cell = found["cells"][0]
        check(cell["p"] < 0.05 and cell["verdict"] == "no difference" and found["noise_percent"] == 1.0, f"{cell}")
        check(compare_json(a, b, "--noise", "0.1")["cells"][0]["verdict"] == "slower", "--noise 0.1 calls it slower")
        compare(a, b, "--noise", "-1", code=2)


@test
def a_faster_campaign_is_called_faster_and_passes():
    with tempfile.TemporaryDirectory() as root:
        a = write_campaign(os.path.join(root, "a"), {"1": SLOW})
        b = write_campaign(os.path.join(root, "b"), {"1": FAST})
        found = compare_json(a, b, "--fail-if-slower", "5")
        check(verdicts(found) == {"1": "faster"} and not found["failed"], f"{found['cells']}")


@test
def a_cost_that_grows_is_slower():
    # The runs' sender CPU-s/GB follow their goodput here: B's is higher, so B costs more.
    with tempfile.TemporaryDirectory() as root:
        a = write_campaign(os.path.join(root, "a"), {"1": SLOW})
        b = write_campaign(os.path.join(root, "b"), {"1": FAST})
        found = compare_json(a, b, "--figure", "sender-cpu", "--fail-if-slower", "5", code=1)
        check(found["figure"] == "sender_cpu_s_per_gb" and verdicts(found) == {"1": "slower"}, f"{found['cells']}")


@test
def json_has_every_key_and_the_environment_differences():
    with tempfile.TemporaryDirectory() as root:
        a = write_campaign(os.path.join(root, "a"), {"1": FAST, "8": FAST})
        changed = dict(ENVIRONMENT, kernel="6.18.0", sysctls={"net.ipv4.tcp_congestion_control": "bbr"})
        b = write_campaign(os.path.join(root, "b"), {"1": SLOW, "32": SLOW}, environment=changed)
        found = compare_json(a, b, "--level", "0.01")
        check({"a", "b", "level", "figure", "fail_if_slower", "cells", "unmatched", "environment_differences",
               "failed"} <= set(found), f"{sorted(found)}")
        check(found["level"] == 0.01 and found["a"]["kind"] == "campaign" and found["a"]["name"] == "a", f"{found['a']}")
        cell = found["cells"][0]
        check({"settings", "a", "b", "ratio", "ratio_ci95", "change_percent", "u", "p", "method", "verdict",
               "fails"} <= set(cell), f"{sorted(cell)}")
        check({"n", "failed", "median", "ci95", "runs"} <= set(cell["a"]), f"{sorted(cell['a'])}")
        check(cell["settings"] == {"connections": "1"} and len(found["cells"]) == 1, f"{found['cells']}")
        check(found["unmatched"] == {"a": [{"connections": "8"}], "b": [{"connections": "32"}]}, f"{found['unmatched']}")
        keys = {row["key"]: (row["a"], row["b"]) for row in found["environment_differences"]}
        check(keys == {"kernel": ("6.1.0", "6.18.0"), "sysctls.net.ipv4.tcp_congestion_control": ("cubic", "bbr")},
              f"{keys}")
        text = compare(a, b).stdout
        check("kernel: 6.1.0 -> 6.18.0" in text and "only in B: connections=32" in text, text)


@test
def warmups_failed_runs_and_a_cut_line_are_left_out():
    with tempfile.TemporaryDirectory() as root:
        cut = '{"cell": "c0", "round": 9, "warmup": false, "ok": true, "figures": {"goodput_bps": 1'
        a = write_campaign(os.path.join(root, "a"), {"1": FAST}, warmup=1, failed=2, tail=cut)
        b = write_campaign(os.path.join(root, "b"), {"1": FAST_AGAIN}, warmup=2)
        done = compare(a, b, "--json")
        found = json.loads(done.stdout)["compare"]
        side = found["cells"][0]["a"]
        check(side["n"] == 5 and side["failed"] == 2 and side["runs"] == FAST, f"{side}")
        check(found["cells"][0]["b"]["n"] == 5 and found["cells"][0]["verdict"] == "no difference", f"{found['cells']}")
        check(found["a"]["cut_short"] and "cut short" in done.stderr, f"{found['a']}: {done.stderr}")


@test
def single_reports_and_sets_of_reports():
    with tempfile.TemporaryDirectory() as root:
        one_a = write_report(os.path.join(root, "a.json"), 100e6)
        one_b = write_report(os.path.join(root, "b.json"), 80e6, kernel="Linux host 6.18.0 x86_64")
        found = compare_json(one_a, one_b)
        cell = found["cells"][0]
        # One run a side can show no significant difference: the smallest exact p is 1.
        check(len(found["cells"]) == 1 and cell["a"]["n"] == 1 and cell["verdict"] == "no difference", f"{cell}")
        check(abs(cell["ratio"] - 0.8) < 1e-9, f"{cell['ratio']}")
        check([row["key"] for row in found["environment_differences"]] == ["system"], f"{found['environment_differences']}")
        for side, values in (("set_a", FAST), ("set_b", SLOW)):
            os.makedirs(os.path.join(root, side))
            for number, value in enumerate(values):
                for connections in (1, 8):
                    write_report(os.path.join(root, side, f"run{number}-P{connections}.json"), value, connections)
        found = compare_json(os.path.join(root, "set_a"), os.path.join(root, "set_b"), "--fail-if-slower", "5", code=1)
        check(verdicts(found) == {1: "slower", 8: "slower"}, f"{found['cells']}")
        check(all(cell["a"]["n"] == 5 for cell in found["cells"]), f"{found['cells']}")
        globbed = compare_json(os.path.join(root, "set_a", "*-P1.json"), os.path.join(root, "set_b", "*-P1.json"),
                               "--fail-if-slower", "5", code=1)
        check(len(globbed["cells"]) == 1 and globbed["cells"][0]["verdict"] == "slower", f"{globbed['cells']}")


@test
def bad_input_is_one_sentence_and_exit_2():
    with tempfile.TemporaryDirectory() as root:
        good = write_campaign(os.path.join(root, "good"), {"1": FAST})
        other = write_campaign(os.path.join(root, "other"), {"32": FAST})
        os.makedirs(os.path.join(root, "empty"))
        not_report = os.path.join(root, "list.json")
        with open(not_report, "w") as file:
            file.write("[1, 2, 3]")
        damaged = write_campaign(os.path.join(root, "damaged"), {"1": FAST})
        with open(os.path.join(damaged, "runs.jsonl"), "r+") as file:
            file.write("not json at all\n")
        cases = [((os.path.join(root, "missing"), good), "does not exist"),
                 ((os.path.join(root, "empty"), good), "neither a campaign"),
                 ((not_report, good), "not a testio --json report"),
                 ((good, other), "no cells in common"),
                 ((damaged, good), "damaged"),
                 ((good,), "required"),
                 ((good, good, "--level", "2"), "--level"),
                 ((good, good, "--fail-if-slower", "lots"), "--fail-if-slower"),
                 ((good, good, "--figure", "latency-p99"), "no measured run")]
        for args, mentions in cases:
            done = compare(*args, code=2)
            check(done.stderr.startswith("testio compare: ") and mentions in done.stderr
                  and done.stderr.count("\n") == 1 and not done.stdout, f"{args}: {done.stderr!r}")


if __name__ == "__main__":
    harness.main(tests)

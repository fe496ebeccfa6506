#!/usr/bin/python3
"""--mesh under Debian's OpenMPI: mpirun -np 4 on this machine, each rank on its own loopback
address (127.0.1.1{rank}); every ordered pair measured with exact counts; -R, --rr and -u rings;
a rank whose address another process holds before the run; usage errors. In a build without MPI
(the sanitized ones), the sentence that says so. Usage: mesh_test.py TESTIO_BINARY mpi|no-mpi.
Counts and names only; no rate or time is asserted."""
import json
import os
import socket
import subprocess
import sys
import tempfile

import harness
from mesh_results import rounds_in, whole_rounds
from harness import Skip, check, test, testio
from http_servers import mesh_port

WITH_MPI = len(sys.argv) > 2 and sys.argv[2] == "mpi"
# As root, OpenMPI wants to be told twice; no CMA between ranks in containers that forbid ptrace.
MPI_ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# The pairs' TCP runs, paced: this suite checks counts and names, never a rate (the fabric's suite
# in the testbed measures rates), and unpaced, two pairs a round over loopback kept both cores in
# the kernel.
PACED = ("-b", "200M")


def mesh(*args, ranks=4, code=0, limit=180):
    """mpirun -np RANKS testio --mesh ARGS on 127.0.1.10.. with a free port; (stdout, stderr)."""
    if not WITH_MPI:
        raise Skip("this build has no MPI")
    port = str(mesh_port(ranks))
    done = subprocess.run(["mpirun", "-np", str(ranks), harness.BINARY, "--mesh", "-B", "127.0.1.1{rank}", "-p", port,
                           *args], capture_output=True, text=True, timeout=limit, stdin=subprocess.DEVNULL, env=MPI_ENV)
    check(done.returncode == code, f"mesh {' '.join(args)}: exit {done.returncode}, wanted {code}: "
                                   f"{failed_pairs(done.stdout)}{done.stderr[-1500:]}")
    return done.stdout, done.stderr, port


def failed_pairs(stdout):
    """The pairs that failed and why, from a --json report (or the text report's end): what a
    failed run's exit code stands for."""
    try:
        pairs = json.loads(stdout)["mesh"]["pairs"]
    except (ValueError, KeyError, TypeError):
        return stdout[-1500:]
    return "".join(f"pair {p['from']} -> {p['to']} failed: {p['reason']}\n" for p in pairs if not p["ok"])


def pairs_of(document, ranks):
    mesh_part = document["mesh"]
    check(mesh_part["ranks"] == ranks and len(mesh_part["hosts"]) == ranks, f"{mesh_part['hosts']}")
    return mesh_part["pairs"]


def check_exact(pair):
    report = pair["report"]
    check(pair["ok"] and pair["reason"] == "", f"{pair['from']} -> {pair['to']}: {pair['reason']}")
    check(report["end"]["testio"]["byte_counts_match"], f"{pair['from']} -> {pair['to']}: counts differ")
    check(pair["sent_bytes"] == pair["received_bytes"] > 0, f"{pair['from']} -> {pair['to']}: {pair['sent_bytes']} "
                                                           f"sent, {pair['received_bytes']} received")


@test
def every_ordered_pair_of_four_ranks_is_measured_with_exact_counts():
    out, _, _ = mesh("2", "-t", "1", "--json", *PACED)
    pairs = pairs_of(json.loads(out), 4)
    check(sorted((p["from"], p["to"]) for p in pairs) == [(a, b) for a in range(4) for b in range(4) if a != b],
          f"{[(p['from'], p['to']) for p in pairs]}")
    for pair in pairs:
        check_exact(pair)
        check(pair["from_address"] == f"127.0.1.1{pair['from']}", pair["from_address"])
    document = json.loads(out)
    check(document["mesh"]["rounds"] == 6 and document["mesh"]["succeeded"], f"{document['mesh']['rounds']}")
    check(all(h["listening"] and h["out_bits_per_second"] > 0 for h in document["mesh"]["hosts"]), "hosts")


@test
def text_report_has_the_matrix_and_the_hosts():
    out, _, _ = mesh("-t", "1", "--mesh-schedule", "pairs", *PACED, ranks=3)
    check("3 ranks, schedule pairs, 3 pairs in 3 rounds" in out, out)
    check("Gbit/s from the sender (row) to the receiver (column)" in out and "127.0.1.12" in out, out)
    check(out.rstrip().endswith("3 of 3 pairs measured"), out)


@test
def reverse_rr_and_udp_rings():
    for args in (["-R", "-t", "1", *PACED], ["--rr", "-t", "1"], ["-u", "-b", "10M", "-t", "1"]):
        out, _, _ = mesh(*args, "--mesh-schedule", "ring", "--json", ranks=3)
        pairs = pairs_of(json.loads(out), 3)
        check(len(pairs) == 3, f"{args}: {len(pairs)} pairs")
        for pair in pairs:
            check(pair["ok"], f"{args}: {pair['reason']}")
            if args[0] != "-u":
                check_exact(pair)


@test
def a_rank_whose_address_is_taken_fails_its_pairs_and_the_rest_are_measured():
    if not WITH_MPI:
        raise Skip("this build has no MPI")
    port = mesh_port()
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.1.12", port))
        squatter.listen()
        done = subprocess.run(["mpirun", "-np", "4", harness.BINARY, "--mesh", "-B", "127.0.1.1{rank}", "-p", str(port),
                               "-t", "1", "--json", *PACED], capture_output=True, text=True, timeout=180, env=MPI_ENV)
    check(done.returncode != 0, f"exit {done.returncode}")
    document = json.loads(done.stdout)  # one whole document even so
    hosts = document["mesh"]["hosts"]
    check(not hosts[2]["listening"] and "Address already in use" in hosts[2]["reason"], f"{hosts[2]}")
    for pair in document["mesh"]["pairs"]:
        if pair["to"] == 2:
            check(not pair["ok"] and "rank 2 is not listening" in pair["reason"], f"{pair}")
        else:
            check_exact(pair)
    check(not document["mesh"]["succeeded"], "succeeded")


def rank_processes(mpirun_pid):
    """{MPI rank: pid} of mpirun's testio --mesh children, read from their environment."""
    ranks = {}
    for pid in harness.children_of(mpirun_pid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                for variable in environ.read().split(b"\0"):
                    if variable.startswith(b"OMPI_COMM_WORLD_RANK="):
                        ranks[int(variable.split(b"=")[1])] = pid
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return ranks


@test
def each_round_is_in_the_results_file_and_a_rank_killed_loses_no_finished_round():
    if not WITH_MPI:
        raise Skip("this build has no MPI")
    with tempfile.TemporaryDirectory() as scratch:
        whole = os.path.join(scratch, "whole.jsonl")
        stdout, _, _ = mesh("-t", "1", "--json", "--mesh-results", whole, *PACED)
        rounds = rounds_in(whole)
        check(sorted(rounds) == list(range(1, 7)) and all(len(pairs) == 2 for pairs in rounds.values()),
              f"the rounds in the file: { {r: len(p) for r, p in rounds.items()} }")
        pairs = [pair for r in sorted(rounds) for pair in rounds[r]]
        for pair in pairs:
            check_exact(pair)
        reported = {(p["from"], p["to"]) for p in json.loads(stdout)["mesh"]["pairs"]}
        check({(p["from"], p["to"]) for p in pairs} == reported, "the file and the report hold other pairs")

        cut = os.path.join(scratch, "cut.jsonl")
        code, _, err = kill_rank_three_after_two_rounds(cut)
        check(code != 0, f"mpirun exited {code} after a rank was killed")
        check("rank 3" in err, f"stderr does not name rank 3: {err[-1500:]}")
        # Pairs are appended as their ranks report them: every round before the last in the file
        # is whole, the last may hold the pairs that ended before the kill.
        rounds = rounds_in(cut)
        check(whole_rounds(cut) >= 2 and sorted(rounds) == list(range(1, len(rounds) + 1))
              and all(len(rounds[r]) == 2 for r in range(1, len(rounds))),
              f"the rounds kept: { {r: len(p) for r, p in rounds.items()} }")
        for r in sorted(rounds):
            for pair in rounds[r]:
                if r <= 2 or 3 not in (pair["from"], pair["to"]):
                    check_exact(pair)  # toward the dead rank's server, gone with it, a pair fails


def kill_rank_three_after_two_rounds(results, *mpirun_options, mesh_options=()):
    """mpirun -np 4 testio --mesh -t 1 --mesh-results RESULTS; rank 3 SIGKILLed once two rounds
    are whole in RESULTS. (mpirun's exit code, stdout, stderr)."""
    port = str(mesh_port())
    run = subprocess.Popen(["mpirun", *mpirun_options, "-np", "4", harness.BINARY, "--mesh", "-B", "127.0.1.1{rank}",
                            "-p", port, "-t", "1", *PACED, "--mesh-results", results, *mesh_options],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                           env=MPI_ENV)
    try:
        harness.wait_until(lambda: whole_rounds(results) >= 2, 120, "two whole rounds in the results file")
        victim = rank_processes(run.pid).get(3)
        check(victim, "no rank 3 among mpirun's children")
        os.kill(victim, 9)
        # Its children (its server, a pair's client) die with it, within 2 s.
        theirs = rf"testio -(s -B 127\.0\.1\.13 -p {port}|c \S+ -p {port} .*-B 127\.0\.1\.13 )"
        harness.wait_until(lambda: not subprocess.run(["pgrep", "-f", theirs], capture_output=True).stdout, 2,
                           "the killed rank's children to die with it")
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=30)
        subprocess.run(["pkill", "-9", "-f", f"testio -[sc] .*-p {port}"], check=False)  # after a failure only
    return run.returncode, out, err


@test
def with_enable_recovery_the_rounds_go_on_without_a_killed_rank():
    if not WITH_MPI:
        raise Skip("this build has no MPI")
    with tempfile.TemporaryDirectory() as scratch:
        results = os.path.join(scratch, "results.jsonl")
        # mpirun --enable-recovery exits 0 whatever its ranks return (OpenMPI 4.1.4): the report says.
        _, out, err = kill_rank_three_after_two_rounds(results, "--enable-recovery",
                                                       mesh_options=("--json", "--stall-timeout", "3"))
        check("rank 3 is lost in round" in err, f"testio's stderr does not name the lost rank: {err[-1500:]}")
        document = json.loads(out)["mesh"]
        check(not document["succeeded"] and "lost in round" in document["hosts"][3]["lost"], f"{document['hosts'][3]}")
        pairs = document["pairs"]
        check(len(pairs) == 12, f"{len(pairs)} pairs in the report")
        for pair in pairs:
            if 3 not in (pair["from"], pair["to"]):
                check_exact(pair)  # the living ranks' pairs are all measured
        failed = [p for p in pairs if not p["ok"]]
        # Toward rank 3 in the round it died in: refused, as its server died with it; later: lost.
        check(failed and all(3 in (p["from"], p["to"]) and p["reason"] for p in failed),
              f"{[(p['from'], p['to'], p['reason']) for p in failed]}")
        check(whole_rounds(results) >= 2, "the results file lost a whole round")


@test
def usage_errors_are_one_sentence():
    if not WITH_MPI:
        done = testio("--mesh", "-t", "1", code=2)
        check("built without MPI" in done.stderr and done.stderr.count("\n") == 1, done.stderr)
        return
    for args, words in ((["--mesh", "-c", "127.0.0.1"], "leave out -s and -c"),
                        (["--mesh", "--mesh-schedule", "star"], "not one of all, pairs, ring"),
                        (["--mesh", "--mesh-slow", "2"], "between 0 and 1"),
                        (["--mesh", "--raw"], "for one pair"),
                        (["-c", "127.0.0.1", "-B", "127.0.1.1{rank}"], "{rank} is the MPI rank"),
                        (["-c", "127.0.0.1", "--mesh-schedule", "ring"], "apply to --mesh"),
                        (["-c", "127.0.0.1", "--mesh-results", "x.jsonl"], "apply to --mesh")):
        done = testio(*args, code=2)
        check(words in done.stderr and done.stderr.count("\n") == 1, f"{args}: {done.stderr}")
    # Without mpirun, MPI makes a world of one: nothing to pair.
    alone = subprocess.run([harness.BINARY, "--mesh", "-t", "1"], capture_output=True, text=True, timeout=60,
                           env=MPI_ENV, stdin=subprocess.DEVNULL)
    check(alone.returncode == 1 and "needs two ranks or more" in alone.stderr, f"{alone.returncode} {alone.stderr}")


TESTS = [every_ordered_pair_of_four_ranks_is_measured_with_exact_counts, text_report_has_the_matrix_and_the_hosts,
         reverse_rr_and_udp_rings, a_rank_whose_address_is_taken_fails_its_pairs_and_the_rest_are_measured,
         each_round_is_in_the_results_file_and_a_rank_killed_loses_no_finished_round,
         with_enable_recovery_the_rounds_go_on_without_a_killed_rank, usage_errors_are_one_sentence]

if __name__ == "__main__":
    harness.main(TESTS)

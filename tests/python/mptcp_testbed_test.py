#!/usr/bin/python3
"""--mptcp over two links: two network namespaces (tools/testbed.sh --links 2 --mptcp) whose server
side announces its second link's address, so each MPTCP connection to the first gains a subflow
over the second. testio -s --mptcp and testio -c --mptcp (on testio's protocol and on iperf3's)
report two subflows per connection and the second link carries part of the data; a server that
does not listen for MPTCP makes the client fall back with a warning, and a namespace with MPTCP
off gets one sentence. Needs root and ip netns (skipped otherwise). Traffic goes only to
198.18.0.0/15 inside namespaces this suite created, and every namespace and process is gone when
it ends.
Usage: mptcp_testbed_test.py TESTIO_BINARY TESTBED_SCRIPT SCHEMA."""
import json

import harness
import testbed_test
from harness import check
from testbed_test import Testbed

tests = []
# Both links slower than the path manager's first subflow could fill alone, so the scheduler
# has a reason to use the second.
LINKS = ("--links", "2", "--rate", "100mbit", "--mptcp")
CONNECTIONS = 2


def test(function):
    tests.append(function)
    return function


def client(bed, server, *extra, limit=60, code=0):
    return bed.run(bed.a, harness.BINARY, "-c", "198.18.1.2", "-p", server.port, "-t", "2", *extra,
                   limit=limit, code=code)


def check_subflows(document, where):
    mptcp = document["end"]["testio"]["sender"].get("mptcp")
    check(mptcp == {"connections": CONNECTIONS, "subflows": 2 * CONNECTIONS, "fell_back": 0},
          f"{where}: the sender's MPTCP figures are {mptcp}")
    for stream in document["end"]["streams"]:
        subflows = stream["sender"]["testio"].get("mptcp_subflows")
        check(subflows == 2, f"{where}: a stream has {subflows} subflows, wanted 2")


def second_link_share(bed, run):
    """The share of the payload-carrying bytes that arrived at the server over tb2 during run()."""
    before = {nic: bed.counters(bed.b, nic)[0] for nic in ("tb1", "tb2")}
    result = run()
    moved = {nic: bed.counters(bed.b, nic)[0] - before[nic] for nic in ("tb1", "tb2")}
    return result, moved["tb2"] / max(1, moved["tb1"] + moved["tb2"])


@test
def each_connection_gains_a_subflow_over_the_second_link():
    with Testbed(*LINKS) as bed:
        with bed.server("--mptcp", bind="0.0.0.0") as server:
            done, share = second_link_share(bed, lambda: client(bed, server, str(CONNECTIONS), "--mptcp", "--json"))
            text = client(bed, server, "1", "--mptcp").stdout
    document = json.loads(done.stdout)
    if testbed_test.SCHEMA:
        import jsonschema
        with open(testbed_test.SCHEMA) as schema:
            errors = list(jsonschema.Draft7Validator(json.load(schema)).iter_errors(document))
        check(not errors, f"--mptcp output does not match the schema: {errors[:1]}")
    check_subflows(document, "testio")
    print(f"# tb2 carried {share:.0%} of the bytes the server received", flush=True)
    check(share > 0.1, f"the second link carried {share:.1%} of the bytes: its subflows were idle")
    check("mptcp local (client): 1 connection, 2 subflows (2)" in text, f"the text report lacks its mptcp line:\n{text}")


@test
def iperf3s_protocol_carries_mptcp_to_testios_server():
    with Testbed(*LINKS) as bed:
        with bed.server("--mptcp", bind="0.0.0.0") as server:
            done = client(bed, server, "--iperf3", "-P", str(CONNECTIONS), "--mptcp", "--json")
    check_subflows(json.loads(done.stdout), "--iperf3")


@test
def a_plain_server_makes_the_client_fall_back_with_a_warning():
    with Testbed(*LINKS) as bed:
        with bed.server(bind="0.0.0.0") as server:
            done = client(bed, server, str(CONNECTIONS), "--mptcp", "--json")
            iperf3 = client(bed, server, "--iperf3", "--mptcp", "--json")
            check("asked for MPTCP (-m); this server listens for plain TCP" in server.stderr(),
                  f"the server did not say the iperf3 client's MPTCP fell back: {server.stderr()}")
    check(f"{CONNECTIONS} of {CONNECTIONS} data connections fell back to plain TCP" in done.stderr,
          f"no fallback warning: {done.stderr}")
    check("mptcp" not in json.loads(done.stdout)["end"]["testio"]["sender"], "a plain TCP test reported MPTCP")
    check("fell back to plain TCP" in iperf3.stderr, f"no fallback warning toward iperf3: {iperf3.stderr}")


@test
def mptcp_off_is_one_sentence():
    with Testbed("--links", "1") as bed:
        bed.run(bed.a, "sysctl", "-qw", "net.mptcp.enabled=0")
        bed.run(bed.b, "sysctl", "-qw", "net.mptcp.enabled=0")
        with bed.server(bind="0.0.0.0") as server:
            done = client(bed, server, "--mptcp", code=1)
        refused = bed.run(bed.b, harness.BINARY, "-s", "--mptcp", "-p", "0", code=1, limit=20)
    for stderr in (done.stderr, refused.stderr):
        check("MPTCP is off on this host (net.mptcp.enabled = 0" in stderr, f"not one sentence: {stderr}")


if __name__ == "__main__":
    testbed_test.run_suite(tests)

#!/usr/bin/python3
"""UDP tests (-u) on loopback: exact counts with -n in every direction and fast path, iperf3's -u
keys, the receiving socket's drops under a tiny -w, strays on the server's port, a server whose
UDP port another socket holds, -p 0 choosing a port whose UDP is free, a vanished peer, IPv6, and
the refusals. Usage: udp_test.py TESTIO_BINARY SCHEMA. Counts only; the one rate
checked is an upper bound that pacing must keep."""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import harness
from harness import Server, check, client, test

valid = harness.schema_checker(sys.argv[2])


def run_json(server, *args, code=0):
    document = json.loads(client(server, "-u", *args, "--json", code=code).stdout)
    valid(document)
    return document


def directions(document):
    """Each direction's end: the forward one, and --bidir's reverse one."""
    yield document["end"]
    if "bidir_reverse" in document["end"]["testio"]:
        yield document["end"]["testio"]["bidir_reverse"]["end"]


def check_books(end, total_bytes, what):
    check(end["sum_sent"]["bytes"] == total_bytes, f"{what}: sent {end['sum_sent']['bytes']} bytes, asked {total_bytes}")
    for stream in end["streams"]:
        sent = stream["sender"]["testio"]["udp"]["datagrams"]
        got = stream["receiver"]["testio"]["udp"]
        check(sent == got["datagrams"] + got["lost"],
              f"{what}: stream {stream['udp']['socket']}: sent {sent} != received {got['datagrams']} + lost {got['lost']}")
        check(stream["udp"]["lost_packets"] == got["lost"] and stream["udp"]["packets"] == sent,
              f"{what}: iperf3's keys disagree with the counts: {stream['udp']}")


@test
def counted_flows_balance_exactly_in_every_direction_and_fast_path():
    total = 3 * 1024 * 1024  # 1086 datagrams and one of 384 bytes per flow
    with Server() as server:
        for direction in ((), ("-R",), ("--bidir",)):
            for paths in ((), ("--no-gso", "--no-gro", "--batch", "1"), ("--no-connect",)):
                what = " ".join(("-n 3M -P 2", *direction, *paths))
                document = run_json(server, "-n", "3M", "-P", "2", "-b", "300M", *direction, *paths)
                for end in directions(document):
                    check_books(end, total, what)
                udp = document["end"]["testio"]["udp"]
                check(udp["fast_paths"]["gso"] == ("--no-gso" not in paths), f"{what}: fast paths {udp['fast_paths']}")


@test
def timed_defaults_speak_iperf3s_udp_keys():
    with Server() as server:
        document = run_json(server, "-t", "1")
    spec = document["start"]["testio"]["spec"]
    check(spec["workload"] == "udp" and spec["buffer"] == 1448, f"defaults: {spec}")
    end = document["end"]
    for key in ("jitter_ms", "lost_packets", "packets", "lost_percent"):
        check(key in end["sum"] and key in end["sum_received"] and key in end["streams"][0]["udp"], f"no {key}")
    check(all("packets" in interval["sum"] for interval in document["intervals"]), "an interval without packets")
    # Pacing's bound: iperf3's 1 Mbit/s default, never above it by more than a datagram.
    seconds = end["sum_sent"]["seconds"]
    check(end["sum_sent"]["bytes"] <= 1048576 / 8 * seconds + 2 * 1448, f"{end['sum_sent']['bytes']} bytes in {seconds} s")
    check(end["testio"]["udp"]["rate_bps_per_flow"] == 1048576, "the default rate is not iperf3's")
    delay = end["testio"]["udp"]["one_way_delay_us"]  # one host: one clock
    check(delay["clock"] == "shared" and delay["error_bound_us"] == 0, f"clock: {delay}")
    check(0 <= delay["p50"] <= delay["p90"] <= delay["p99"] <= delay["max"] and delay["max"] > 0, f"delays: {delay}")
    check("one_way_delay_us" in end["streams"][0]["udp"]["testio"], "no delay per stream")


@test
def text_report_tells_loss_from_the_receivers_own_drops():
    with Server() as server:
        text = client(server, "-u", "-t", "1", "-b", "0", "-w", "4K", "--no-gso", "--no-gro").stdout
        document = run_json(server, "-t", "1", "-b", "0", "-w", "4K", "--no-gso", "--no-gro")
    check("dropped by the receiving socket" in text and "datagrams per call" in text, f"no udp lines:\n{text}")
    udp = document["end"]["testio"]["udp"]
    check(udp["lost_datagrams"] > 0 and udp["receiver_socket_drops"] > 0, f"a 4K buffer lost nothing: {udp}")
    check(udp["receiver_socket_drops"] <= udp["lost_datagrams"], f"more socket drops than loss: {udp}")
    host = udp.get("host_udp_counters_delta")
    check(host is None or host["rcvbuf_errors_drops"] >= udp["receiver_socket_drops"], f"host counters: {host}")


@test
def strays_on_the_port_are_counted_and_ignored():
    with Server() as server:
        test_run = harness.start_client(server, "-u", "-t", "2", "-b", "50M", "--json")
        time.sleep(0.5)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stray:
            for payload in (b"", b"x" * 3000, b"tioH" + b"\0" * 20, b"\x00\x00\x00\x01" * 8):
                for _ in range(50):
                    stray.sendto(payload, ("127.0.0.1", int(server.port)))
        out, err = test_run.communicate(timeout=60)
        check(test_run.returncode == 0, f"the test beside the strays failed: {err}")
        end = json.loads(out)["end"]
        check(end["testio"]["udp"]["strays"] == 0, "strays reached a flow")
        server.wait_log("ignored a datagram on UDP port")
        run_json(server, "-n", "1M", "-b", "100M")  # still serving


@contextlib.contextmanager
def held_udp_port():
    """A UDP socket on a port above the kernel's ephemeral ones (bound without SO_REUSEADDR, so
    no server can share it), whose TCP number no socket holds: the kernel's bind(0) would pick one
    from the ephemeral range, whose TCP twin any suite beside this one may be connecting from."""
    for _ in range(20):
        port = harness.free_port_range_outside_the_ephemeral_ones(1)
        holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            holder.bind(("127.0.0.1", port))
        except OSError:
            holder.close()
            continue
        with holder:
            yield str(port)
        return
    raise harness.Failure("no port above the ephemeral range took a UDP socket in 20 tries")


@test
def a_server_whose_udp_port_is_taken_refuses_udp_tests_at_once():
    with held_udp_port() as port:
        with Server("-p", port) as server:  # the harness's -p 0 comes first; this one wins
            check(server.port == port, f"the server listens on {server.port}, not -p {port}")
            server.wait_log(f"UDP port {port} cannot be opened")
            # Refused at the request, in one line, not left to time out ("its peer never came").
            refused = client(server, "-u", "-t", "5", code=1).stderr
            check("takes no test that sends UDP" in refused and refused.count("\n") == 1,
                  f"the refusal: {refused!r}")
            refused = client(server, "--latency", "--phase-time", "1", code=1).stderr  # its UDP probes
            check("takes no test that sends UDP" in refused, f"the refusal of --latency: {refused!r}")
            client(server, "-n", "1M")  # TCP tests go on


@test
def port_zero_finds_a_port_whose_udp_is_free_too():
    """In a namespace whose kernel picks ports from a pair (40000 and 40001, then 40002 and 40003,
    ...) whose odd UDP port is taken: -p 0 must end on the even one, though Linux's bind() tries
    odd ports first. Each run has a pair of its own: the last one's port is in TIME_WAIT."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        raise harness.Skip("needs root and ip(8) for a network namespace")
    namespace = f"testio-udp-{os.getpid()}"
    inside = ["ip", "netns", "exec", namespace]
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    holder = None
    try:
        subprocess.run([*inside, "ip", "link", "set", "lo", "up"], check=True)
        holder = subprocess.Popen([*inside, sys.executable, "-c", HOLD_ODD_UDP_PORTS], stdout=subprocess.PIPE, text=True)
        check(holder.stdout.readline().strip() == "holding", "the UDP holder did not start")
        for free in range(40000, 40012, 2):
            port_range(inside, f"{free} {free + 1}")
            with Server(prefix=inside) as server:
                check(server.port == str(free), f"-p 0 chose {server.port}, whose UDP port is taken")
                port_range(inside, "41000 41999")  # the client's own ports
                done = subprocess.run([*inside, *harness.client_argv(server, "-u", "-n", "100K")], capture_output=True,
                                      text=True, timeout=60, stdin=subprocess.DEVNULL)
                check(done.returncode == 0, f"a UDP test in the namespace: {done.stderr}")
    finally:
        if holder:
            holder.kill()
            holder.wait(10)
        subprocess.run(["ip", "netns", "delete", namespace], check=True)


def port_range(inside, ports):
    subprocess.run([*inside, "sysctl", "-q", "-w", f"net.ipv4.ip_local_port_range={ports}"], check=True)


HOLD_ODD_UDP_PORTS = """
import socket, time
held = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(6)]
for number, s in enumerate(held):
    s.bind(("127.0.0.1", 40001 + 2 * number))
print("holding", flush=True)
time.sleep(120)
"""


@test
def a_vanished_peer_ends_the_test_without_waiting_forever():
    with Server() as server:
        running = harness.start_client(server, "-u", "-t", "30", "-b", "10M")
        time.sleep(1)
        running.send_signal(signal.SIGKILL)
        running.wait(10)
        server.wait_log("ended", limit=30)
        run_json(server, "-n", "1M", "-b", "100M")
    with Server() as server:
        running = harness.start_client(server, "-u", "-t", "30", "-b", "10M", "-R")
        time.sleep(1)
        server.process.send_signal(signal.SIGKILL)
        started = time.monotonic()
        out, err = running.communicate(timeout=60)
        check(running.returncode == 1, f"client exit {running.returncode} after the server vanished: {err}")
        check(time.monotonic() - started < 45, "the client waited out the whole test")


@test
def ipv6_flows_balance():
    with Server(bind="::1") as server:
        done = subprocess.run([harness.BINARY, "-c", "::1", "-p", server.port, "-u", "-n", "2M", "-P", "2", "--bidir",
                               "-b", "300M", "--json"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        check(done.returncode == 0, f"::1: {done.stderr}")
        document = json.loads(done.stdout)
        for end in directions(document):
            check_books(end, 2 * 1024 * 1024, "::1")


@test
def a_rate_the_host_cannot_reach_is_said():
    with Server() as server:
        document = run_json(server, "-t", "1", "-b", "100G", "--no-gso", "--batch", "1", "-w", "8M")
    udp = document["end"]["testio"]["udp"]
    check(not udp["rate_reached"] and "of the 100" in udp["rate_shortfall"], f"no shortfall said: {udp}")


@test
def bad_udp_options_are_one_sentence_and_exit_2():
    with Server() as server:
        for args, words in ((("-u", "-l", "70000"), "at most 65507 bytes"),
                            (("-u", "-l", "65510"), "over IPv4 holds"),
                            (("-u", "-l", "16"), "at least 32 bytes"),
                            (("-u", "--batch", "0"), "--batch must be from 1 to 1024"),
                            (("--no-gso",), "apply to -u tests"),
                            (("-u", "--rr"), "drop --rr"),
                            (("-u", "--engine", "uring"), "asio")):
            done = client(server, *args, code=2)
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            check(len(lines) == 1 and words in lines[0], f"{args}: {done.stderr!r}")


if __name__ == "__main__":
    harness.main()

#!/usr/bin/python3
"""-C, -M, -N, -A, --cport, -b/--total-rate, --fq-rate and --no-lowat on 127.0.0.1: each is read back
from the kernel (socket options, also of the running processes' own sockets, /proc/PID/task/*/status,
ss) and shown in the report; exact byte counts
with -n. Usage: tuning_test.py TESTIO_BINARY SCHEMA. No rate or time is asserted beyond pacing's
upper bound (a paced sender cannot exceed its rate by construction)."""
import ctypes
import json
import os
import re
import subprocess
import sys
import socket
import tempfile
import time

import harness
from harness import Server, check, client, test

valid = harness.schema_checker(sys.argv[2])


def document_of(done):
    return valid(json.loads(done.stdout))


def worker_cpus(pid):
    """Cpus_allowed_list of each worker thread (named testio-wN) of process `pid`."""
    lists = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                if not comm.read().startswith("testio-w"):
                    continue
            with open(f"/proc/{pid}/task/{tid}/status") as status:
                lists.append(re.search(r"Cpus_allowed_list:\s*(\S+)", status.read()).group(1))
        except (FileNotFoundError, ProcessLookupError):
            continue
    return lists


TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)
SYS_PIDFD_GETFD = 438


def lowat_marks(pid, port):
    """(SO_RCVLOWAT, TCP_NOTSENT_LOWAT) of each TCP socket of process `pid` with `port` at either end,
    read from a copy of the descriptor taken with pidfd_getfd (the control connection included)."""
    libc = ctypes.CDLL(None, use_errno=True)
    marks = []
    pidfd = os.pidfd_open(pid)
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except FileNotFoundError:
                continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(name), 0)
            if fd < 0:
                if ctypes.get_errno() == 1:
                    raise harness.Skip("pidfd_getfd is not permitted here")
                continue
            with socket.socket(fileno=fd) as sock:
                try:
                    ends = (sock.getsockname()[1], sock.getpeername()[1])
                except OSError:
                    continue  # the listener, or not an internet socket
                if sock.type == socket.SOCK_STREAM and int(port) in ends:
                    marks.append((sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT),
                                  sock.getsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT)))
    finally:
        os.close(pidfd)
    return marks


@test
def lowat_marks_follow_the_rate_unless_told_not_to():
    with Server() as server:
        # --bidir: each side has a sending and a receiving data connection.
        # -w 4M: the receiver's mark is at most a quarter of its buffer, and on loopback autotuning
        # may never grow the buffer to the 2 MiB where the mark starts (a CI machine's did not).
        process = harness.start_client(server, "1", "--bidir", "-t", "3", "-i", "0", "--json", "-w", "4M")
        # The marks are retuned every 10 ms, so each is noted once seen. The sender's mark is at
        # least 1 MiB at any rate; the receiver's rises above 1 only past ~4.2 Gbit/s per connection
        # (1 ms of data >= 512 KiB), which a loaded or sanitized build may not reach.
        seen = {pid: {"receive": False, "send": False} for pid in (process.pid, server.process.pid)}
        try:
            def all_seen():
                for pid, marks_seen in seen.items():
                    marks = lowat_marks(pid, server.port)
                    marks_seen["receive"] |= any(rcv > 1 for rcv, _ in marks)
                    marks_seen["send"] |= any(notsent >= 2**20 for _, notsent in marks)
                return all(all(side.values()) for side in seen.values()) or process.poll() is not None
            harness.wait_until(all_seen, 10, "SO_RCVLOWAT above 1 and TCP_NOTSENT_LOWAT of at least 1 MiB on both sides")
        finally:
            out, err = process.communicate(timeout=60)
        check(process.returncode == 0, err)
        document = document_of(subprocess.CompletedProcess([], 0, out, err))
        check(document["start"]["testio"]["tuning"]["rate_lowat"], "rate_lowat in the report")
        received_at = {server.process.pid: document["end"]["sum_received"]["bits_per_second"],
                       process.pid: document["end"]["testio"]["bidir_reverse"]["end"]["sum_received"]["bits_per_second"]}
        for pid, marks_seen in seen.items():
            side = "client" if pid == process.pid else "server"
            check(marks_seen["send"], f"the {side}'s sender never set TCP_NOTSENT_LOWAT to 1 MiB or more")
            check(marks_seen["receive"] or received_at[pid] < 6e9,
                  f"the {side} received at {received_at[pid] / 1e9:.1f} Gbit/s, yet never raised SO_RCVLOWAT")

        process = harness.start_client(server, "1", "--bidir", "-t", "4", "-i", "0", "--json", "--no-lowat")
        try:
            harness.wait_until(lambda: len(lowat_marks(server.process.pid, server.port)) >= 3, 10, "data connections")
            time.sleep(1)  # past the first 10 ms rate windows, where the marks would have been set
            for pid in (process.pid, server.process.pid):
                marks = lowat_marks(pid, server.port)
                check(marks and all(mark == (1, 0) for mark in marks), f"--no-lowat left marks {marks} in {pid}")
        finally:
            out, err = process.communicate(timeout=60)
        check(process.returncode == 0, err)
        document = document_of(subprocess.CompletedProcess([], 0, out, err))
        check(not document["start"]["testio"]["tuning"]["rate_lowat"], "rate_lowat false in the report")
        check(document["end"]["sum_sent"]["bytes"] == document["end"]["sum_received"]["bytes"], "byte counts")
        text = client(server, "1", "-n", "1M", "--no-lowat").stdout
        check("kernel's lowat marks" in text, text.splitlines()[1])


@test
def socket_options_are_read_back_and_reported():
    with Server() as server:
        document = document_of(client(server, "2", "-n", "20M", "-C", "reno", "-M", "1000", "-N", "--json"))
        start, end = document["start"], document["end"]
        tuning = start["testio"]["tuning"]
        check(tuning["congestion_requested"] == "reno" and tuning["mss_requested"] == 1000 and tuning["no_delay"],
              f"tuning: {tuning}")
        # Linux reports the MSS less TCP options (timestamps: 12 bytes).
        check(0 < start["tcp_mss_default"] <= 1000, f"MSS in use {start['tcp_mss_default']}")
        check(end["sender_tcp_congestion"] == "reno" and end["receiver_tcp_congestion"] == "reno",
              f"congestion {end['sender_tcp_congestion']} / {end['receiver_tcp_congestion']}")
        check(end["sum_sent"]["bytes"] == 20 * 2**20 == end["sum_received"]["bytes"], "byte counts")
        text = client(server, "1", "-t", "1", "-C", "cubic", "-N").stdout
        check("tuning: congestion cubic, no delay" in text, text.splitlines()[1])


@test
def pinning_shows_in_proc_on_both_sides():
    cpus = os.sched_getaffinity(0)
    cpu = str(max(cpus))
    with Server() as server:
        process = harness.start_client(server, "2", "-t", "3", "-A", cpu, "-i", "0", "--json")
        try:
            # A worker thread is named before its creator pins it: wait for the pinning, not the names.
            try:
                harness.wait_until(lambda: worker_cpus(process.pid) == worker_cpus(server.process.pid) == [cpu, cpu],
                                   10, "two workers pinned on each side")
            except harness.Failure:
                raise harness.Failure(f"workers' CPUs: client {worker_cpus(process.pid)}, "
                                      f"server {worker_cpus(server.process.pid)}, wanted {cpu} each")
        finally:
            out, err = process.communicate(timeout=60)
        check(process.returncode == 0, err)
        tuning = document_of(subprocess.CompletedProcess([], 0, out, err))["start"]["testio"]["tuning"]
        check(tuning["client_cpus"] == [int(cpu)] and tuning["server_cpus"] == [int(cpu)], f"{tuning}")
    # A server pinned itself keeps its own CPUs.
    low = str(min(cpus))
    with Server("-A", low) as server:
        document = document_of(client(server, "1", "-n", "1M", "-A", cpu, "--json"))
        check(document["start"]["testio"]["tuning"]["server_cpus"] == [int(low)], "server CPUs")
    done = subprocess.run([harness.BINARY, "-c", "127.0.0.1", "-A", "1023"], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    check(done.returncode == 1 or done.returncode == 2, f"pinning to CPU 1023: {done.returncode} {done.stderr}")


@test
def cport_range_is_honoured():
    first = harness.free_port_range_outside_the_ephemeral_ones(6)
    with Server() as server:
        process = harness.start_client(server, "3", "-t", "2", "--cport", f"{first}-{first + 5}", "-i", "0")
        try:
            def ports():
                ss = subprocess.run(["ss", "-tnH", "state", "established", f"( dport = :{server.port} )"],
                                    capture_output=True, text=True).stdout
                return sorted({int(m) for m in re.findall(r"127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:" + server.port, ss)})
            harness.wait_until(lambda: len(ports()) >= 4 or process.poll() is not None, 10, "the data connections")
            if process.poll() is not None:
                raise harness.Failure(f"the client ended early: {process.communicate()[1]}")
            data_ports = [p for p in ports() if first <= p <= first + 5]
            check(data_ports == [first, first + 1, first + 2], f"source ports {ports()}, wanted {first}..{first + 2}")
        finally:
            out, err = process.communicate(timeout=60)
        check(process.returncode == 0 and f"source ports {first}-{first + 2}" in out, err + out[:300])


@test
def pacing_holds_each_connection_to_its_rate():
    with Server() as server:
        for args, per_connection in ((["-b", "80M"], 80e6), (["--total-rate", "160M"], 80e6)):
            document = document_of(client(server, "2", "-t", "2", *args, "--json"))
            for stream in document["end"]["streams"]:
                rate = stream["sender"]["bits_per_second"]
                # Paced from the start: never above the rate, give or take one 5 ms chunk.
                check(0 < rate <= per_connection * 1.03, f"{args}: a connection sent at {rate / 1e6:.1f} Mbit/s")
        document = document_of(client(server, "1", "-n", "5M", "--fq-rate", "200M", "--json"))
        tuning = document["start"]["testio"]["tuning"]
        check(abs(tuning["fq_rate_bps"] - 200e6) < 1e3, f"SO_MAX_PACING_RATE read back {tuning['fq_rate_bps']}")
        check(document["end"]["sum_received"]["bytes"] == 5 * 2**20, "byte count with --fq-rate")


@test
def every_send_mode_moves_the_exact_count():
    with Server() as server:
        for mode in ("send", "zerocopy", "sendfile"):
            document = document_of(client(server, "3", "-n", "100M", "--send-mode", mode, "--json"))
            end = document["end"]
            check(end["sum_sent"]["bytes"] == 100 * 2**20 == end["sum_received"]["bytes"], f"{mode}: byte counts")
            check(document["start"]["testio"]["send_mode"] == mode, f"{mode}: start.testio.send_mode")
            if mode == "zerocopy":
                zerocopy = end["testio"]["sender"].get("zerocopy")
                # Loopback: the kernel reports every completed send as copied.
                check(zerocopy and zerocopy["completed_sends"] > 0 and zerocopy["zero_copy_share"] == 0,
                      f"zerocopy figures {zerocopy}")
        with tempfile.TemporaryDirectory() as directory:
            source = harness.random_file(directory, 3_000_001)
            for mode in ("sendfile", "zerocopy"):
                text = client(server, "2", "-F", source, "--send-mode", mode, "-i", "0").stdout
                check(text.count("received: match") == 2, f"{mode} -F digests:\n{text[-400:]}")


@test
def interface_binding_is_read_back():
    with Server(bind="127.0.0.1%lo") as server:
        text = client(server, "1", "-n", "1M", "-B", "127.0.0.1%lo").stdout
        check("tuning: interface lo" in text, text.splitlines()[1] if len(text.splitlines()) > 1 else text)
        done = client(server, "1", "-n", "1M", "-B", "127.0.0.1%nosuchdev0", code=1)
        check("no network interface 'nosuchdev0'" in done.stderr, done.stderr)
    done = subprocess.run([harness.BINARY, "-s", "-B", "127.0.0.1%nosuchdev0", "-p", "0"], capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    check(done.returncode == 1 and "nosuchdev0" in done.stderr, f"{done.returncode} {done.stderr}")


@test
def rx_affinity_follow_pins_the_receiving_workers():
    with Server() as server:
        for direction in ([], ["-R"]):
            document = json.loads(client(server, "4", "-n", "40M", "--rx-affinity", "follow", "--json", *direction).stdout)
            valid(document)
            check(document["start"]["testio"]["spec"]["rx_affinity_follow"] is True, "the spec does not say follow")
            check(document["end"]["testio"]["byte_counts_match"], f"counts differ {direction}")
            cpus = [stream["receiver"]["testio"].get("worker_cpu") for stream in document["end"]["streams"]]
            check(all(isinstance(cpu, int) and 0 <= cpu < (os.cpu_count() or 1) for cpu in cpus),
                  f"{direction}: receiving streams' worker CPUs {cpus}")


@test
def bad_tuning_is_one_sentence():
    cases = [(["-c", "h", "-C", "Bad Name"], 2, "congestion"), (["-c", "h", "-M", "10"], 2, "-M"),
             (["-c", "h", "-A", "3-1"], 2, "CPU list"), (["-c", "h", "4", "--cport", "5000-5001"], 2, "--cport"),
             (["-c", "h", "--cport", "9-3"], 2, "backwards"), (["-c", "h", "-b", "fast"], 2, "rate"),
             (["-c", "h", "-b", "1G", "--total-rate", "2G"], 2, "exclude"), (["-s", "-C", "reno"], 2, "client option"),
             (["-s", "-b", "1G"], 2, "client option"), (["-c", "h", "--rr", "-b", "1G"], 2, "closed loops"),
             (["-c", "127.0.0.1", "-p", "1", "-C", "nosuch"], 1, "not available"),
             (["-c", "h", "-B", "1.2.3.4%"], 2, "interface name"),
             (["-c", "h", "--send-mode", "splice"], 2, "--send-mode"), (["-s", "--send-mode", "zerocopy"], 2, "client"),
             (["-c", "h", "--rr", "--send-mode", "sendfile"], 2, "bulk tests"),
             (["-c", "h", "--rr", "--no-lowat"], 2, "--no-lowat"), (["-s", "--no-lowat"], 2, "client option"),
             (["-c", "h", "--spread", "odd"], 2, "'even'"), (["-c", "h", "-R", "--spread", "even"], 2, "-R"),
             (["-c", "h", "--spread", "even", "--cport", "5000-5001"], 2, "give one"),
             (["-c", "h", "--transfers", "3", "--size", "1M", "--spread", "even"], 2, "bulk tests"),
             (["-c", "h", "--iperf3", "--spread", "even"], 2, "--spread"), (["-s", "--spread", "even"], 2, "client"),
             (["-c", "h", "--rx-affinity", "near"], 2, "'follow'"), (["-s", "--rx-affinity", "follow"], 2, "client"),
             (["-c", "h", "--engine", "threads", "--rx-affinity", "follow"], 2, "thread per connection")]
    for args, code, mentions in cases:
        done = subprocess.run([harness.BINARY, *args], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        check(done.returncode == code and mentions in done.stderr and len(done.stderr.strip().splitlines()) == 1,
              f"{args}: exit {done.returncode} (want {code}) {done.stderr!r}")


if __name__ == "__main__":
    harness.main()

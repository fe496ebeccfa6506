"""The figures a campaign keeps from one run's `testio --json` report: goodput, CPU seconds and
system calls per GB on each side, and the percentiles of rr, transfers and --latency tests. Only
the figures the report has are given; names end in their unit."""

PERCENTILES = ("p50", "p90", "p99")


def number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def goodput(end):
    """Bits/s the receiver got; the sender's when no receiver's sum is there (a raw sink).
    Transfers have their own rate over the whole download, connections included, where the sums'
    time is the bytes' alone."""
    transfers = number(((end.get("testio") or {}).get("transfers") or {}).get("bits_per_second"))
    if transfers is not None:
        return transfers
    for key in ("sum_received", "sum_sent", "sum"):
        rate = number((end.get(key) or {}).get("bits_per_second"))
        if rate:
            return rate
    return None


def side_figures(end, side, total_bytes):
    """CPU-s/GB and calls/GB of one side ("sender" or "receiver")."""
    facts = (end.get("testio") or {}).get(side) or {}
    found = {}
    cpu = number((facts.get("cpu") or {}).get("cpu_seconds_per_gb"))
    if cpu is not None:
        found[f"{side}_cpu_s_per_gb"] = cpu
    calls = number(facts.get("calls"))
    if calls is not None and total_bytes:
        found[f"{side}_calls_per_gb"] = calls / (total_bytes / 1e9)
    return found


def percentile_figures(prefix, distribution, unit):
    found = {}
    for name in PERCENTILES:
        value = number((distribution or {}).get(name))
        if value is not None:
            found[f"{prefix}_{name}_{unit}"] = value
    return found


def rr_and_transfer_figures(testio):
    found = {}
    rr = testio.get("rr")
    if isinstance(rr, dict):
        if number(rr.get("messages_per_second")) is not None:
            found["rr_messages_per_s"] = rr["messages_per_second"]
        found.update(percentile_figures("latency", rr.get("latency_us"), "us"))
    transfers = testio.get("transfers")
    if isinstance(transfers, dict):
        for key, name in (("transfers_per_second", "transfers_per_s"), ("failed", "transfers_failed")):
            if number(transfers.get(key)) is not None:
                found[name] = transfers[key]
        found.update(percentile_figures("transfer", transfers.get("transfer_ms"), "ms"))
        found.update(percentile_figures("connect", transfers.get("connect_us"), "us"))
    return found


def latency_figures(phases):
    """--latency: each phase's probe kinds, e.g. latency_download_udp_p99_ms; a phase name seen
    again (idle at both ends) gets _2."""
    found, seen = {}, {}
    for phase in phases if isinstance(phases, list) else []:
        name = str(phase.get("name", "phase"))
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}_{seen[name]}"
        for kind in ("udp", "tcp", "connect"):
            probes = phase.get(kind)
            if isinstance(probes, dict):
                found.update({f"latency_{label}_{kind}_{p}_ms": number(probes.get(f"{p}_ms"))
                              for p in PERCENTILES if number(probes.get(f"{p}_ms")) is not None})
    return found


def figures(report):
    """{name: value} of a run's report; {} when it has no end."""
    end = (report or {}).get("end") if isinstance(report, dict) else None
    if not isinstance(end, dict):
        return {}
    found = {}
    rate = goodput(end)
    if rate is not None:
        found["goodput_bps"] = rate
    sent = number((end.get("sum_sent") or {}).get("bytes"))
    received = number((end.get("sum_received") or {}).get("bytes"))
    found.update(side_figures(end, "sender", sent))
    found.update(side_figures(end, "receiver", received))
    found.update(rr_and_transfer_figures(end.get("testio") or {}))
    found.update(latency_figures(end.get("latency")))
    return found


def peer_version(report):
    """The peer's version where the report says it: a testio server's in its accept
    (start.testio.peer_version), else an iperf3 server's output (--get-server-output), else None."""
    said = (((report or {}).get("start") or {}).get("testio") or {}).get("peer_version") if isinstance(report, dict) else None
    if isinstance(said, str) and said:
        return said
    server = (report or {}).get("server_output_json") if isinstance(report, dict) else None
    version = ((server or {}).get("start") or {}).get("version")
    return version if isinstance(version, str) else None

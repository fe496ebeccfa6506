"""The report's figures as tables for the HTML page: what each test was (its start line), its totals
per workload and direction, each connection, and each kind's own (UDP, latency phases,
distributions, the mesh). Plain rows of text; html_page.py lays them out."""
from . import distributions, mesh, rpm

MAX_ROWS = 256  # per-connection rows shown of a test of thousands; the rest counted in a note


class Table:
    def __init__(self, title, columns, rows, note=""):
        self.title, self.columns, self.rows, self.note = title, columns, rows, note


def gbits(bits_per_second):
    return f"{(bits_per_second or 0) / 1e9:.2f}"


def number(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"  # no 4.63e+03
    return str(value)


def start_line(label, test):
    """Key-value rows: what ran, between which hosts, with which options."""
    start = test.get("start") or {}
    testio = start.get("testio") or {}
    spec = testio.get("spec") or {}
    test_start = start.get("test_start") or {}
    peer = start.get("connecting_to") or {}
    host = f"{peer.get('host')}:{peer.get('port')}" if peer else (start.get("accepted_connection") or {}).get("host", "")
    options = ", ".join(f"{k} {v}" for k, v in sorted(spec.items())
                        if k not in ("workload", "connections", "duration_s", "with", "settings") and v not in (0, "", [], False, None))
    rows = [("test", f"{testio.get('workload', 'stream')}, {test_start.get('num_streams', spec.get('connections', '?'))} "
                     f"connections, {test_start.get('duration', spec.get('duration_s', 0)):g} s, "
                     f"{spec.get('direction', 'reverse' if test_start.get('reverse') else 'forward')}"),
            ("role", testio.get("role", "")), ("peer", host), ("when", (start.get("timestamp") or {}).get("time", "")),
            ("version", start.get("version", "")), ("system", start.get("system_info", "")),
            ("options", options)]
    for key, value in sorted((spec.get("settings") or {}).items()):
        rows.append((f"settings.{key}", number(value)))
    for k, other in enumerate(spec.get("with") or []):
        rows.append((f"with {k + 1}", ", ".join(f"{key} {value}" for key, value in sorted(other.items()) if key != "settings")))
    if test.get("error"):
        rows.append(("error", str(test["error"])))
    return Table(f"{label}: the test", ["", ""], [list(row) for row in rows])


def totals(label, parts):
    rows = []
    for part in parts:
        end = part.end or {}
        sent, received = end.get("sum_sent") or {}, end.get("sum_received") or {}
        testio = end.get("testio") or {}
        receiver = testio.get("receiver") or {}
        cpu = end.get("cpu_utilization_percent") or {}
        rows.append([part.workload, part.direction, number(sent.get("bytes")), number(received.get("bytes")),
                     gbits(received.get("bits_per_second") or sent.get("bits_per_second")),
                     number(sent.get("retransmits")), number(receiver.get("jain_fairness_index")),
                     number(cpu.get("host_total")), number(cpu.get("remote_total")),
                     number((receiver.get("cpu") or {}).get("cpu_seconds_per_gb"))])
    return Table(f"{label}: totals", ["workload", "direction", "bytes sent", "bytes received", "Gbit/s",
                                      "retransmits", "Jain", "CPU % here", "CPU % peer", "receiver CPU-s/GB"], rows)


def connections(label, part):
    streams = (part.end or {}).get("streams") or []
    rows = []
    for stream in streams[:MAX_ROWS]:
        sender, receiver = stream.get("sender") or {}, stream.get("receiver") or {}
        rows.append([number(sender.get("socket", receiver.get("socket"))), number(sender.get("bytes")),
                     number(receiver.get("bytes")), gbits(receiver.get("bits_per_second") or sender.get("bits_per_second")),
                     number(sender.get("retransmits")), number(sender.get("mean_rtt"))])
    note = f"the first {MAX_ROWS} of {len(streams)} connections" if len(streams) > MAX_ROWS else ""
    return Table(f"{label}: each connection ({part.workload}, {part.direction})",
                 ["connection", "bytes sent", "bytes received", "Gbit/s", "retransmits", "mean RTT µs"], rows, note)


def udp_table(label, part):
    udp = ((part.end or {}).get("testio") or {}).get("udp") or {}
    keys = ("sent_datagrams", "received_datagrams", "lost_datagrams", "receiver_socket_drops", "lost_elsewhere",
            "out_of_order", "duplicates")
    jitter = ((part.end or {}).get("sum") or {}).get("jitter_ms")
    return Table(f"{label}: UDP ({part.direction})", [*keys, "jitter ms"], [[number(udp.get(k)) for k in keys] + [number(jitter)]])


def latency_table(label, test):
    rows = []
    for phase in (test.get("end") or {}).get("latency") or []:
        for kind in ("udp", "tcp", "connect", "load"):
            figures = phase.get(kind)
            if not isinstance(figures, dict):
                continue
            rows.append([phase.get("name"), kind, number(figures.get("count")), number(figures.get("lost")),
                         *(number(figures.get(key)) for key in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "rpm", "added_ms")),
                         gbits(phase.get("goodput_bps"))])
    return Table(f"{label}: latency under load", ["phase", "probe", "count", "lost", "p50 ms", "p90 ms", "p99 ms",
                                                  "max ms", "RPM", "added ms", "goodput Gbit/s"], rows)


def rpm_table(label, found):
    rows = [[entry.get("direction"), number(entry.get("rpm")), entry.get("confidence", ""),
             number(entry.get("rpm_spread_percent")), gbits(entry.get("goodput_bps")), number(entry.get("load_connections")),
             *(number(entry.get(key)) for key, _ in rpm.STEPS), number(entry.get("failed_probes"))]
            for _, entry in found]
    return Table(f"{label}: responsiveness (--rpm)", ["direction", "RPM", "confidence", "RPM spread %", "load Gbit/s",
                                                     "load connections", "TCP ms", "TLS ms", "HTTP own ms",
                                                     "HTTP on load ms", "failed probes"], rows)


def distribution_table(label, parts):
    rows = []
    for part in parts:
        for name, unit, summary in distributions.distributions(part):
            rows.append([name, unit, *(number(summary.get(key)) for key in ("min", "p50", "p90", "p99", "p99_9", "max", "mean"))])
    return Table(f"{label}: distributions", ["what", "unit", "min", "p50", "p90", "p99", "p99.9", "max", "mean"], rows)


def mesh_tables(report):
    ranks, rates, failed = mesh.matrix(report.mesh)
    matrix_rows = [[str(s)] + ["FAIL" if (s, r) in failed else "-" if rates[s][r] is None else f"{rates[s][r]:.2f}"
                                for r in range(ranks)] for s in range(ranks)]
    hosts = [[number(h.get("rank")), h.get("address", ""), gbits(h.get("out_bits_per_second")),
              gbits(h.get("in_bits_per_second")), number(h.get("failed_pairs")), h.get("reason", "")]
             for h in sorted(report.mesh.get("hosts") or [], key=lambda h: h.get("rank", 0))]
    failures = [[f"{p.get('from')} → {p.get('to')}", p.get("from_address", ""), p.get("to_address", ""), p.get("reason", "")]
                for p in report.mesh.get("pairs") or [] if not p.get("ok")]
    tables = [Table(f"{report.label}: Gbit/s from sender (row) to receiver (column)",
                    ["sender"] + [str(r) for r in range(ranks)], matrix_rows),
              Table(f"{report.label}: hosts", ["rank", "address", "out Gbit/s", "in Gbit/s", "failed pairs", "reason"], hosts)]
    if failures:
        tables.append(Table(f"{report.label}: failed pairs", ["pair", "from", "to", "reason"], failures))
    return tables


def tables_for(reports, tests):
    """Every table of `reports` (whose tests are `tests`, parts.tests_of), in order: the meshes',
    then each test's."""
    found = []
    for report in reports:
        if report.mesh is not None:
            found.extend(mesh_tables(report))
    for label, test, parts in tests:
        found.append(start_line(label, test))
        found.append(totals(label, parts))
        found.extend(connections(label, part) for part in parts if (part.end or {}).get("streams"))
        found.extend(udp_table(label, part) for part in parts if ((part.end or {}).get("testio") or {}).get("udp"))
        if (test.get("end") or {}).get("latency"):
            found.append(latency_table(label, test))
        responsiveness = rpm.directions_of(parts)
        if responsiveness:
            found.append(rpm_table(label, responsiveness))
        if any(distributions.distributions(part) for part in parts):
            found.append(distribution_table(label, parts))
    return found

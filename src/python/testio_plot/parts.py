"""A test document's parts, as the plots need them: each workload section (the top level, a
--bidir test's reverse direction, a composed test's `with` entries) with its workload, direction
and the intervals the receiving side counted. Plain reading; no drawing."""


class Part:
    """One workload of one test in one direction. `intervals`: the receiving side's when the
    document has them (goodput as counted), else the sending side's; `own_intervals` the reporting
    side's; `end` the section's end."""

    def __init__(self, label, workload, direction, start, intervals, end, own=None):
        self.workload = workload
        self.direction = direction
        self.start = start
        self.end = end
        self.label = label
        own = own if own is not None else intervals
        # A workload that runs for part of the window (begins_s, ends_s) reports zeros outside it:
        # only its span is drawn, and its legend says which span.
        begins, ends = self.spec.get("begins_s") or 0, self.spec.get("ends_s") or 0
        if ends > begins:
            self.label = f"{label} {begins:g}–{ends:g} s"
            intervals, own = within(intervals, begins, ends), within(own, begins, ends)
        self.intervals = intervals
        self.own_intervals = own  # the reporting side's (where a workload's own figures are)

    @property
    def spec(self):
        return (self.start.get("testio") or {}).get("spec") or {}

    @property
    def sums(self):
        """Each interval's `sum` (the spans the plots step through)."""
        return [interval["sum"] for interval in self.intervals if "sum" in interval]


def within(intervals, begins, ends):
    """The intervals whose middle falls in [begins, ends)."""
    return [i for i in intervals if "sum" in i and begins <= (i["sum"]["start"] + i["sum"]["end"]) / 2 < ends]


def receiving_intervals(section, streamed=None):
    """The intervals the receiving side counted, else those the document has."""
    own = streamed if streamed is not None else section.get("intervals") or []
    remote = ((section.get("end") or {}).get("testio") or {}).get("remote_intervals") or []
    for candidate in (own, remote):
        if candidate and candidate[0].get("streams") and candidate[0]["streams"][0].get("sender") is False:
            return candidate
    return own or remote


def _direction(start, spec):
    if spec.get("direction"):
        return spec["direction"]
    test_start = start.get("test_start") or {}
    return "reverse" if test_start.get("reverse") else "forward"


def parts_of(test, label):
    """Every part of `test` (a document), labelled `label`."""
    spec = ((test.get("start") or {}).get("testio") or {}).get("spec") or {}
    parts = _section_parts(label, test, None)
    # A --json-stream's with_interval events, by the workload's place in the test: the first
    # workload is 1, so `with`'s entry k (from 0) is workload k + 2.
    streamed = test.get("_with_intervals") or {}
    sections = ((test.get("end") or {}).get("testio") or {}).get("with")
    if isinstance(sections, list) and sections:
        for k, section in enumerate(sections):
            parts.extend(_section_parts(label, section, streamed.get(k + 2)))
    else:  # a --json-stream cut short: the other workloads have their intervals only
        listed = spec.get("with") or []
        for k in sorted(key for key in streamed if isinstance(key, int)):
            spec_k = listed[k - 2] if 0 <= k - 2 < len(listed) else {}
            section_start = {"testio": {"workload": spec_k.get("workload", "stream"), "spec": spec_k}}
            parts.extend(_section_parts(label, {"start": section_start, "intervals": streamed[k], "end": {}}, None))
    return parts


def _section_parts(label, section, streamed):
    """A section (a whole document, or one of `with`) as its part, and its --bidir reverse's;
    `streamed` the section's intervals from a --json-stream, if any."""
    start = section.get("start") or {}
    spec = (start.get("testio") or {}).get("spec") or {}
    workload = (start.get("testio") or {}).get("workload") or spec.get("workload", "stream")
    direction = _direction(start, spec)
    own = streamed if streamed is not None else section.get("intervals") or []
    parts = [Part(label, workload, "forward" if direction == "bidir" else direction, start,
                  receiving_intervals(section, streamed), section.get("end") or {}, own)]
    reverse = ((section.get("end") or {}).get("testio") or {}).get("bidir_reverse")
    if isinstance(reverse, dict):
        parts.append(Part(label, workload, "reverse", reverse.get("start") or start, receiving_intervals(reverse),
                          reverse.get("end") or {}))
    return parts


def test_label(report, index):
    """A test's name in legends: the file's label, numbered when the file holds several tests."""
    return report.label if len(report.tests) == 1 else f"{report.label} #{index + 1}"


def tests_of(reports):
    """[(label, test, its parts)] of every test of every report, in order: what the plots and the
    tables are made from."""
    return [(test_label(report, index), test, parts_of(test, test_label(report, index)))
            for report in reports for index, test in enumerate(report.tests)]

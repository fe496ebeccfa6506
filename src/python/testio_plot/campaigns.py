"""Campaign directories (`testio campaign -o DIR`: campaign.json and runs.jsonl) as the plots and
tables need them: each cell's settings and measured runs, their statistics per figure, and two
campaigns' cells matched by settings with the test of their difference. Reading and arithmetic
only: the directory reader and the statistics are testio_campaign's, so `testio plot`, `testio
campaign` and `testio compare` give the same numbers."""
import os

from testio_campaign import campaign_dir, compare, environment, statistics

from .load import BadInput

LEVEL = 0.05  # a difference is marked when Mann-Whitney's two-sided p is below this


class Figure:
    """One figure a run may carry (runs.jsonl's `figures`): its key, its name within its group, the
    unit it is shown in, its name alone (`title`) and whether more of it is better (goodput) or
    worse (CPU, calls, latency)."""

    def __init__(self, key, name, unit, title, higher_is_better=False):
        self.key, self.name, self.unit, self.title = key, name, unit, title
        self.higher_is_better = higher_is_better


class Group:
    """Figures drawn together, one axes each: both sides' CPU, or a latency's percentiles."""

    def __init__(self, key, title, figures):
        self.key, self.title, self.figures = key, title, figures


GOODPUT = Figure("goodput_bps", "goodput", "bit/s", "goodput", higher_is_better=True)
GROUPS = (
    Group("goodput", "goodput", [GOODPUT]),
    Group("cpu", "CPU-seconds per GB", [Figure("sender_cpu_s_per_gb", "sender", "CPU-s/GB", "sender CPU-s/GB"),
                                         Figure("receiver_cpu_s_per_gb", "receiver", "CPU-s/GB", "receiver CPU-s/GB")]),
    Group("calls", "system calls per GB", [Figure("sender_calls_per_gb", "sender", "calls/GB", "sender calls/GB"),
                                           Figure("receiver_calls_per_gb", "receiver", "calls/GB", "receiver calls/GB")]),
    Group("latency", "latency percentiles", [Figure(f"latency_{p}_us", p, "µs", f"latency {p}") for p in ("p50", "p90", "p99")]),
)


class Cell:
    """One cell of the grid: its settings, its measured runs (ok, not warm-ups, in round order) and
    how many of its runs failed."""

    def __init__(self, cell_id, settings):
        self.id, self.settings = cell_id, dict(settings or {})
        self.runs, self.failed = [], 0
        self._described = {}

    def label(self, separator="\n"):
        """The cell's name on plots and in tables: its settings, axis by axis."""
        return separator.join(f"{name}={value}" for name, value in self.settings.items()) or "all runs"

    def runs_with(self, figure):
        return [run for run in self.runs if isinstance((run.get("figures") or {}).get(figure.key), (int, float))]

    def values(self, figure):
        return [float(run["figures"][figure.key]) for run in self.runs_with(figure)]

    def describe(self, figure):
        """statistics.describe of the figure's values (n 0 and None figures when it has none)."""
        if figure.key not in self._described:
            self._described[figure.key] = statistics.describe(self.values(figure))
        return self._described[figure.key]

    def outlier_rounds(self, figure):
        runs = self.runs_with(figure)
        return [runs[index].get("round") for index in self.describe(figure).get("outliers") or []]


class Campaign:
    def __init__(self, path, label, definition, cells, notes):
        self.path, self.label, self.definition, self.cells, self.notes = path, label, definition, cells, notes
        self.warmups = 0

    def has(self, figure):
        return any(cell.values(figure) for cell in self.cells)

    def groups(self):
        """The GROUPS some run of this campaign has a figure of, each with only those figures."""
        return [Group(g.key, g.title, [f for f in g.figures if self.has(f)]) for g in GROUPS
                if any(self.has(f) for f in g.figures)]


def read(path, label=None):
    """The campaign in directory `path`; BadInput with one sentence when it is not one."""
    name = label or os.path.basename(os.path.normpath(path))
    try:
        found = campaign_dir.read_campaign(path)
    except campaign_dir.CampaignError as error:
        raise BadInput(str(error)) from None
    definition = found["definition"]
    notes = []
    if found.get("cut_short"):
        notes.append(f"{path}: the last line of runs.jsonl was cut short (a run killed while it was written): left out")
    campaign = Campaign(path, name, definition, _cells(found), notes)
    campaign.warmups = sum(1 for run in found.get("runs") or [] if run.get("warmup"))
    return campaign


def _cells(found):
    """The grid's cells in campaign.json's order, each with its measured runs and failed count
    (campaign_dir.cells: the same as testio compare counts)."""
    cells = []
    for entry in campaign_dir.cells(found):
        cell = Cell(entry["id"], entry["settings"])
        cell.runs, cell.failed = entry["runs"], entry["failed"]
        cells.append(cell)
    return cells


def settings_key(cell):
    return compare.settings_key(cell.settings)


class Difference:
    """One figure of one matched cell in campaigns A and B: each side's statistics, the ratio of
    medians B/A with its bootstrap interval, Mann-Whitney's p and the verdict at LEVEL."""

    def __init__(self, figure, a_values, b_values):
        self.figure = figure
        self.a, self.b = statistics.describe(a_values), statistics.describe(b_values)
        self.ratio = self.ratio_ci95 = self.p = None
        self._verdict = "-"
        if a_values and b_values:
            test = statistics.mann_whitney(a_values, b_values)
            self.p = test["p"]
            if self.a["median"]:
                ratio = statistics.ratio_of_medians(a_values, b_values)
                self.ratio, self.ratio_ci95 = ratio.get("ratio"), ratio.get("ci95")
            self._verdict = compare.verdict_of(test, a_values, b_values, LEVEL, figure.higher_is_better, self.ratio)

    @property
    def significant(self):
        """Marked on the plots: a difference testio compare would call faster or slower (p below
        LEVEL and a change beyond its noise threshold)."""
        return self._verdict in ("faster", "slower")

    def verdict(self):
        """As testio compare says it: faster or slower (B costs less or more, for CPU, calls and
        latency), or no difference."""
        return self._verdict


class Comparison:
    """Campaigns A and B with their cells matched by settings (A's order); the cells of one
    alone are listed apart."""

    def __init__(self, a, b):
        self.a, self.b = a, b
        b_cells = {settings_key(cell): cell for cell in b.cells}
        self.pairs = [(cell, b_cells[settings_key(cell)]) for cell in a.cells if settings_key(cell) in b_cells]
        matched = {settings_key(cell) for cell, _ in self.pairs}
        self.only_a = [cell for cell in a.cells if settings_key(cell) not in matched]
        self.only_b = [cell for cell in b.cells if settings_key(cell) not in matched]
        self._differences = {}

    def difference(self, index, figure):
        if (index, figure.key) not in self._differences:
            cell_a, cell_b = self.pairs[index]
            self._differences[(index, figure.key)] = Difference(figure, cell_a.values(figure), cell_b.values(figure))
        return self._differences[(index, figure.key)]

    def groups(self):
        """The GROUPS whose figures both campaigns have, each with only those figures."""
        def both(figure):
            return any(a.values(figure) and b.values(figure) for a, b in self.pairs)
        return [Group(g.key, g.title, [f for f in g.figures if both(f)]) for g in GROUPS if any(both(f) for f in g.figures)]

    def environment_differences(self):
        """[(key, A's value, B's value)] of the environments where they differ, as testio compare
        lists them."""
        found = environment.differences(environment.comparable(self.a.definition.get("environment") or {}),
                                        environment.comparable(self.b.definition.get("environment") or {}))
        return [(row["key"], shown(row["a"]), shown(row["b"])) for row in found]


def shown(value):
    """An environment value as a table cell: lists joined by commas, nothing as "-"."""
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def flatten(facts):
    """A nested environment as {"routes.127.0.0.1.mtu": "65536", ...}, each value as a table shows it."""
    return {key: shown(value) for key, value in environment.flatten(facts).items()}


BIT_RATE_UNITS = ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"))


def unit_of(figure, cells):
    """(divisor, unit) that shows the figure's medians in these cells as readable numbers: bit
    rates in Gbit/s, Mbit/s or kbit/s by the largest; other figures as they are."""
    if figure.unit != "bit/s":
        return 1.0, figure.unit
    largest = max((cell.describe(figure)["median"] or 0 for cell in cells), default=0)
    return next(((divisor, unit) for divisor, unit in BIT_RATE_UNITS if largest >= divisor), (1.0, "bit/s"))

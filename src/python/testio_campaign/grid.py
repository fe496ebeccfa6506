"""A campaign's grid: named axes, each one of testio's options with its values, and the cells of
their cartesian product. Every axis value and every cell is checked with `testio ... --dry-run`
before anything runs, so that bad input costs one sentence and no measurement."""
import concurrent.futures
import itertools
import subprocess

# Axis names that are not long options: the positional connection count and the target.
ALIASES = {"connections": "-P", "target": "-c"}
# Options the campaign itself sets or that would change what a run prints: an axis of them
# would break the reading of the runs' reports.
RESERVED = {"json", "json-stream", "json-stream-full-output", "server", "one-off", "daemon", "logfile",
            "dry-run", "help", "version", "debug", "verbose", "pidfile", "mesh"}
# At most this many `--dry-run` checks at once: they are short, and the host may be shared.
CHECKS_AT_ONCE = 4


class GridError(Exception):
    """Input the grid refuses; the text is one sentence naming the axis."""


class Axis:
    def __init__(self, name, values, option, takes_value):
        self.name, self.values, self.option, self.takes_value = name, values, option, takes_value

    def args(self, value):
        """The testio words that set this axis to `value`."""
        if not self.takes_value:
            if value == "on":
                return [self.option]
            if value == "off":
                return []
            return [f"{self.option}={value}"]  # an option with an optional value: --iface-stats=eth0
        if self.option == "-c":
            return target_args(value)
        if self.option.startswith("--") and value.startswith("-"):
            return [f"{self.option}={value}"]  # so that a negative value is not read as an option
        return [self.option, value]

    def record(self):
        return {"name": self.name, "option": self.option, "values": list(self.values)}


def target_args(value):
    """A target: HOST, HOST:PORT or [IPV6]:PORT (a peer on its own port: -c HOST -p PORT, after
    any common -p, so it wins), or a URL for HTTP downloads."""
    if "://" not in value:
        host, colon, port = value.rpartition(":")
        if colon and port.isdigit() and (host.startswith("[") and host.endswith("]") or ":" not in host):
            return ["-c", host.strip("[]"), "-p", port]
    return ["-c", value]


class Cell:
    def __init__(self, cell_id, settings, args):
        self.id, self.settings, self.args = cell_id, settings, args

    def record(self):
        return {"id": self.id, "settings": dict(self.settings), "args": list(self.args)}

    @staticmethod
    def from_record(record):
        return Cell(record["id"], dict(record["settings"]), list(record["args"]))


def parse_vary(text):
    """`--vary NAME=V1,V2,...` -> (NAME, [V1, V2, ...])."""
    name, equals, values = text.partition("=")
    name = name.strip().lstrip("-")
    if not equals or not name:
        raise GridError(f"--vary {text!r}: write it as NAME=VALUE1,VALUE2")
    return name, [value.strip() for value in values.split(",") if value.strip()]


def dry_run(binary, args):
    """(True, "") when testio accepts `args`, else (False, its one sentence without "testio: ")."""
    done = subprocess.run([binary, *args, "--dry-run"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    if done.returncode == 0:
        return True, ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    reason = lines[-1] if lines else f"exit {done.returncode}"
    return False, reason.removeprefix("testio: ").removesuffix(" (see testio --help)")


def option_takes_value(binary, name):
    """Whether testio's long option --NAME takes a value (None when there is no such option).
    Asked of testio's own parser, so that no list here drifts from its option table."""
    done = subprocess.run([binary, "--dry-run", f"--{name}"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    if "does not exist" in done.stderr:
        return None
    return "is missing an argument" in done.stderr


def make_axis(binary, name, values, base_args):
    if name in RESERVED:
        raise GridError(f"the axis {name!r} cannot be varied: the campaign sets --{name} itself or it changes "
                        "what a run prints")
    if not values:
        raise GridError(f"the axis {name!r} has no values, so the grid is empty")
    repeated = sorted({value for value in values if values.count(value) > 1})
    if repeated:
        raise GridError(f"the axis {name!r} lists {repeated[0]!r} more than once")
    if name in ALIASES:
        option, takes_value = ALIASES[name], True
    else:
        takes_value = option_takes_value(binary, name)
        if takes_value is None:
            raise GridError(f"unknown axis {name!r}: testio has no option --{name}")
        option = f"--{name}"  # a flag takes on/off; any other value of one is judged by the dry run
    if option in base_args or (option == "-P" and "--parallel" in base_args) or \
            (option == "-c" and "--client" in base_args):
        raise GridError(f"the axis {name!r} sets {option}, which the common options set too: leave it out of them")
    return Axis(name, list(values), option, takes_value)


def make_axes(binary, varied, base_args):
    """[(name, [values])] -> [Axis], refusing a repeated or unknown axis and an empty one."""
    names = [name for name, _ in varied]
    for name in names:
        if names.count(name) > 1:
            raise GridError(f"the axis {name!r} is given more than once")
    return [make_axis(binary, name, values, base_args) for name, values in varied]


def make_cells(axes, base_args):
    cells = []
    for number, combination in enumerate(itertools.product(*[axis.values for axis in axes])):
        settings = {axis.name: value for axis, value in zip(axes, combination)}
        args = list(base_args)
        for axis, value in zip(axes, combination):
            args += axis.args(value)
        cells.append(Cell(f"c{number}", settings, args))
    return cells


def check(binary, axes, base_args, cells):
    """Every axis value beside the common options, then every cell, through testio's --dry-run;
    raises GridError with the first refusal."""
    # A test needs a target: where it is an axis, each other value is checked against its first.
    target = next((axis.args(axis.values[0]) for axis in axes if axis.option == "-c"), [])
    accepted, reason = dry_run(binary, [*base_args, *target])
    if not accepted:
        raise GridError(f"the common options are refused: {reason}")
    with concurrent.futures.ThreadPoolExecutor(CHECKS_AT_ONCE) as pool:
        single = [(axis, value, pool.submit(dry_run, binary, [*base_args, *(target if axis.option != "-c" else []),
                                                              *axis.args(value)]))
                  for axis in axes for value in axis.values]
        for axis, value, future in single:
            accepted, reason = future.result()
            if not accepted and not axis.takes_value and value not in ("on", "off"):
                raise GridError(f"the axis {axis.name!r} value {value!r} is refused: {axis.option} is a flag, "
                                f"varied as on or off ({reason})")
            if not accepted:
                raise GridError(f"the axis {axis.name!r} value {value!r} is refused: {reason}")
        combined = [(cell, pool.submit(dry_run, binary, cell.args)) for cell in cells]
        for cell, future in combined:
            accepted, reason = future.result()
            if not accepted:
                where = ", ".join(f"{name}={value}" for name, value in cell.settings.items())
                raise GridError(f"the cell {where} is refused: {reason}" if where else
                                f"the common options are refused: {reason}")


def build(binary, varied, base_args):
    """The checked grid: (axes, cells)."""
    axes = make_axes(binary, varied, base_args)
    cells = make_cells(axes, base_args)
    check(binary, axes, base_args, cells)
    return axes, cells

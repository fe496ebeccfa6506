"""`testio campaign`: run a grid of testio tests in rounds, keep every run's report in
DIR/runs.jsonl as it ends, and summarise each cell (docs/campaigns.md).

Exit 0 when every run of the grid ran and every cell has a measured run; 1 when the campaign was
stopped (SIGINT, SIGTERM) or a cell has no measured run (all its runs failed); 2 for bad input,
refused before anything runs, in one sentence."""
import ctypes
import json
import os
import random
import signal
import subprocess
import sys
import time

from . import campaign_dir, campaign_file, environment, grid, summary
from .figures import figures, peer_version

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
DEFAULTS = {"repeat": 5, "warmup": 0, "shuffle": False, "pause": 1.0, "name": "", "seed": None}
USAGE = """usage: testio campaign [FILE.json] [--vary NAME=V1,V2,...]... [--repeat N] [--warmup N]
                       [--shuffle] [--seed N] [--pause S] [--name NAME] -o DIR
                       [--json | --json-stream | --dry-run] [TESTIO OPTIONS...]
       testio campaign --resume DIR [--json | --json-stream]

Runs every cell of the grid (each combination of the --vary axes, on top of the common testio
options) once per round: --warmup rounds first (kept, not counted), then --repeat rounds. NAME is
any long option of testio's without its dashes, or connections (-P) or target (-c); a flag takes
on/off. FILE.json, first, is a campaign file (docs/campaigns.md); the command line adds to it.
--dry-run checks the grid and lists the cells without running them.
  testio campaign -c HOST --vary connections=1,8,32 --vary recv-mode=recv,recv_into \\
                  --repeat 5 --warmup 1 -t 10 -o results/"""
VALUED = {"--vary": "vary", "--repeat": "repeat", "--warmup": "warmup", "--pause": "pause", "--seed": "seed",
          "--name": "name", "-o": "output", "--output": "output", "--resume": "resume"}
FLAGS = {"--shuffle": "shuffle", "--json": "json", "-J": "json", "--json-stream": "json_stream",
         "--dry-run": "dry_run", "-h": "help", "--help": "help"}
PR_SET_PDEATHSIG = 1


class UsageError(Exception):
    pass


def fail(message, code):
    print(f"testio campaign: {message}", file=sys.stderr, flush=True)
    return code


def split_words(argv):
    """Campaign options into a dict (--vary a list), the rest kept in order as testio's options."""
    given, base = {"vary": []}, []
    words = list(argv)
    if words and words[0].endswith(".json") and not words[0].startswith("-"):
        given["file"] = words.pop(0)
    index = 0
    while index < len(words):
        word = words[index]
        name, equals, inline = word.partition("=")
        if word in FLAGS:
            given[FLAGS[word]] = True
        elif name in VALUED:
            if not equals and index + 1 == len(words):
                raise UsageError(f"{word} needs a value")
            value = inline if equals else words[index + 1]
            index += 0 if equals else 1
            if name == "--vary":
                given["vary"].append(value)
            else:
                given[VALUED[name]] = value
        else:
            base.append(word)
        index += 1
    given["base_args"] = base
    return given


def number(given, key, kind, least):
    try:
        value = kind(given[key])
    except ValueError:
        raise UsageError(f"--{key} {given[key]!r} is not a {'whole ' if kind is int else ''}number") from None
    if value < least:
        raise UsageError(f"--{key} must be at least {least}")
    return value


def plan_from(given):
    """The campaign the command line (and its file) asks for, before the grid is checked."""
    plan = dict(DEFAULTS, base_args=[], varied=[])
    if "file" in given:
        from_file = campaign_file.read(given["file"])
        plan.update({key: value for key, value in from_file.items() if value is not None})
    plan["base_args"] = plan["base_args"] + given["base_args"]
    plan["varied"] = plan["varied"] + [grid.parse_vary(text) for text in given["vary"]]
    for key, kind, least in (("repeat", int, 1), ("warmup", int, 0), ("pause", float, 0), ("seed", int, 0)):
        if key in given:
            plan[key] = number(given, key, kind, least)
    plan["shuffle"] = plan["shuffle"] or given.get("shuffle", False)
    plan["name"] = given.get("name", plan["name"]) or os.path.basename(os.path.normpath(given["output"]))
    if plan["seed"] is None:
        plan["seed"] = random.SystemRandom().randrange(2 ** 31)
    return plan


def new_campaign(given, binary):
    """Checks the grid, records the environment and writes campaign.json; its definition."""
    if not given.get("output"):
        raise UsageError("say where the campaign goes with -o DIR")
    directory = given["output"]
    if campaign_dir.is_campaign(directory):
        raise UsageError(f"{directory} holds a campaign already: continue it with --resume {directory}, "
                         "or choose another -o")
    plan = plan_from(given)
    axes, cells = grid.build(binary, plan["varied"], plan["base_args"])
    env = environment.Environment(binary, environment.targets_of(cells))
    definition = {"format": campaign_dir.FORMAT, "name": plan["name"], "created": environment.utc_now(),
                  "base_args": plan["base_args"],
                  "axes": [axis.record() for axis in axes], "repeat": plan["repeat"], "warmup": plan["warmup"],
                  "shuffle": plan["shuffle"], "seed": plan["seed"], "pause_s": plan["pause"],
                  "cells": [cell.record() for cell in cells], "environment": env.record()}
    os.makedirs(directory, exist_ok=True)
    summary.write_atomically(os.path.join(directory, campaign_dir.DEFINITION), json.dumps(definition, indent=1) + "\n")
    return definition, env


def resumed_campaign(given, binary):
    """The definition and runs of the campaign in --resume DIR; a last line cut short by a kill
    is cut off the file (and said), so that appends go on after the last whole run."""
    leftover = [f"--{key}" for key in ("vary", "repeat", "warmup", "pause", "seed", "name", "output", "shuffle")
                if given.get(key)] + (["the campaign file"] if "file" in given else []) + given["base_args"]
    if leftover:
        raise UsageError(f"--resume continues the campaign as its campaign.json says: leave out {leftover[0]}")
    directory = given["resume"]
    try:
        found = campaign_dir.read_campaign(directory)
    except campaign_dir.CampaignError as error:
        raise UsageError(str(error)) from None
    if found["cut_short"]:
        path = os.path.join(directory, campaign_dir.RUNS)
        with open(path, "rb+") as runs:
            content = runs.read()
            runs.truncate(content.rfind(b"\n") + 1)
            os.fsync(runs.fileno())
        print("testio campaign: resume: the last line of runs.jsonl was cut short (the campaign was killed while "
              "writing it): it is dropped and that run runs again", file=sys.stderr, flush=True)
    definition = found["definition"]
    cells = [grid.Cell.from_record(record) for record in definition["cells"]]
    env = environment.Environment(binary, environment.targets_of(cells))
    env.record()  # times the route's part, to know whether to read it before each run
    return definition, env, found["runs"]


def schedule(definition):
    """Every (round, cell) in order: rounds first, the cells of a round in order or shuffled by a
    seed of the campaign's and the round's number (the same order again on a resume)."""
    cells = [grid.Cell.from_record(record) for record in definition["cells"]]
    order = []
    for round_number in range(definition["warmup"] + definition["repeat"]):
        in_round = list(cells)
        if definition["shuffle"]:
            random.Random(f"{definition['seed']}/{round_number}").shuffle(in_round)
        order += [(round_number, cell) for cell in in_round]
    return order


def die_with_parent():
    """In the child: SIGTERM when the campaign dies, even by SIGKILL, so that no run goes on
    against the server behind a campaign that is gone (or beside its resume)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Stop:
    """SIGINT and SIGTERM: remembered, and passed on to the run in progress."""

    def __init__(self):
        self.signal, self.child = None, None

    def __call__(self, signum, frame):
        self.signal = signum
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signum)

    def install(self):
        signal.signal(signal.SIGINT, self)
        signal.signal(signal.SIGTERM, self)


def run_testio(binary, cell, stop):
    """One run: (exit code, report or None, stderr, started, wall seconds)."""
    started, clock = environment.utc_now(), time.monotonic()
    stop.child = subprocess.Popen([binary, *cell.args, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, preexec_fn=die_with_parent, start_new_session=True)
    out, err = stop.child.communicate()
    wall = time.monotonic() - clock
    code, stop.child = stop.child.returncode, None
    try:
        report = json.loads(out)
    except ValueError:
        report = None
    return code, report if isinstance(report, dict) else None, err.decode(errors="replace"), started, wall


def failure_reason(code, report, stderr):
    if code == 0 and report is not None and not report.get("error"):
        return ""
    if report is not None and isinstance(report.get("error"), str) and report["error"]:
        return report["error"]
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if lines:
        return lines[-1].removeprefix("testio: ").removeprefix("error: ")
    return f"exit {code}" if code else "testio printed no report"


class Progress:
    """One line on stderr: runs done and to go, and the time left at the pace so far. On a
    terminal it is rewritten in place; elsewhere (a log, a pipe) each update is a line."""

    def __init__(self, total, done):
        self.total, self.done, self.failed = total, done, 0
        self.started, self.done_here = time.monotonic(), 0
        self.in_place = sys.stderr.isatty()

    def left(self):
        if not self.done_here:
            return "time left unknown until a run ends"
        seconds = (time.monotonic() - self.started) / self.done_here * (self.total - self.done)
        minutes, seconds = divmod(int(seconds + 0.5), 60)
        hours, minutes = divmod(minutes, 60)
        return "about " + (f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s") + " left"

    def show(self, text):
        line = (f"campaign: {self.done}/{self.total} runs done, {self.total - self.done} to go"
                + (f" ({self.failed} failed)" if self.failed else "") + f", {self.left()}; {text}")
        if self.in_place:
            print("\r" + line + "\x1b[K", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def ran(self, ok):
        self.done, self.done_here, self.failed = self.done + 1, self.done_here + 1, self.failed + (not ok)

    def close(self):
        if self.in_place:
            print(file=sys.stderr, flush=True)


def change_warning(key, cell_id, round_number):
    return f"the environment's {key} changed during the campaign (before {cell_id} round {round_number})"


def settings_text(cell):
    return ", ".join(f"{name}={value}" for name, value in cell.settings.items()) or "the common options"


class Campaign:
    def __init__(self, directory, definition, env, runs, binary, stream):
        self.directory, self.definition, self.env, self.runs = directory, definition, env, runs
        self.binary, self.stream = binary, stream
        self.stop = Stop()
        self.warned = set()  # environment keys already warned about on stderr
        self.interrupted = None  # (cell, round) of a run a signal cut short

    def check_environment(self, cell, round_number):
        changed = environment.changed_keys(self.definition["environment"], self.env.current())
        for key in changed:
            if key not in self.warned:
                self.warned.add(key)
                print(f"\ntestio campaign: warning: {change_warning(key, cell.id, round_number)}", file=sys.stderr,
                      flush=True)
        return changed

    def environment_warnings(self):
        """One per environment key that changed, at the first run that saw it: read from the
        runs, so a --resume keeps the warnings of the runs before it."""
        first = {}
        for run in self.runs:
            for key in run.get("environment_changed") or []:
                first.setdefault(key, (run.get("cell"), run.get("round")))
        return [change_warning(key, cell, round_number) for key, (cell, round_number) in first.items()]

    def record(self, cell, round_number, outcome, changed):
        code, report, stderr, started, wall = outcome
        reason = failure_reason(code, report, stderr)
        run = {"cell": cell.id, "round": round_number, "warmup": round_number < self.definition["warmup"],
               "settings": cell.settings, "args": cell.args, "started": started, "wall_s": round(wall, 4),
               "exit": code, "ok": not reason, "reason": reason, "figures": figures(report) if not reason else {},
               "environment_changed": changed, "report": report}
        with open(os.path.join(self.directory, campaign_dir.RUNS), "a", encoding="utf-8") as lines:
            lines.write(json.dumps(run) + "\n")
            lines.flush()
            os.fsync(lines.fileno())
        self.runs.append(run)
        return run

    def announce(self, run, progress):
        if self.stream:
            print(json.dumps({"event": "run", "cell": run["cell"], "round": run["round"], "warmup": run["warmup"],
                              "settings": run["settings"], "ok": run["ok"], "reason": run["reason"],
                              "wall_s": run["wall_s"], "figures": run["figures"],
                              "runs_done": progress.done, "runs_total": progress.total}), flush=True)
        goodput = run["figures"].get("goodput_bps")
        outcome = summary.rate_text(goodput) if run["ok"] else f"failed: {run['reason']}"
        progress.show(f"{run['cell']} round {run['round']}: {outcome}")

    def pause(self, seconds):
        """Sleeps between runs, cut short by a signal."""
        deadline = time.monotonic() + seconds
        while self.stop.signal is None and time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    def execute(self):
        """Runs what the schedule still lacks; returns when done or stopped."""
        done = {(run.get("cell"), run.get("round")) for run in self.runs}
        order = schedule(self.definition)
        todo = [(round_number, cell) for round_number, cell in order if (cell.id, round_number) not in done]
        progress = Progress(len(order), len(order) - len(todo))
        progress.failed = sum(not run.get("ok") for run in self.runs)
        self.stop.install()
        for position, (round_number, cell) in enumerate(todo):
            if self.stop.signal is not None:
                break
            changed = self.check_environment(cell, round_number)
            if progress.in_place:  # elsewhere one line per run, when it ends
                progress.show(f"running {cell.id} ({settings_text(cell)}) round {round_number}"
                              + (" (warm-up)" if round_number < self.definition["warmup"] else ""))
            outcome = run_testio(self.binary, cell, self.stop)
            complete = outcome[0] == 0 and outcome[1] is not None and not outcome[1].get("error")
            if self.stop.signal is not None and not complete:
                self.interrupted = (cell.id, round_number)
                break
            run = self.record(cell, round_number, outcome, changed)
            progress.ran(run["ok"])
            self.announce(run, progress)
            if position + 1 < len(todo):
                self.pause(self.definition["pause_s"])
        progress.close()
        return len(order)

    def peer_versions(self):
        """{target: version} as the runs' reports say it, those from before a --resume included."""
        versions = {}
        for run in self.runs:
            version = peer_version(run.get("report"))
            if version:
                versions[environment.target_of(run.get("args") or []) or "peer"] = version
        return versions

    def finish(self, total, as_json):
        state = {"directory": self.directory, "runs_total": total, "interrupted": self.stop.signal is not None,
                 "environment_warnings": self.environment_warnings(), "peer_versions": self.peer_versions()}
        document = summary.document(self.definition, self.runs, state)
        summary.write(self.directory, document)
        if self.interrupted:
            name = signal.Signals(self.stop.signal).name
            print(f"testio campaign: {name}: the run of {self.interrupted[0]} round {self.interrupted[1]} was cut "
                  f"short and is not kept; everything measured is in {self.directory}: --resume {self.directory} "
                  "continues", file=sys.stderr, flush=True)
        elif self.stop.signal is not None:
            print(f"testio campaign: {signal.Signals(self.stop.signal).name}: stopped; --resume {self.directory} "
                  "continues", file=sys.stderr, flush=True)
        if self.stream:
            print(json.dumps({"event": "summary", **document}), flush=True)
        elif as_json:
            print(json.dumps(document, indent=1), flush=True)
        else:
            print(summary.text(document), end="", flush=True)
        cells = document["campaign"]["cells"]
        return EXIT_RUNTIME if self.stop.signal is not None or any(cell["n"] == 0 for cell in cells) else EXIT_OK


def check_only(given, binary):
    """--dry-run: the grid checked as for a run, its cells printed, nothing run or written."""
    plan = plan_from(dict(given, output=given.get("output") or "campaign"))
    _, cells = grid.build(binary, plan["varied"], plan["base_args"])
    runs = len(cells) * (plan["warmup"] + plan["repeat"])
    print(f"{len(cells)} cells, {runs} runs ({plan['warmup']} warm-up and {plan['repeat']} measured rounds):")
    for cell in cells:
        print(f"  {cell.id}  {settings_text(cell)}:  testio {' '.join(cell.args)}")
    return EXIT_OK


def main(argv):
    binary = os.environ.get("TESTIO_BINARY") or "testio"
    try:
        given = split_words(argv)
        if given.get("help"):
            print(USAGE)
            return EXIT_OK
        if given.get("json") and given.get("json_stream"):
            raise UsageError("choose --json or --json-stream: both print on stdout")
        if given.get("dry_run"):
            return check_only(given, binary)
        if given.get("resume"):
            definition, env, runs = resumed_campaign(given, binary)
            directory = given["resume"]
        else:
            definition, env = new_campaign(given, binary)
            directory, runs = given["output"], []
    except (UsageError, grid.GridError, campaign_file.CampaignFileError) as error:
        return fail(str(error), EXIT_USAGE)
    except OSError as error:
        return fail(f"{error.filename or 'the campaign directory'}: {error.strerror}", EXIT_RUNTIME)
    except KeyboardInterrupt:
        return fail("interrupted before the first run: nothing was measured", EXIT_RUNTIME)
    campaign = Campaign(directory, definition, env, runs, binary, given.get("json_stream"))
    total = campaign.execute()
    return campaign.finish(total, given.get("json"))

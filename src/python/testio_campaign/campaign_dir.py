"""Reads a campaign directory (testio campaign -o DIR; docs/compare.md, "Inputs"): campaign.json, the
definition written once before the first run, and runs.jsonl, one JSON object per finished run.

The runner appends and fsyncs runs.jsonl as each run ends, so a SIGKILL can leave only the last
line short: that line is ignored (and reported as cut_short), never taken as an error. A broken
line anywhere else means the file was damaged some other way, and is refused."""
import json
import os

FORMAT = "testio-campaign/1"
DEFINITION = "campaign.json"
RUNS = "runs.jsonl"


class CampaignError(ValueError):
    """A directory that is not a readable campaign; the text is one sentence for the user."""


def is_campaign(path):
    return os.path.isfile(os.path.join(path, DEFINITION))


def read_definition(path):
    file = os.path.join(path, DEFINITION)
    try:
        with open(file, encoding="utf-8") as text:
            definition = json.load(text)
    except FileNotFoundError:
        raise CampaignError(f"{path} is not a campaign directory: it has no {DEFINITION}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CampaignError(f"{path} is not a campaign directory: its {DEFINITION} cannot be read ({error})") from None
    if not isinstance(definition, dict) or definition.get("format") != FORMAT:
        raise CampaignError(f"{path} is not a campaign directory: its {DEFINITION} is not a testio campaign's "
                            f"(format {FORMAT})")
    return definition


def read_runs(path):
    """(runs, cut_short): every complete line of runs.jsonl, in file order. A campaign that has
    not finished a run yet has no runs.jsonl: no runs."""
    file = os.path.join(path, RUNS)
    try:
        with open(file, "rb") as lines:
            content = lines.read()
    except FileNotFoundError:
        return [], False
    except OSError as error:
        raise CampaignError(f"cannot read {file}: {error}") from None
    lines = content.split(b"\n")
    # Every complete line ends in "\n": what follows the last one is empty unless a write was cut.
    unfinished = lines.pop()
    runs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            run = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise CampaignError(f"{file} line {number} is not a JSON object: the file is damaged") from None
        if not isinstance(run, dict):
            raise CampaignError(f"{file} line {number} is not a JSON object: the file is damaged")
        runs.append(run)
    return runs, bool(unfinished.strip())


def read_campaign(path):
    """{"definition": campaign.json's object, "runs": runs.jsonl's objects (warm-ups and failed
    runs included), "cut_short": whether a last, unfinished line was left out}. Raises
    CampaignError with a sentence when path is not a campaign or cannot be read."""
    if not os.path.isdir(path):
        raise CampaignError(f"{path} is not a directory" if os.path.exists(path) else f"{path} does not exist")
    definition = read_definition(path)
    runs, cut_short = read_runs(path)
    return {"definition": definition, "runs": runs, "cut_short": cut_short}


def measured(runs):
    """The runs that count in statistics: finished (ok) and not warm-ups."""
    return [run for run in runs if run.get("ok") and not run.get("warmup")]


def cells(campaign):
    """Each cell of the definition with its measured runs in round order and how many of its
    runs (warm-ups aside) failed: [{"id", "settings", "runs", "failed"}]. Runs of a cell the
    definition does not hold are left out."""
    found = {cell["id"]: {"id": cell["id"], "settings": cell.get("settings", {}), "runs": [], "failed": 0}
             for cell in campaign["definition"].get("cells", [])}
    for run in campaign["runs"]:
        cell = found.get(run.get("cell"))
        if cell is None or run.get("warmup"):
            continue
        if run.get("ok"):
            cell["runs"].append(run)
        else:
            cell["failed"] += 1
    for cell in found.values():
        cell["runs"].sort(key=lambda run: run.get("round", 0))
    return list(found.values())

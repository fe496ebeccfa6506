"""Reading a --mesh-results file as a mesh writes it: one JSON line per pair, appended as ranks
report, so a reader may meet a line still being written (left out)."""
import json
import os


def rounds_in(path):
    """{round: [pairs]} of a --mesh-results file."""
    rounds = {}
    if os.path.exists(path):
        with open(path) as lines:
            for line in lines:
                if not line.endswith("\n"):
                    break  # being written
                pair = json.loads(line)
                rounds.setdefault(pair["round"], []).append(pair)
    return rounds


def whole_rounds(path, pairs_per_round=2):
    """How many rounds from the first are whole in a results file (four ranks' rounds hold two pairs)."""
    rounds, whole = rounds_in(path), 0
    while len(rounds.get(whole + 1, [])) == pairs_per_round:
        whole += 1
    return whole

"""A campaign file: the campaign's command line as JSON, shaped like a --config profile.

    {"name": "recv-modes",
     "options": {"client": "127.0.0.1", "time": 10},          # long option names, as a profile's keys
     "vary": {"recv-mode": ["recv", "recv_into"], "connections": [1, 8, 32]},
     "repeat": 5, "warmup": 1, "shuffle": true, "seed": 7, "pause": 1}

"options" are the common options (true for a flag, false or null to leave it out); "args" may
give more as words. "vary" keeps its order: the first axis varies slowest. Numbers become their
text, and true/false in "vary" become on/off."""
import json

from .grid import ALIASES

KEYS = {"name", "description", "options", "args", "vary", "repeat", "warmup", "shuffle", "seed", "pause"}


class CampaignFileError(Exception):
    """A campaign file that cannot be used; the text is one sentence."""


def word(value):
    if value is True:
        return "on"
    if value is False:
        return "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def option_words(options, path):
    args = []
    for name, value in options.items():
        if not isinstance(value, (str, int, float, bool)) and value is not None:
            raise CampaignFileError(f"{path}: option {name!r} must be a string, number or true/false")
        option = ALIASES.get(name, f"--{name}")
        if value is True:
            args.append(option)
        elif value not in (False, None):
            args += [option, word(value)]
    return args


def whole_number(document, key, path, least):
    value = document.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise CampaignFileError(f"{path}: {key!r} must be a whole number of at least {least}")
    return value


def read(path):
    """The campaign file's settings: {"name", "base_args", "varied": [(name, [values])], and
    "repeat", "warmup", "shuffle", "seed", "pause" where the file gives them}."""
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except OSError as error:
        raise CampaignFileError(f"cannot read the campaign file {path}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CampaignFileError(f"the campaign file {path} is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise CampaignFileError(f"the campaign file {path} must hold a JSON object")
    unknown = sorted(set(document) - KEYS)
    if unknown:
        raise CampaignFileError(f"{path}: unknown key {unknown[0]!r} (a campaign file has {', '.join(sorted(KEYS))})")
    options, args, vary = document.get("options", {}), document.get("args", []), document.get("vary", {})
    if not isinstance(options, dict) or not isinstance(vary, dict):
        raise CampaignFileError(f"{path}: 'options' and 'vary' must be JSON objects")
    if not isinstance(args, list) or not all(isinstance(item, str) for item in args):
        raise CampaignFileError(f"{path}: 'args' must be a list of strings")
    varied = []
    for name, values in vary.items():
        if not isinstance(values, list):
            raise CampaignFileError(f"{path}: the axis {name!r} must list its values")
        varied.append((name, [word(value) for value in values]))
    settings = {"name": str(document.get("name", "")), "base_args": option_words(options, path) + args,
                "varied": varied, "repeat": whole_number(document, "repeat", path, 1),
                "warmup": whole_number(document, "warmup", path, 0), "seed": whole_number(document, "seed", path, 0)}
    if "shuffle" in document:
        if not isinstance(document["shuffle"], bool):
            raise CampaignFileError(f"{path}: 'shuffle' must be true or false")
        settings["shuffle"] = document["shuffle"]
    if "pause" in document:
        pause = document["pause"]
        if isinstance(pause, bool) or not isinstance(pause, (int, float)) or pause < 0:
            raise CampaignFileError(f"{path}: 'pause' must be a number of seconds, 0 or more")
        settings["pause"] = float(pause)
    return settings

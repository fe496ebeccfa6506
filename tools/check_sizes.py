#!/usr/bin/env python3
"""The size rule of docs/architecture.md, checked: no function under src/ longer than 80 lines (from
the first line of its signature to its closing brace). A file has no cap: its size follows its idea.

  tools/check_sizes.py            # prints each breach; exit 1 when there is one
  tools/check_sizes.py --tap      # the same as a TAP stream, one case (the 'sizes' test)

Functions are found by their braces, with comments, strings and character literals blanked out
first: a brace opened at namespace or class scope after a statement holding a ')' opens a function
body; lambdas and blocks inside it count towards it.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FUNCTION_LINES = 80
SOURCE = re.compile(r"\.(cpp|hpp)$")
TYPE_HEAD = re.compile(r"^(template\s*<.*>\s*)?(class|struct|union|enum)\b")


def blank_literals(text: str) -> str:
    """Replaces comments, string and character literals by spaces, keeping every newline."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == 'R' and text.startswith('R"', i):
            open_paren = text.find("(", i)
            delimiter = text[i + 2:open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            end = n if end < 0 else end + len(delimiter) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text: str):
    """Yields (first line, last line) of every function body at namespace or class scope."""
    code = blank_literals(text)
    # Preprocessor lines end no statement: blank them so they do not join the next one.
    code = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), code)
    scopes = []  # "namespace", "class", "function", "block"
    statement_start = None  # offset of the first character of the statement being read
    line_of = [0] * (len(code) + 1)
    line = 1
    for k, ch in enumerate(code):
        line_of[k] = line
        if ch == "\n":
            line += 1
    opened = []  # (kind, start offset)
    for k, ch in enumerate(code):
        if ch in ";{}":
            head = code[statement_start:k].strip() if statement_start is not None else ""
            if ch == "{":
                inside_function = any(kind in ("function", "block") for kind in scopes)
                if inside_function:
                    kind = "block"
                elif head.startswith("namespace") or head.startswith('extern "C"') and ")" not in head:
                    kind = "namespace"
                elif TYPE_HEAD.match(head) and "(" not in head.split("{")[0].split(":")[0]:
                    kind = "class"
                elif ")" in head and "=" not in head.split("(")[0]:
                    kind = "function"
                else:
                    kind = "block"
                scopes.append(kind)
                opened.append((kind, statement_start if statement_start is not None else k))
            elif ch == "}" and scopes:
                kind = scopes.pop()
                _, start = opened.pop()
                if kind == "function":
                    yield line_of[start], line_of[k]
            statement_start = None
        elif statement_start is None and not ch.isspace():
            statement_start = k


def breaches():
    found = []
    for folder, _, names in os.walk(os.path.join(ROOT, "src")):
        for name in sorted(names):
            if not SOURCE.search(name):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, ROOT)
            with open(path, encoding="utf-8") as source:
                text = source.read()
            for first, last in functions(text):
                if last - first + 1 > MAX_FUNCTION_LINES:
                    found.append(f"{relative}:{first} a function of {last - first + 1} lines "
                                 f"(at most {MAX_FUNCTION_LINES})")
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tap", action="store_true")
    args = parser.parse_args()
    found = breaches()
    if not args.tap:
        for text in found:
            print(text)
        return 1 if found else 0
    print("1..1")
    print(f"{'not ok' if found else 'ok'} 1 every function under src/ within {MAX_FUNCTION_LINES} lines")
    for text in found:
        print(f"# {text}")
        print(text, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fails the build when a folder under src/ includes a header of a folder it does not declare, or
when a header under src/ includes a heavy library (Asio, json.hpp, spdlog, cxxopts, curl,
liburing, MPI) and is not one of the few small headers that wrap one (HEAVY_WRAPPERS).

src/meson.build gives every folder (one static library each) the folders it may use; the build
runs this script with that same table, so the picture in docs/architecture.md is what compiles:

  check_layers.py SRC_DIR STAMP util= net=util spec=util,net ...

Each `#include "folder/..."` in SRC_DIR/FOLDER/** must name FOLDER itself or one it may use. A
folder may be two deep (protocols/testio): an include belongs to the deepest folder of the table
that its path lies in.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)/[^"/]+"', re.MULTILINE)
HEAVY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]((?:asio|nlohmann/json\.hpp|spdlog|cxxopts|curl/|liburing|mpi\.h)[^>"]*)',
                           re.MULTILINE)
# A heavy header costs every unit that includes it tens of thousands of preprocessed lines
# (docs/architecture.md, "Compile cost"), so only these may include one, each included by the few
# units that drive what it wraps. At most five.
HEAVY_WRAPPERS = {"engines/uring_loop.hpp", "engines/uring_buffers.hpp", "lifecycle/deadline_race.hpp"}
assert len(HEAVY_WRAPPERS) <= 5


def folder_of(included_dir: str, folders) -> str:
    """The table's folder an include's directory lies in: 'protocols/testio' for
    'protocols/testio/channel.hpp', 'workloads' for 'workloads/rr/rr.hpp'."""
    parts = included_dir.split("/")
    for depth in range(len(parts), 0, -1):
        candidate = "/".join(parts[:depth])
        if candidate in folders:
            return candidate
    return ""


def heavy_headers(src: str) -> list:
    """The headers under src/ that include a heavy library without being one of its wrappers."""
    breaches = []
    for root, _, names in os.walk(src):
        for name in sorted(names):
            path = os.path.join(root, name)
            relative = os.path.relpath(path, src)
            if not name.endswith(".hpp") or relative in HEAVY_WRAPPERS:
                continue
            with open(path, encoding="utf-8") as header:
                breaches += [f"{relative} includes {heavy}: a header names such types through net/asio_fwd.hpp or "
                             f"json_fwd.hpp, or holds what needs them through a pointer; only "
                             f"{', '.join(sorted(HEAVY_WRAPPERS))} may include one (tools/check_layers.py)"
                             for heavy in HEAVY_INCLUDE.findall(header.read())]
    return breaches


def main() -> int:
    src, stamp, *table = sys.argv[1:]
    uses = {}
    for entry in table:
        folder, _, allowed = entry.partition("=")
        uses[folder] = {name for name in allowed.split(",") if name} | {folder}
    breaches = heavy_headers(src)
    for folder, allowed in sorted(uses.items()):
        for root, _, names in os.walk(os.path.join(src, folder)):
            for name in sorted(names):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as source:
                    text = source.read()
                relative = os.path.relpath(path, src)
                for included_dir in INCLUDE.findall(text):
                    included = folder_of(included_dir, uses)
                    if included and included not in allowed:
                        breaches.append(f"{relative} includes {included}/: {folder} may use "
                                        f"{', '.join(sorted(allowed - {folder})) or 'nothing else'} "
                                        f"(src/meson.build)")
    for breach in breaches:
        print(breach, file=sys.stderr)
    if breaches:
        return 1
    with open(stamp, "w", encoding="utf-8") as out:
        out.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The build's figures of docs/benchmarks.md, on a clean clone of HEAD (or of REVISION) in a
# scratch directory, with no compiler cache and no earlier build tree:
#   1. meson setup and `ninja testio` from scratch (release, warnings as errors);
#   2. the rebuild after touching one .cpp of session/ (session/client.cpp, the slowest unit);
# each as wall time and CPU seconds (user + system of everything it ran). Then the slowest
# units (tools/build_profile.py). Usage: tools/build_times.sh [REVISION] (default HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
revision=${1:-HEAD}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone -q . "$scratch/clone"
git -C "$scratch/clone" checkout -q "$revision"
cd "$scratch/clone"

# timed LABEL COMMAND...: wall and CPU seconds of COMMAND and its children.
timed() {
  local label=$1
  shift
  local start end
  start=$(date +%s.%N)
  local before
  before=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  "$@" >/dev/null
  end=$(date +%s.%N)
  local after
  after=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  awk -v l="$label" -v s="$start" -v e="$end" -v c=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%-44s %7.1f s wall  %7.1f s CPU\n", l, e - s, c / hz }'
}

# A revision from before tools/build.sh took --target: configure as it did, then build the target.
timed "meson setup + ninja testio, from scratch" \
  bash -c 'meson setup build -Dbuildtype=release -Dwerror=true >/dev/null && ninja -C build testio'
touch src/session/client.cpp
timed "touch session/client.cpp, ninja testio" ninja -C build testio
echo
python3 "$OLDPWD/tools/build_profile.py" build --top 8

#!/usr/bin/env bash
# The build's figures of docs/benchmarks.md, on clean clones in a scratch directory, with no
# compiler cache and no earlier build tree:
#   1. meson setup and `ninja testio` from scratch (release, warnings as errors);
#   2. the rebuild after touching the client's lifecycle (one of the slowest units);
# each as wall time and CPU seconds (user + system of everything it ran). Then the slowest
# units (tools/build_profile.py).
#   tools/build_times.sh [REV_A [REV_B]]     (default HEAD)
# With two revisions both are cloned and built in one run on this machine, A's build then B's for
# each figure, reported side by side with B/A of the CPU seconds (the steadier figure on a shared
# machine), and each one's compile cost as preprocessed lines (tools/build_cost.py, of a file-by-file
# configuration). The slowest units are then B's against A's.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$PWD/tools
usage="usage: tools/build_times.sh [REV_A [REV_B]]"
if [ $# -gt 2 ]; then
  echo "tools/build_times.sh takes at most two revisions ($usage)" >&2
  exit 2
fi
revisions=("${@:-HEAD}")
hashes=()
for revision in "${revisions[@]}"; do
  if ! hash=$(git rev-parse --verify --quiet "$revision^{commit}"); then
    echo "tools/build_times.sh: $revision is not a revision of this repository ($usage)" >&2
    exit 2
  fi
  hashes+=("$hash")
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
clones=()
for i in "${!hashes[@]}"; do
  clone=$scratch/clone$i
  git clone -q . "$clone"
  git -C "$clone" checkout -q "${hashes[$i]}"
  clones+=("$clone")
done

# timed CLONE COMMAND...: runs COMMAND in CLONE; sets $wall and $cpu (seconds of it and its children).
timed() {
  local clone=$1
  shift
  local start end before after
  start=$(date +%s.%N)
  before=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  if ! (cd "$clone" && "$@") >"$scratch/step.out" 2>&1; then
    tail -n 40 "$scratch/step.out"
    echo "$* failed at $(git -C "$clone" rev-parse --short HEAD)"
    exit 1
  fi
  end=$(date +%s.%N)
  after=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
  wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
  cpu=$(awk -v c=$((after - before)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", c / hz }')
}

# A revision from before tools/build.sh took --target: configure as it did, then build the target.
from_scratch() {
  meson setup build -Dbuildtype=release -Dwerror=true >/dev/null && ninja -C build testio
}
# The client's lifecycle, the unit a change most often touches: session/client.cpp until the
# fourth wave's floors, lifecycle/client_lifecycle.cpp since.
client_unit() {
  local unit
  for unit in src/lifecycle/client_lifecycle.cpp src/session/client.cpp; do
    [ -f "$1/$unit" ] && { echo "$unit"; return; }
  done
}
touched() {
  touch "$(client_unit .)" && ninja -C build testio
}
figures=("meson setup + ninja testio, from scratch" "touch the client's lifecycle, ninja testio")
steps=(from_scratch touched)

if [ ${#clones[@]} = 1 ]; then
  for k in 0 1; do
    timed "${clones[0]}" "${steps[$k]}"
    printf "%-44s %7.1f s wall  %7.1f s CPU\n" "${figures[$k]}" "$wall" "$cpu"
  done
  echo
  /usr/bin/python3 "$tools/build_profile.py" "${clones[0]}/build" --top 8
  exit 0
fi

printf "%-44s %-27s %-27s %s\n" "" "A ${hashes[0]:0:12}" "B ${hashes[1]:0:12}" "B/A of CPU-s, of lines"
for k in 0 1; do
  row=$(printf "%-44s" "${figures[$k]}")
  cpus=()
  for clone in "${clones[@]}"; do
    if [ $k = 1 ] && [ -z "$(client_unit "$clone")" ]; then
      row+=$(printf " %-27s" "(no client lifecycle unit)")
      cpus+=(0)
      continue
    fi
    timed "$clone" "${steps[$k]}"
    row+=$(printf " %7.1f s wall %6.1f CPU-s" "$wall" "$cpu")
    cpus+=("$cpu")
  done
  row+=$(awk -v a="${cpus[0]}" -v b="${cpus[1]}" 'BEGIN { if (a > 0 && b > 0) printf " %.3f", b / a; else printf " -" }')
  echo "$row"
done

# The compile cost of each, a count (no clock): a file-by-file configuration, nothing compiled.
for clone in "${clones[@]}"; do
  (cd "$clone" && meson setup cost -Dunity=off -Dtests=disabled >/dev/null)
  /usr/bin/python3 "$tools/build_cost.py" "$clone/cost" --json >"$clone/cost.json"
done
/usr/bin/python3 - "${clones[0]}/cost.json" "${clones[1]}/cost.json" <<'EOF_PY'
import json, sys
a, b = (json.load(open(path)) for path in sys.argv[1:])
cells = "".join(" {:<27}".format(f"{n['preprocessed_lines']:,} in {n['units']} units") for n in (a, b))
print(f"{'preprocessed lines (tools/build_cost.py)':<44}{cells} {b['preprocessed_lines'] / a['preprocessed_lines']:.3f}")
EOF_PY
echo
/usr/bin/python3 "$tools/build_profile.py" "${clones[1]}/build" "${clones[0]}/build" --top 8

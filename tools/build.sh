#!/usr/bin/env bash
# Configures (once) and builds testio in build/ (or DIR), warnings as errors.
#   tools/build.sh [--target NAME]... [DIR [MESON_SETUP_ARGS...]]
# --target builds only that ninja target (and what it needs), e.g. --target testio; by default
# everything. Further arguments go to meson setup (a -Dbuildtype there replaces the release
# default). The test suites are built when GoogleTest is installed (-Dtests=enabled to insist).
# It shows the build's progress: on a terminal one line rewritten in place (ninja's [done/total],
# the percentage and the step), elsewhere (a CI log, a file) a plain line at every tenth of the
# steps. Ninja's own lines go to DIR/ninja.out; a failure prints the compiler's reason from there.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
while [ "${1:-}" = --target ]; do
  if [ $# -lt 2 ] || [ -z "$2" ]; then
    echo "tools/build.sh: --target needs a ninja target's name, e.g. --target testio" >&2
    exit 2
  fi
  targets+=("$2")
  shift 2
done
dir=${1:-build}
shift || true
if [[ $dir == -* ]]; then
  echo "tools/build.sh: $dir is not a build directory (usage: tools/build.sh [--target NAME]... [DIR [MESON_SETUP_ARGS...]])" >&2
  exit 2
fi
defaults=(-Dwerror=true)
[[ " $* " == *" -Dbuildtype="* ]] || defaults+=(-Dbuildtype=release)

terminal=0
columns=80
if [ -t 1 ] && [ "${TERM:-}" != dumb ]; then   # a terminal that understands \r and ESC[K
  terminal=1
  size=$(stty size <&1 2>/dev/null || true)   # "rows columns" of the terminal on stdout
  [[ ${size#* } =~ ^[0-9]+$ ]] && [ "${size#* }" -gt 20 ] && columns=${size#* }
fi

if [ ! -f "$dir/build.ninja" ]; then
  echo "configuring $dir (meson setup)"
  setup_log=$(mktemp)
  if ! meson setup "$dir" "${defaults[@]}" "$@" >"$setup_log" 2>&1; then
    tail -n 30 "$setup_log"
    rm -f "$setup_log"
    exit 1
  fi
  rm -f "$setup_log"
fi

# progress: copies ninja's lines (its stdin) to DIR/ninja.out and shows its "[done/total] step"
# lines as progress.
progress() {
  local line finished total step percent tenth=0 shown=0
  while IFS= read -r line; do
    printf '%s\n' "$line" >&3
    [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\ (.*)$ ]] || continue
    finished=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]} step=${BASH_REMATCH[3]}
    percent=$((total ? finished * 100 / total : 100))
    line="[$finished/$total] $percent% $step"
    if [ $terminal = 1 ]; then
      printf '\r\033[K%s' "${line:0:columns-1}"
      shown=1
    elif [ $((percent / 10)) -gt $tenth ]; then
      tenth=$((percent / 10))
      printf '%s\n' "$line"
    fi
  done 3>"$dir/ninja.out"
  [ $shown = 0 ] || printf '\r\033[K'
}

what=${targets[*]:-everything}
echo "building $what in $dir (ninja's output: $dir/ninja.out)"
start=$SECONDS
if ! NINJA_STATUS='[%f/%t] ' ninja -C "$dir" "${targets[@]}" 2>&1 | progress; then
  # The compiler's reason follows ninja's FAILED line; without one (ninja's own error), the end.
  if grep -q '^FAILED: ' "$dir/ninja.out"; then
    reason=$(sed -n '/^FAILED: /,$p' "$dir/ninja.out")
    if [ "$(wc -l <<<"$reason")" -le 80 ]; then
      printf '%s\n' "$reason"
    else
      head -n 79 <<<"$reason"
      echo "..."
      tail -n 1 "$dir/ninja.out"
    fi
  else
    tail -n 60 "$dir/ninja.out"
  fi
  echo "building $what in $dir failed after $((SECONDS - start)) s"
  exit 1
fi
steps=$(grep -c '^\[[0-9]*/[0-9]*\] ' "$dir/ninja.out" || true)
if [ "$steps" = 0 ]; then
  echo "$what in $dir is up to date"
else
  echo "built $what in $dir: $steps steps in $((SECONDS - start)) s"
fi

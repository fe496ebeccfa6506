#!/usr/bin/env bash
# Configures (once) and builds testio in build/ (or DIR), warnings as errors.
#   tools/build.sh [--target NAME]... [DIR [MESON_SETUP_ARGS...]]
# --target builds only that ninja target (and what it needs), e.g. --target testio; by default
# everything. Further arguments go to meson setup (a -Dbuildtype there replaces the release
# default). The test suites are built when GoogleTest is installed (-Dtests=enabled to insist).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
while [ "${1:-}" = --target ]; do
  targets+=("$2")
  shift 2
done
dir=${1:-build}
shift || true
defaults=(-Dwerror=true)
[[ " $* " == *" -Dbuildtype="* ]] || defaults+=(-Dbuildtype=release)
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${defaults[@]}" "$@" >/dev/null
fi
# ninja's own lines go to a log; a failure shows its end, where the compiler said why.
if ! ninja -C "$dir" "${targets[@]}" >"$dir/ninja.out" 2>&1; then
  tail -n 60 "$dir/ninja.out"
  exit 1
fi

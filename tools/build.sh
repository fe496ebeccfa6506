#!/usr/bin/env bash
# Configures (once) and builds testio in build/ (or $1), warnings as errors. Further arguments go
# to meson setup (a -Dbuildtype there replaces the release default).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
defaults=(-Dwerror=true)
[[ " $* " == *" -Dbuildtype="* ]] || defaults+=(-Dbuildtype=release)
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${defaults[@]}" "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null

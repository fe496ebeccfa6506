#!/usr/bin/env bash
# Configures (once) and builds testio in build/ (or $1), warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" --buildtype=release -Dwerror=true "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null

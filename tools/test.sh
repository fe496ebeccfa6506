#!/usr/bin/env bash
# Every test: install what is missing, build with warnings as errors, run the suites, and end
# with one line "N passed, N failed" counted over the individual GoogleTest cases.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

dir=build-test
if ! tools/build.sh "$dir"; then
  echo "build failed"
  echo "0 passed, 1 failed"
  exit 1
fi
meson test -C "$dir" --print-errorlogs --num-processes 1
status=$?
python3 tools/test_summary.py "$dir/meson-logs/testlog.junit.xml" || status=1
exit $status

#!/usr/bin/env bash
# Every test: install what is missing, then
#   1. release build, warnings as errors: every suite (unit, loopback, JSON output, hardening,
#      and the testbed's accuracy suite, which skips itself unless root with ip netns);
#   2. ASan + UBSan build: every suite again but the testbed (it measures timing);
#   3. TSan build: the multi-threaded suites (integration, and the in-process 'threads' units);
#   (stages 2 and 3 each run the 'options' suites beside the rest, two meson test processes);
#   4. the control-protocol fuzz target for a bounded time (30 s; TESTIO_FUZZ_SECONDS to change);
#   and after stage 1, the Debian package: built, installed with dpkg -i, run, removed.
# Ends with one line "N passed, N failed" counted over individual test cases of every stage.
# TESTIO_QUICK=1 runs stage 1 only.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! tools/install-deps.sh; then
  echo "installing the dependencies failed"
  echo "0 passed, 1 failed"
  exit 1
fi

logs=()
extra_passed=0
extra_failed=0
status=0

# Sanitizer builds: GCC 12 raises false -Wmaybe-uninitialized and -Wmismatched-new-delete on
# instrumented coroutine and <regex> code; every other warning stays an error. ASan + UBSan
# builds at -O0: at -O1 UBSan's checks about double the compile time (engine/run_client.cpp alone:
# 40-53 s against 22-26 s; the whole -O0 build takes 242 s here), and the suites ran no slower
# unoptimised. TSan stays at -O1: -O0 saved it nothing.
sanitizer_warnings="-Wno-maybe-uninitialized -Wno-mismatched-new-delete"

suites() {  # build dir, log name, meson test arguments...: one suite at a time, logged under the name
  local dir=$1 log=$2
  shift 2
  meson test -C "$dir" --print-errorlogs --num-processes 1 --logbase "$log" "$@"
}

stage() {  # name, build dir, meson test arguments...
  echo "== $1"
  if ! suites "$2" testlog "${@:3}"; then status=1; fi
  logs+=("$2/meson-logs/testlog.junit.xml")
}

# A sanitized stage in two halves side by side: its suites wait on sockets and child processes
# more than they compute, so two at once take little longer each (ASan's tests: 311 s in a row,
# 208 s in two halves). Only sanitized stages: the release stage's rate comparisons want the CPUs
# alone. Each half logs under its own name; its output is printed whole once both have ended.
halves_stage() {  # name, build dir, meson test arguments for both halves...
  local name=$1 dir=$2
  shift 2
  echo "== $name"
  suites "$dir" options "$@" --suite options >"$dir/options-half.out" 2>&1 &
  local options_half=$!
  if ! suites "$dir" rest "$@" --no-suite options >"$dir/rest-half.out" 2>&1; then status=1; fi
  if ! wait "$options_half"; then status=1; fi
  cat "$dir/rest-half.out" "$dir/options-half.out"
  logs+=("$dir/meson-logs/rest.junit.xml" "$dir/meson-logs/options.junit.xml")
}

build_failed() {
  echo "build of $1 failed"
  extra_failed=$((extra_failed + 1))
  status=1
}

if tools/build.sh build-test; then
  stage "release build" build-test
else
  build_failed build-test
fi

# The Debian package from the release build: installed, run, its manual found, removed, and
# nothing of it left behind.
echo "== Debian package"
if bash tools/package_check.sh build-test; then
  extra_passed=$((extra_passed + 1))
else
  echo "the Debian package failed its check (see above)"
  extra_failed=$((extra_failed + 1))
  status=1
fi

if [ "${TESTIO_QUICK:-0}" != 1 ]; then
  # Both sanitized builds leave MPI out (OpenMPI's own allocations would read as leaks and races),
  # so they run the mesh suite's check of a build without it; the release build runs the mesh.
  if tools/build.sh build-asan -Dbuildtype=plain "-Dcpp_args=-O0 $sanitizer_warnings" \
      -Db_sanitize=address,undefined -Db_lundef=false -Dmpi=disabled; then
    # Not the testbed suite: it measures rates against a link, and sanitizers change the timing.
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      halves_stage "ASan + UBSan" build-asan --no-suite testbed --no-rebuild
  else
    build_failed build-asan
  fi

  # TSan: the binary, the integration suites and the in-process lifecycle, engine and workload
  # units: wherever worker threads run.
  if [ ! -f build-tsan/build.ninja ]; then
    meson setup build-tsan --buildtype=plain "-Dcpp_args=-O1 $sanitizer_warnings -Wno-tsan" \
      -Db_sanitize=thread -Db_lundef=false -Dwerror=true -Dmpi=disabled >/dev/null
  fi
  if ninja -C build-tsan testio tests/loopback_test tests/engines_test tests/workloads_test tests/session_test \
      >/dev/null; then
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      halves_stage "TSan" build-tsan --no-suite unit --no-suite testbed --no-rebuild
  else
    build_failed build-tsan
  fi

  echo "== fuzzing the control protocol"
  if tools/fuzz.sh "${TESTIO_FUZZ_SECONDS:-30}"; then
    extra_passed=$((extra_passed + 1))
  else
    echo "the fuzz target found a failing input (see above)"
    extra_failed=$((extra_failed + 1))
    status=1
  fi
fi

python3 tools/test_summary.py --passed "$extra_passed" --failed "$extra_failed" "${logs[@]}" || status=1
exit $status

#!/usr/bin/env bash
# Every test: install what is missing, then
#   1. the release build (every target, warnings as errors); then the testbed's suites (root with
#      ip netns, else they skip: they measure rates against tbf-limited links): with the machine to
#      itself the verdicts' built causes that a CPU decides or disturbs, the accuracy at up to
#      2 x 1 Gbit/s and the latency probes (idle round trips checked to 0.2 ms), then, beside the
#      ASan build at the lowest priority, suite 'testbed_paced' (compare, mesh fabric, MPTCP, the
#      verdicts' causes on slow links: rates of at most 300 Mbit/s) and the Debian package (built,
#      installed with dpkg -i, run, removed);
#   2. every other suite on the release build (unit, loopback, JSON output, hardening, ...), in two
#      halves side by side (suite 'second_half', which holds testio plot's 'pictures' here, and
#      the rest);
#   3. every suite but the testbed, testio plot's ('pictures': Python drawing reports the other
#      suites make and check) and the checks of the sources themselves ('sources': function sizes
#      and the build-cost budget, the same whatever the build) under ASan + UBSan, in three lanes
#      side by side (suites 'sanitized_b' and 'sanitized_c', and the rest);
#   4. the multi-threaded suites (integration, and the in-process 'threads' units) under TSan,
#      in the same three lanes, but for suite 'python_programs' (campaign, compare: Python that
#      runs the bulk tests the others run);
#   and, between 2 and 3, the fuzz targets for a bounded time (30 s for the control protocol;
#   TESTIO_FUZZ_SECONDS).
# The builds a later step needs compile beside the steps before it, at the lowest CPU priority:
# the suites wait on sockets and child processes more than they compute (one release suite at a
# time kept about one core of two busy), so a build takes what they leave idle and they keep the
# CPU they ask for. The testbed's CPU-sensitive suites run with nothing beside them.
# Ends with one line "N passed, N failed" counted over individual test cases of every step.
# TESTIO_QUICK=1 runs step 1 and 2 only.
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
timings=()
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Sanitizer builds: GCC 12 raises false -Wmaybe-uninitialized and -Wmismatched-new-delete on
# instrumented coroutine and <regex> code; every other warning stays an error. ASan + UBSan
# builds at -O0: at -O1 UBSan's checks about double the compile time, and the suites ran no
# slower unoptimised (-Og compiled slower than -O0 too). TSan stays at -O1: -O0 saved it nothing.
# Both leave MPI out (OpenMPI's own allocations would read as leaks and races), so they run the
# mesh suite's check of a build without it; the release build runs the mesh.
sanitizer_warnings="-Wno-maybe-uninitialized -Wno-mismatched-new-delete"
# Every build here is a unity build: a folder's files compile as one, so the headers (Asio, spdlog,
# nlohmann/json, coroutines) are parsed once per block instead of once per file (the whole release
# build took 193 s of wall time at 8 files a block, against 397 s file by file in CI). The project's
# default block is 8 files, which keeps a touched file's rebuild small; CI's builds are made once
# from scratch and never rebuilt, so theirs are up to 64 files, a whole folder: the release build
# with the tests took 389 CPU-s this way against 432 at 8 (one machine, one after the other).
ci_unity=-Dunity_size=64
# The ASan binary links as a fixed-address executable (-no-pie): as Debian's default PIE it carried
# 2.4 million relative relocations (ASan's descriptors of every global, 57 MB of them), which every
# process start applies page by page: `testio --version` took 0.41 s as PIE and 0.22 s without,
# and the suites start testio many times (udp 25.5 -> 19.3 s, json_output 38.7 -> 32.2 s).
# TSan's binary starts in 0.1 s either way and stays PIE.
asan_setup=("$ci_unity" -Dbuildtype=plain "-Dcpp_args=-O0 $sanitizer_warnings" -Dcpp_link_args=-no-pie
            -Db_sanitize=address,undefined -Db_lundef=false -Dmpi=disabled -Dtests=enabled)
tsan_setup=("$ci_unity" -Dbuildtype=plain "-Dcpp_args=-O1 $sanitizer_warnings -Wno-tsan" -Db_sanitize=thread -Db_lundef=false
            -Dmpi=disabled -Dtests=enabled)
# What the TSan step runs: the binary, the integration suites' own driver and the 'threads' units.
tsan_targets=(testio tests/loopback_test tests/engines_test tests/workloads_test tests/lifecycle_test tests/server_test)

# CPU time of the whole machine, busy and all, in clock ticks (/proc/stat's first line).
cpu_ticks() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

# step NAME COMMAND...: runs COMMAND, then notes NAME's wall time and how many cores were busy.
step() {
  local name=$1 start=$SECONDS busy0 all0 busy1 all1
  shift
  echo "== $name"
  read -r busy0 all0 < <(cpu_ticks)
  "$@"
  local result=$?
  read -r busy1 all1 < <(cpu_ticks)
  local cores
  cores=$(awk -v b=$((busy1 - busy0)) -v a=$((all1 - all0)) -v n="$(nproc)" 'BEGIN { printf "%.1f", a ? n * b / a : 0 }')
  timings+=("$(printf '%5d s  %s cores busy  %s' $((SECONDS - start)) "$cores" "$name")")
  return $result
}

suites() {  # build dir, log name, meson test arguments...: one suite at a time, logged under the name
  local dir=$1 log=$2
  shift 2
  meson test -C "$dir" --print-errorlogs --num-processes 1 --logbase "$log" "$@"
}

# run_suites DIR LOG ARGS...: the suites, their JUnit log counted at the end.
run_suites() {
  local dir=$1 log=$2
  shift 2
  suites "$dir" "$log" --no-rebuild "$@" || status=1
  logs+=("$dir/meson-logs/$log.junit.xml")
}

# run_lanes DIR "LANE..." ARGS...: each suite LANE's tests in a lane of its own and the rest in one
# more, side by side; each lane printed whole once all have ended. The release build runs in two
# lanes (suite 'second_half'), the sanitized ones in three (tests/meson.build says why).
run_lanes() {  # build dir, the lanes' suite names, meson test arguments for every lane...
  local dir=$1 lanes=$2 lane pid pids=() others=()
  shift 2
  for lane in $lanes; do
    suites "$dir" "$lane" --no-rebuild "$@" --suite "$lane" >"$scratch/$lane.out" 2>&1 &
    pids+=($!)
    others+=(--no-suite "$lane")
  done
  suites "$dir" others --no-rebuild "$@" "${others[@]}" >"$scratch/others.out" 2>&1 || status=1
  for pid in "${pids[@]}"; do
    wait "$pid" || status=1
  done
  for lane in others $lanes; do
    cat "$scratch/$lane.out"
    logs+=("$dir/meson-logs/$lane.junit.xml")
  done
}

# The builds the later steps need, one after the other in a background subshell at the lowest CPU
# priority (started after the testbed's first step, beside the steps that follow it): the fuzz
# targets, the ASan + UBSan build, the TSan build. Each writes its output to $scratch/NAME.out
# and then its exit status to $scratch/NAME.built, so a step can start as soon as its own build
# is done while the next one compiles beside it.
build_aside() {
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    tools/fuzz.sh --build-only >"$scratch/build-fuzz.out" 2>&1
    echo $? >"$scratch/build-fuzz.built"
    tools/build.sh build-asan "${asan_setup[@]}" >"$scratch/build-asan.out" 2>&1
    echo $? >"$scratch/build-asan.built"
    build_tsan >"$scratch/build-tsan.out" 2>&1
    echo $? >"$scratch/build-tsan.built"
  ) &
  aside=$!
}

# wait_built NAME: waits for the build NAME of the background builds, prints its output; 0 if it
# built. A build that never says (the background subshell died) fails too.
wait_built() {
  local name=$1
  while [ ! -f "$scratch/$name.built" ] && kill -0 "$aside" 2>/dev/null; do sleep 1; done
  cat "$scratch/$name.out" 2>/dev/null
  if [ "$(cat "$scratch/$name.built" 2>/dev/null)" != 0 ]; then
    echo "build of $name failed"
    extra_failed=$((extra_failed + 1))
    status=1
    return 1
  fi
}

build_tsan() {  # configure (once) and build what the TSan step runs
  if [ ! -f build-tsan/build.ninja ]; then
    meson setup build-tsan -Dwerror=true "${tsan_setup[@]}" >/dev/null || return 1
  fi
  ninja -C build-tsan "${tsan_targets[@]}" >build-tsan/ninja.out 2>&1 || { tail -n 60 build-tsan/ninja.out; return 1; }
}

package_check() {  # the .deb from the release build: installed, run, its manual found, removed
  if bash tools/package_check.sh build-test; then
    extra_passed=$((extra_passed + 1))
  else
    echo "the Debian package failed its check (see above)"
    extra_failed=$((extra_failed + 1))
    status=1
  fi
}

fuzz() {
  if tools/fuzz.sh "${TESTIO_FUZZ_SECONDS:-30}"; then
    extra_passed=$((extra_passed + 1))
  else
    echo "a fuzz target found a failing input (see above)"
    extra_failed=$((extra_failed + 1))
    status=1
  fi
}

release_built=0
if step "release build" tools/build.sh build-test -Dtests=enabled "$ci_unity"; then
  release_built=1
else
  echo "build of build-test failed"
  extra_failed=$((extra_failed + 1))
  status=1
fi

quick=${TESTIO_QUICK:-0}
# The testbed: its CPU-sensitive suites alone, then those of suite 'testbed_paced' (rates of at
# most 300 Mbit/s: tests/meson.build) beside the ASan build.
if [ $release_built = 1 ]; then
  step "testbed: verdicts, accuracy, latency (alone)" \
    run_suites build-test testbed-alone --suite testbed --no-suite testbed_paced
fi
[ "$quick" = 1 ] || build_aside
if [ $release_built = 1 ]; then
  step "testbed: paced suites and the Debian package" \
    eval 'run_suites build-test testbed-paced --suite testbed_paced; package_check'
  step "release build: every other suite" run_lanes build-test second_half --no-suite testbed
fi

if [ "$quick" != 1 ]; then
  step "fuzzing the parsers" eval 'wait_built build-fuzz && fuzz'
  # Not the testbed suite: it measures rates against a link, and sanitizers change the timing.
  if step "the rest of the ASan + UBSan build" wait_built build-asan; then
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      step "ASan + UBSan: every suite but the testbed" run_lanes build-asan "sanitized_b sanitized_c" \
        --no-suite testbed --no-suite pictures --no-suite sources
  fi
  if step "the rest of the TSan build" wait_built build-tsan; then
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      step "TSan: the multi-threaded suites" run_lanes build-tsan "sanitized_b sanitized_c" \
        --no-suite unit --no-suite testbed --no-suite pictures --no-suite sources --no-suite python_programs
  fi
fi

echo "== time per step (wall; busy cores of $(nproc))"
printf '%s\n' "${timings[@]}"
python3 tools/test_summary.py --passed "$extra_passed" --failed "$extra_failed" "${logs[@]}" || status=1
exit $status

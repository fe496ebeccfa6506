#!/usr/bin/env bash
# Builds the fuzz targets with clang's libFuzzer (plus ASan and UBSan) and runs each for a bounded
# time over its seed corpus: the control protocol (tests/fuzz/corpus) for SECONDS, what a UDP
# receiver reads (tests/fuzz/udp_corpus) for a third of that, and the URLs of HTTP downloads
# (tests/fuzz/url_corpus, through libcurl's parser) for a sixth, and the request heads of the
# metrics endpoints with the probe's plan (tests/fuzz/http_corpus), what a mesh's rank 0
# gathers (tests/fuzz/mesh_corpus) and the kernel's qdisc dumps (tests/fuzz/qdisc_corpus) for a
# sixth each. Usage: tools/fuzz.sh [--build-only] [SECONDS]
# New inputs go to a scratch directory, not the committed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi
seconds=${1:-60}
out=build-fuzz
mkdir -p "$out"
control_sources=(tests/fuzz/control_fuzzer.cpp src/protocols/testio/codec.cpp
         src/spec/names.cpp src/spec/spec_json.cpp src/spec/composition.cpp src/spec/rules.cpp
         src/stats/summary.cpp src/stats/sampler.cpp src/net/tcp_info.cpp src/net/nic_counters.cpp src/util/units.cpp
         src/util/digest.cpp)
udp_sources=(tests/fuzz/udp_fuzzer.cpp src/workloads/udp/udp_wire.cpp src/stats/udp_sequence.cpp
             src/workloads/latency/latency_wire.cpp)
url_sources=(tests/fuzz/url_fuzzer.cpp src/workloads/http/http_url.cpp src/workloads/rpm/rpm_wire.cpp)
http_sources=(tests/fuzz/http_request_fuzzer.cpp src/metrics/http_request.cpp src/metrics/probe.cpp)
mesh_sources=(tests/fuzz/mesh_fuzzer.cpp src/mesh/pair_result.cpp src/mesh/round_book.cpp src/mesh/schedule.cpp)
qdisc_sources=(tests/fuzz/qdisc_fuzzer.cpp src/net/qdisc_stats.cpp)

# The targets are built by ninja from a file written here: each source is compiled once (the
# targets share some), two at a time, again only when it or a header it includes changed (clang's
# depfiles). Everything is instrumented for coverage (fuzzer-no-link); the link adds libFuzzer.
{
  echo "flags = -std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
    "-DTESTIO_VERSION=\"fuzz\" -I../src"
  echo "rule compile"
  echo '  command = clang++ $flags -MD -MF $out.d -c $in -o $out'
  echo '  depfile = $out.d'
  echo '  deps = gcc'
  echo "rule link"
  echo '  command = clang++ -g -fsanitize=fuzzer,address,undefined $in -lcrypto -lcurl -o $out'
  declare -A compiled=()
  target() {  # NAME SOURCES...
    local name=$1 objects=()
    shift
    for source in "$@"; do
      local object=objects/${source%.cpp}.o
      objects+=("$object")
      [ -n "${compiled[$object]:-}" ] || echo "build $object: compile ../$source"
      compiled[$object]=1
    done
    echo "build $name: link ${objects[*]}"
  }
  target control_fuzzer "${control_sources[@]}"
  target udp_fuzzer "${udp_sources[@]}"
  target url_fuzzer "${url_sources[@]}"
  target http_request_fuzzer "${http_sources[@]}"
  target mesh_fuzzer "${mesh_sources[@]}"
  target qdisc_fuzzer "${qdisc_sources[@]}"
} > "$out/build.ninja.new"
# Rewritten only when it changed, so ninja does not rebuild everything for a new file's date.
if cmp -s "$out/build.ninja.new" "$out/build.ninja"; then rm "$out/build.ninja.new"; else mv "$out/build.ninja.new" "$out/build.ninja"; fi
ninja -C "$out" -j 2 >/dev/null
[ "$build_only" = 1 ] && exit 0

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# fuzz NAME CORPUS SECONDS MAX_LEN LINES: one target over its committed corpus, new inputs kept in
# the scratch directory; prints the last LINES of libFuzzer's output (its final stats).
# -rss_limit_mb keeps memory bounded; -max_len lets a few frames fit; -timeout catches hangs.
fuzz() {
  local name=$1 corpus=$2 seconds=$3 max_len=$4 lines=$5
  mkdir -p "$scratch/$name"
  "$out/$name" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 "$scratch/$name" "$corpus" 2>&1 | tail -n "$lines"
}

# The targets run in two lanes side by side, one a core: the control protocol for SECONDS in
# one, the other five one after the other in the other (a third and four sixths of SECONDS).
# Each lane's output is printed whole once both have ended; a target that fails fails its lane.
third=$(( (seconds + 2) / 3 ))
sixth=$(( (seconds + 5) / 6 ))
(
  echo "== fuzzing what a UDP receiver reads"
  fuzz udp_fuzzer tests/fuzz/udp_corpus "$third" 65536 6
  echo "== fuzzing the URLs of HTTP downloads"
  fuzz url_fuzzer tests/fuzz/url_corpus "$sixth" 4096 6
  echo "== fuzzing the HTTP requests of /metrics and /probe"
  fuzz http_request_fuzzer tests/fuzz/http_corpus "$sixth" 9000 6
  echo "== fuzzing what rank 0 gathers from the mesh's ranks"
  fuzz mesh_fuzzer tests/fuzz/mesh_corpus "$sixth" 8192 6
  echo "== fuzzing the kernel's qdisc dumps"
  fuzz qdisc_fuzzer tests/fuzz/qdisc_corpus "$sixth" 8192 6
) >"$scratch/second-lane.out" 2>&1 &
second_lane=$!
status=0
fuzz control_fuzzer tests/fuzz/corpus "$seconds" 8192 12 || status=1
wait "$second_lane" || status=1
cat "$scratch/second-lane.out"
exit $status

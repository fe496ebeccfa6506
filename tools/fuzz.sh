#!/usr/bin/env bash
# Builds the control-protocol fuzz target with clang's libFuzzer (plus ASan and UBSan) and runs it
# for a bounded time over the seed corpus in tests/fuzz/corpus. Usage: tools/fuzz.sh [SECONDS]
# New inputs go to a scratch directory, not the committed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=build-fuzz
mkdir -p "$out"
sources=(tests/fuzz/control_fuzzer.cpp src/control/framing.cpp src/control/preamble.cpp src/control/json_fields.cpp
         src/control/messages.cpp src/control/results.cpp src/spec/names.cpp src/spec/spec_json.cpp src/spec/rules.cpp
         src/stats/summary.cpp src/stats/sampler.cpp src/net/tcp_info.cpp src/net/nic_counters.cpp src/util/units.cpp
         src/util/digest.cpp)
if [ ! -x "$out/control_fuzzer" ] || [ -n "$(find "${sources[@]}" src -newer "$out/control_fuzzer" -name '*.[ch]pp' | head -1)" ]; then
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DTESTIO_VERSION='"fuzz"' -Isrc "${sources[@]}" -lcrypto -o "$out/control_fuzzer"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# -rss_limit_mb keeps memory bounded; -max_len lets a few frames fit; -timeout catches hangs.
"$out/control_fuzzer" -max_total_time="$seconds" -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 "$scratch" tests/fuzz/corpus 2>&1 | tail -n 12

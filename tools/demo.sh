#!/usr/bin/env bash
# The main job: install what is missing to build testio (nothing the tests alone use), build the
# binary (not the test suites), then a server and a client on 127.0.0.1 for a few seconds,
# printing the client's report. The build shows its progress (tools/build.sh): one line rewritten
# in place on a terminal, a line every tenth of the way in a log; ninja's output is in build/ninja.out.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --build
# The project's default unity build, 8 files of a folder a compiler run: each parses Asio and
# json.hpp once for 8 files. testio alone from scratch took 162 s of wall and 313 CPU-s that way
# on a 2-core machine, against 273 s and 534 CPU-s file by file (docs/benchmarks.md, "Build").
tools/build.sh --target testio build

port=${TESTIO_DEMO_PORT:-5201}
seconds=${TESTIO_DEMO_SECONDS:-5}
echo "a ${seconds} s test on 127.0.0.1 port $port: build/testio -s, then build/testio -c"
log=$(mktemp)
build/testio -s -1 -B 127.0.0.1 -p "$port" >/dev/null 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 50); do   # up to 5 s for the server to say it listens
  grep -q "listening on" "$log" && break
  sleep 0.1
done
build/testio -c 127.0.0.1 -p "$port" 4 -t "$seconds"
wait "$server"

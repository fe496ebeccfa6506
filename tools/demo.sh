#!/usr/bin/env bash
# The main job: install what is missing to build testio (nothing the tests alone use), build the
# binary (not the test suites), then a server and a client on 127.0.0.1 for a few seconds,
# printing the client's report.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --build
tools/build.sh --target testio build

port=${TESTIO_DEMO_PORT:-5201}
log=$(mktemp)
build/testio -s -1 -B 127.0.0.1 -p "$port" >/dev/null 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 50); do   # up to 5 s for the server to say it listens
  grep -q "listening on" "$log" && break
  sleep 0.1
done
build/testio -c 127.0.0.1 -p "$port" 4 -t "${TESTIO_DEMO_SECONDS:-5}"
wait "$server"

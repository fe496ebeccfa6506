#!/usr/bin/env bash
# Installs, with apt-get, whichever of testio's build, test and benchmark packages are missing.
# Debian 12 package names; run as root (or with sudo available).
set -euo pipefail

packages=(
  g++ meson ninja-build pkg-config          # toolchain
  libasio-dev libspdlog-dev libcxxopts-dev   # libraries (Asio is header-only, found by header)
  nlohmann-json3-dev libgtest-dev libssl-dev
  liburing-dev                               # --engine uring: the kernel maintainers' io_uring library
  clang libclang-rt-14-dev                   # libFuzzer for the frame parser's fuzz target
  python3 python3-jsonschema jq              # meson, test summary, JSON output tests
  iperf3 iperf sockperf                      # side-by-side benchmarks
  netcat-openbsd socat                       # plain TCP senders for the --raw sink tests
  iproute2                                   # ip netns, veth and tc tbf for tools/testbed.sh
  libcurl4-openssl-dev                       # HTTP downloads (-c URL): libcurl's multi interface, OpenSSL for https
  nginx-light openssl curl wrk               # HTTP tests and benchmarks: a real server, its certificate, curl and wrk beside testio
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
export DEBIAN_FRONTEND=noninteractive   # iperf3 asks whether to start a daemon: it must not
echo "installing: ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Installs, with apt-get, whichever of testio's packages are missing. Debian 12 package names; run
# as root (or with sudo available).
#   tools/install-deps.sh           everything tools/test.sh uses: the build, the tests, the real
#                                   servers they talk to, the benchmarks' references
#   tools/install-deps.sh --build   only what builds the binary (tools/demo.sh): the toolchain and
#                                   the libraries it links; no MPI, so --mesh says what to install
set -euo pipefail

build_packages=(
  g++ meson ninja-build pkg-config          # toolchain (meson brings python3, which the build's checks use)
  libasio-dev libspdlog-dev libcxxopts-dev   # libraries (Asio is header-only, found by header)
  nlohmann-json3-dev libssl-dev
  liburing-dev                               # --engine uring: the kernel maintainers' io_uring library
  libcurl4-openssl-dev                       # HTTP downloads (-c URL): libcurl's multi interface, OpenSSL for https
)
test_packages=(
  libgtest-dev                               # the unit suites
  clang libclang-rt-14-dev                   # libFuzzer for the parsers' fuzz targets
  python3 python3-jsonschema jq              # test summary, JSON output tests
  iperf3 iperf sockperf                      # side-by-side benchmarks
  netcat-openbsd socat                       # plain TCP senders for the --raw sink tests
  iproute2                                   # ip netns, veth and tc tbf for tools/testbed.sh
  ethtool                                    # a campaign records its route device's firmware and offloads
  irtt iputils-ping                          # latency references beside --latency in the testbed
  nginx-light openssl curl wrk               # HTTP tests and benchmarks: a real server, its certificate, curl and wrk beside testio
  dpkg-dev man-db                            # tools/deb.sh (dpkg-shlibdeps) and the package check (man -w)
  prometheus                                 # the metrics tests: a real Prometheus scraping testio, and promtool's lint
  openmpi-bin libopenmpi-dev                 # --mesh: mpirun starts a testio per host and gathers them
  python3-matplotlib chromium                # testio plot's plots, and a real browser opening its HTML reports
  tshark                                     # captures that show -S/--dscp's TOS byte on the wire
)

case "${1:-}" in
  --build) packages=("${build_packages[@]}") ;;
  "") packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: tools/install-deps.sh [--build]" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
export DEBIAN_FRONTEND=noninteractive   # iperf3 asks whether to start a daemon: it must not
echo "installing: ${missing[*]}" >&2
# Packages with a daemon (nginx, iperf3, prometheus) must not start one: the tests start their own servers on
# free loopback ports and stop them. Debian asks policy-rc.d before starting a service.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  own_policy=1
  trap '"${as_root[@]}" rm -f "$policy"' EXIT   # also when the install fails
fi
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# ... nor start one at the next boot.
if command -v systemctl >/dev/null; then
  [[ " ${missing[*]} " == *" nginx-light "* ]] && { "${as_root[@]}" systemctl disable nginx >/dev/null 2>&1 || true; }
  [[ " ${missing[*]} " == *" prometheus "* ]] && { "${as_root[@]}" systemctl disable prometheus >/dev/null 2>&1 || true; }
fi
exit 0

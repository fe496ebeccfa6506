#!/usr/bin/env bash
# The .deb as a user installs it: tools/deb.sh from BUILD_DIR, dpkg -i, `testio --version`,
# `man -w testio`, the completion and the unit in place, `testio plot` drawing a real run, then
# dpkg -r and nothing of it left.
# Needs root (or sudo); refuses to touch a testio package that was installed before it ran.
# Usage: tools/package_check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
if dpkg-query -W -f='${Status}' testio 2>/dev/null | grep -q "install ok installed"; then
  echo "a testio package is installed already; not touching it"
  exit 1
fi
package=$(bash tools/deb.sh "${1:-build-deb}")
echo "built $package ($(du -k "$package" | cut -f1) KiB), depends: $(dpkg-deb -f "$package" Depends)"
files=$(dpkg-deb -c "$package" | awk '$NF !~ /\/$/ {sub(/^\./, "", $NF); print $NF}')
removed() { "${as_root[@]}" dpkg -r testio >/dev/null 2>&1 || true; }
trap removed EXIT
"${as_root[@]}" dpkg -i "$package" >/dev/null
/usr/bin/testio --version
man -w testio
# testio opens libcurl on first use rather than linking it: the package must name it, and the
# installed binary must find it (libcurl's own URL parser answers for a URL that does not parse).
dpkg-deb -f "$package" Depends | grep -q 'libcurl4' || { echo "the package does not depend on libcurl4"; exit 1; }
url_answer=$(/usr/bin/testio -c 'http://[::1/' 2>&1 || true)
[[ "$url_answer" == *"does not parse as a URL"* ]] || { echo "testio did not read a URL with libcurl: $url_answer"; exit 1; }
# The manual is the option table: an option of each group is in it.
for option in --max-tests --transfers --urls --no-gso --rr --raw --psk-file --metrics --max-probes --mesh; do
  MANPAGER=cat MANWIDTH=200 man testio 2>/dev/null | grep -q -e "$option" || { echo "testio(1) lacks $option"; exit 1; }
done
for path in /usr/share/bash-completion/completions/testio /lib/systemd/system/testio.service \
    /lib/systemd/system/testio-exporter.service /usr/share/testio/grafana/testio.json /usr/share/doc/testio/README.md; do
  [ -f "$path" ] || [ -f "/usr$path" ] || { echo "missing after install: $path"; exit 1; }
done
# testio plot from the package: its Python program beside the binary, drawing a real run's report.
scratch=$(mktemp -d)
trap 'removed; rm -rf "$scratch"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/testio -s -B 127.0.0.1 -p "$port" -1 >/dev/null 2>&1 &
for _ in $(seq 50); do
  /usr/bin/testio -c 127.0.0.1 -p "$port" -t 1 -i 0.5 --json >"$scratch/run.json" 2>/dev/null && break
  sleep 0.1
done
wait
/usr/bin/testio plot "$scratch/run.json" -o "$scratch/run.png"
[ -s "$scratch/run.png" ] || { echo "testio plot drew nothing"; exit 1; }
echo "testio plot: $(du -k "$scratch/run.png" | cut -f1) KiB PNG of a 1 s run"
grep -q '^ExecStart=/usr/bin/testio ' /usr/lib/systemd/system/testio.service /lib/systemd/system/testio.service \
  2>/dev/null || { echo "the unit does not start /usr/bin/testio"; exit 1; }
"${as_root[@]}" dpkg -r testio >/dev/null
trap 'rm -rf "$scratch"' EXIT
left=""
for file in $files; do
  if [ -e "$file" ]; then left="$left $file"; fi
done
status=$(dpkg-query -W -f='${Status}' testio 2>/dev/null || true)
if [ -n "$left" ] || [[ "$status" == *" installed" ]] || [[ "$status" == *config-files* ]]; then
  echo "left behind after dpkg -r:${left:- the package record ($status)}"
  exit 1
fi
echo "installed, ran, removed: nothing left"

#!/usr/bin/env bash
# The .deb as a user installs it: tools/deb.sh from BUILD_DIR, dpkg -i, `testio --version`,
# `man -w testio`, the completion and the unit in place, then dpkg -r and nothing of it left.
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
# The manual is the option table: an option of each group is in it.
for option in --max-tests --transfers --urls --no-gso --rr --raw --psk-file --metrics --max-probes --mesh; do
  MANPAGER=cat MANWIDTH=200 man testio 2>/dev/null | grep -q -e "$option" || { echo "testio(1) lacks $option"; exit 1; }
done
for path in /usr/share/bash-completion/completions/testio /lib/systemd/system/testio.service \
    /lib/systemd/system/testio-exporter.service /usr/share/testio/grafana/testio.json /usr/share/doc/testio/README.md; do
  [ -f "$path" ] || [ -f "/usr$path" ] || { echo "missing after install: $path"; exit 1; }
done
grep -q '^ExecStart=/usr/bin/testio ' /usr/lib/systemd/system/testio.service /lib/systemd/system/testio.service \
  2>/dev/null || { echo "the unit does not start /usr/bin/testio"; exit 1; }
"${as_root[@]}" dpkg -r testio >/dev/null
trap - EXIT
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

#!/usr/bin/env bash
# Builds testio_<version>_<arch>.deb with Debian's own tools: a release build with prefix /usr,
# `meson install` into a staging root (the binary, testio(1), the bash completion, the systemd
# unit, the docs), Depends from dpkg-shlibdeps (Debian packages only), then dpkg-deb. Prints the
# package's path. Usage: tools/deb.sh [BUILD_DIR] (default build-deb; an existing build is used
# as it is, its prefix set to /usr).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-deb}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dbuildtype=release -Dwerror=true -Dtests=disabled --prefix=/usr >/dev/null
elif [ "$(meson introspect --buildoptions "$build" | python3 -c 'import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')" != /usr ]; then
  # An existing build (CI's release build): only the installed paths change, nothing recompiles.
  meson configure "$build" -Dprefix=/usr >/dev/null
fi
ninja -C "$build" >/dev/null
version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" meson.build)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
DESTDIR=$root meson install -C "$build" --no-rebuild --quiet
strip --strip-unneeded "$root/usr/bin/testio"
gzip -9n "$root/usr/share/man/man1/testio.1"   # Debian ships manual pages compressed
mkdir -p "$root/usr/share/doc/testio" "$stage/debian"
printf 'testio: a network bandwidth and latency tester.\nSee /usr/share/doc/testio/README.md.\n' \
  > "$root/usr/share/doc/testio/copyright"
# dpkg-shlibdeps reads the source package's control file; a minimal one is enough.
printf 'Source: testio\n\nPackage: testio\nArchitecture: any\n' > "$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e root/usr/bin/testio 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
# libcurl is opened on first use, not linked (src/curl_on_demand.cpp), so
# dpkg-shlibdeps cannot see it; 7.80 brought curl_url_strerror.
depends="$depends, libcurl4 (>= 7.80)"
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: testio
Version: $version
Architecture: $arch
Maintainer: testio developers <testio@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: python3, python3-matplotlib, ethtool
Section: net
Priority: optional
Description: multi-connection TCP and UDP bandwidth and latency tester
 testio -s serves tests; testio -c HOST N runs N TCP connections (or UDP flows) over worker
 threads on both sides and reports Gbit/s per interval and in total, per-connection balance,
 CPU per GB, system calls and TCP_INFO, as a table or iperf3-shaped JSON. It also runs
 request/response latency tests, downloads from testio or any HTTP server, a raw sink for nc,
 and speaks iperf3's protocol both ways.
CONTROL
package="$build/testio_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group "$root" "$package" >/dev/null
echo "$package"

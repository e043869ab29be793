#!/usr/bin/env bash
# action-build.sh DIST: what action.yml runs on a cache miss. Installs the build packages
# (install-deps.sh --build), builds the gpucluster binary (Release) and lays out DIST as
# the cache keeps it: DIST/libexec/gpucluster, the libraries it links that a bare
# ubuntu-24.04 runner image lacks in DIST/lib, and DIST/bin/gpucluster, a wrapper that
# runs the binary with DIST/lib on its library path. A job with a warm cache restores DIST
# and runs nothing of this.
set -euo pipefail
dist=$1
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

"$src/scripts/install-deps.sh" --build
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target gpucluster >/dev/null

rm -rf "$dist"
mkdir -p "$dist/bin" "$dist/lib" "$dist/libexec"
cp "$build/cmd/gpucluster" "$dist/libexec/gpucluster"
# the -dev packages' runtime libraries (libyaml, libssh2, libjansson, libxml2, and
# their like): not on the runner image, and no apt on a warm job
ldd "$dist/libexec/gpucluster" | awk '$3 ~ /^\// { print $3 }' |
	grep -E '/lib(yaml|ssh2|jansson|xml2|microhttpd)[.-]' | while read -r lib; do
	cp -L "$lib" "$dist/lib/"
done
cat >"$dist/bin/gpucluster" <<'WRAP'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")/..
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/libexec/gpucluster" "$@"
WRAP
chmod +x "$dist/bin/gpucluster"
"$dist/bin/gpucluster" version >/dev/null

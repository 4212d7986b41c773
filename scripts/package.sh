#!/usr/bin/env bash
# Makes the release archive countersign-VERSION-linux-ARCH.tar.gz: bin/countersign (the Swift runtime
# linked in) with its .resources beside it, the journey templates (built into the binary too, here to copy
# and change), deploy/ and an INSTALL. Prints the archive's path.
#
# Usage: scripts/package.sh [OUTPUT_DIR]   (default .build/package)
# With COUNTERSIGN_PACKAGE_BIN_PATH set, packages the build in that directory instead of building a
# release (the tests package their debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/package}

if [ -n "${COUNTERSIGN_PACKAGE_BIN_PATH:-}" ]; then
  bin_path=$COUNTERSIGN_PACKAGE_BIN_PATH
else
  # The Swift runtime linked in statically brings Foundation's networking, which links libcurl.
  if command -v dpkg >/dev/null 2>&1 && ! dpkg -s libcurl4-openssl-dev >/dev/null 2>&1; then
    echo "scripts/package.sh: libcurl4-openssl-dev is missing (apt-get install -y libcurl4-openssl-dev)" >&2
    exit 1
  fi
  flags=(-c release --static-swift-stdlib -Xswiftc -cross-module-optimization)
  swift build "${flags[@]}" --product countersign >&2
  bin_path=$(swift build "${flags[@]}" --show-bin-path)
fi
version=$("$bin_path/countersign" --version)
name=countersign-$version-linux-$(uname -m)

stage=$(mktemp -d /tmp/countersign-package.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/bin"
install -m 0755 "$bin_path/countersign" "$stage/$name/bin/"
cp -R "$bin_path"/*.resources "$stage/$name/bin/"
cp -R journeys deploy "$stage/$name/"
cat >"$stage/$name/INSTALL" <<INSTALL
Countersign $version

bin/countersign is the server and its tools; the .resources folders beside it (the browser SDK, the
demo pages, the API's contract) must stay beside it. The machine needs SQLite 3.35 or later, libqrencode,
jemalloc, zlib and libcurl (Debian and Ubuntu: apt-get install libsqlite3-0 libqrencode4 libjemalloc2 zlib1g
libcurl4); the Swift runtime is linked in.

Try it:      bin/countersign serve --dev        then open http://127.0.0.1:8080/demo
Production:  bin/countersign serve              settings from the environment: bin/countersign serve --help
             (the source's docs/CONFIGURATION.md and docs/DEPLOYMENT.md say more)

journeys/    the journey templates the binary has built in; to change them, copy this folder and set
             COUNTERSIGN_JOURNEYS_DIR to the copy (countersign journeys lint DIR checks it first).
deploy/      nginx in front of several instances.
INSTALL

mkdir -p "$out"
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"

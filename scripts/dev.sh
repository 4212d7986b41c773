#!/usr/bin/env bash
# The first command on a fresh machine: checks for what the server needs to build and run (Swift 6, and on
# Debian or Ubuntu zlib1g-dev, libsqlite3-dev with SQLite 3.35 or later, libqrencode-dev, libjemalloc-dev),
# installs the missing packages with apt-get when run as root or else stops at once naming them, builds
# the server (debug) and runs `countersign serve --dev`: the demo application, the demo at /demo, the
# development-only journeys. Ctrl-C stops it.
#
# Usage: scripts/dev.sh
# The server reads its settings from the environment (docs/CONFIGURATION.md): COUNTERSIGN_PORT=9090
# scripts/dev.sh listens on another port. Its state stays in this directory (countersign.sqlite,
# countersign.master-key); remove both to start afresh.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
  echo "usage: $0   (settings come from the environment: docs/CONFIGURATION.md)" >&2
  exit 2
fi

fail() { echo "scripts/dev.sh: $*" >&2; exit 1; }

# Swift: the package says swift-tools-version 6.0. Debian has no package of it; swift.org has.
command -v swift >/dev/null 2>&1 ||
  fail "Swift 6 is missing: install it from https://www.swift.org/install/linux/ and put its usr/bin on PATH."
swift_version=$(swift --version 2>/dev/null | sed -nE 's/.*Swift version ([0-9]+)\.([0-9]+).*/\1.\2/p' | head -n 1)
case $swift_version in
  [6-9].* | [1-9][0-9].*) ;;
  *) fail "Swift 6 or later is needed, found ${swift_version:-an unknown version} ($(command -v swift))." ;;
esac

# The libraries the server links, and the SQLite it runs on.
if [ "$(uname -s)" = Linux ] && command -v dpkg >/dev/null 2>&1; then
  missing=()
  for package in zlib1g-dev libsqlite3-dev libqrencode-dev libjemalloc-dev; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      fail "missing packages: ${missing[*]}. Install them (sudo apt-get install -y ${missing[*]}) or run this script as root."
    fi
    echo "==> installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  sqlite=$(dpkg-query -W -f='${Version}' libsqlite3-0 2>/dev/null || true)
  if [ -n "$sqlite" ] && ! dpkg --compare-versions "$sqlite" ge 3.35; then
    fail "the system's SQLite is $sqlite; the server needs 3.35 or later (Debian 12 and Ubuntu 22.04 have it)."
  fi
elif [ "$(uname -s)" = Darwin ]; then
  pkg-config --exists libqrencode 2>/dev/null || fail "libqrencode is missing: brew install qrencode pkg-config"
else
  echo "==> not Debian or Ubuntu: make sure zlib, SQLite 3.35+, libqrencode and jemalloc (Linux) are installed" >&2
fi

echo "==> building countersign (a first build takes about ten minutes on two cores)"
swift build --product countersign
bin=$(swift build --show-bin-path)/countersign
shown=$bin
[ .build/debug/countersign -ef "$bin" ] && shown=.build/debug/countersign   # as the README writes it

host=${COUNTERSIGN_HOST:-127.0.0.1}
port=${COUNTERSIGN_PORT:-8080}
case $host in 0.0.0.0 | ::) reach=127.0.0.1 ;; *:*) reach="[$host]" ;; *) reach=$host ;; esac
base=http://$reach:$port

echo "==> starting countersign serve --dev on $base"
"$bin" serve --dev &
server=$!
# Ctrl-C, or a TERM sent to this script, stops the server and then the script.
stop() {
  trap - INT TERM
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  exit 130
}
trap stop INT TERM

# Up when /healthz answers 200; bash's /dev/tcp, so that nothing more is needed.
healthy() {
  { exec 3<>"/dev/tcp/${reach//[\[\]]/}/$port"; } 2>/dev/null || return 1
  printf 'GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$reach" >&3
  local status=
  read -r -t 5 status <&3 || true
  while read -r -t 5 _ <&3; do :; done   # the rest of the answer, until the server closes
  exec 3<&-
  [[ $status == "HTTP/1."?" 200"* ]]
}
until healthy; do
  if ! kill -0 "$server" 2>/dev/null; then
    status=0
    wait "$server" || status=$?
    fail "the server stopped at start (exit status $status); its message is above."
  fi
  sleep 0.2
done

server_option=
[ "$base" = http://127.0.0.1:8080 ] || server_option=" --server $base"
cat <<READY

Countersign is running in development mode at $base (Ctrl-C stops it).
  The demo:  $base/demo
  A simulated phone for Ada, in a second terminal:
    $shown device register$server_option --email ada@example.com
    $shown device watch
  Then sign in as ada@example.com on the demo page and answer on the phone (README, "Quick start").

READY
wait "$server"

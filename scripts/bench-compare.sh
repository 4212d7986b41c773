#!/usr/bin/env bash
# Measures two builds of the server side by side on this machine, alternating them, and prints the
# median of each figure: bare GET /healthz server CPU per request (wrk -t1 -c16 -d10s), and web_login
# complete flows (16 browsers, SQLite, a fresh database each run): flows/s, server CPU per flow and the
# resume p99. Speed is compared, never asserted.
#
# Usage: scripts/bench-compare.sh OLD_COUNTERSIGN NEW_COUNTERSIGN BENCH [ROUNDS]
#   OLD_COUNTERSIGN, NEW_COUNTERSIGN: release binaries of `countersign` (each beside its .resources)
#   BENCH: one `countersign-bench` drives both, so the load is the same
#   ROUNDS: how many times each build runs each measure (default 3)
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 OLD_COUNTERSIGN NEW_COUNTERSIGN BENCH [ROUNDS]" >&2
  exit 2
fi
builds=("$1" "$2")
bench=$3
rounds=${4:-3}
work=$(mktemp -d /tmp/bench-compare.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=18190

# Starts build $1 on a fresh SQLite database; sets pid.
start() {
  rm -f "$work"/db.sqlite*
  COUNTERSIGN_DATABASE_URL="$work/db.sqlite" COUNTERSIGN_PORT=$port COUNTERSIGN_START_RATE_PER_ADDRESS=0 \
    COUNTERSIGN_START_RATE_PER_CLIENT=0 "$1" serve --dev >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the server did not start: $(cat "$work/server.log")" >&2
  exit 1
}

stop() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

for round in $(seq 1 "$rounds"); do
  for which in 0 1; do
    name=$([ $which = 0 ] && echo old || echo new)
    start "${builds[$which]}"
    before=$(ticks "$pid")
    requests=$(wrk -t1 -c16 -d10s "http://127.0.0.1:$port/healthz" | awk '/requests in/ {print $1}')
    after=$(ticks "$pid")
    stop
    echo "$name healthz_us $(awk -v t=$((after - before)) -v r="$requests" 'BEGIN { printf "%.1f", t * 10000 / r }')" | tee -a "$work/figures"

    start "${builds[$which]}"
    "$bench" --server "http://127.0.0.1:$port" --server-pid "$pid" --browsers 16 --warmup 5 --duration 20 \
      --journey web_login --json >"$work/flows.json" 2>"$work/bench.log"
    stop
    python3 - "$name" "$work/flows.json" <<'PY' | tee -a "$work/figures"
import json, sys
name, path = sys.argv[1], sys.argv[2]
result = json.load(open(path))
print(f"{name} flows_per_second {result['flows_per_second']:.1f}")
print(f"{name} server_cpu_ms_per_flow {result['server_cpu_ms_per_flow']:.2f}")
print(f"{name} resume_p99_ms {result['resume_ms']['p99']:.1f}")
PY
  done
done

echo "== medians of $rounds rounds (new ÷ old)"
python3 - "$work/figures" <<'PY'
import statistics, sys
figures = {}
for line in open(sys.argv[1]):
    name, measure, value = line.split()
    figures.setdefault(measure, {}).setdefault(name, []).append(float(value))
for measure, by_build in figures.items():
    old, new = statistics.median(by_build["old"]), statistics.median(by_build["new"])
    print(f"{measure}: old {old:g}, new {new:g}, ratio {new / old:.2f}")
PY

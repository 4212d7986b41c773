#!/usr/bin/env bash
# Server CPU per request of the costliest bodies a stranger can send, beside GET /healthz's: the bound
# that strict JSON keeps (docs/BENCHMARKS.md). Usage: scripts/bench-anonymous.sh [BINARY] [SECONDS]
# with a release build (`swift build -c release`). Needs wrk.
set -euo pipefail
binary=${1:-.build/release/countersign}
seconds=${2:-10}
port=18093
work=$(mktemp -d /tmp/countersign-anonymous.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

COUNTERSIGN_DATABASE_URL="$work/db.sqlite" COUNTERSIGN_PORT=$port COUNTERSIGN_START_RATE_PER_ADDRESS=0 \
  COUNTERSIGN_START_RATE_PER_CLIENT=0 "$binary" serve --dev >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

# Each body: a name, then the JSON. The nested ones are refused by the strict check; the others are as large
# as a request may be, at the bounds of depth (16) and values (256), sent with an unknown client (401) and
# with the demo's public web client, which anyone can read in its page (a start, stored); `start` is a
# start's plain body, for comparison.
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
def nested(depth): return "[" * depth + "]" * depth
bodies = {
    "nested-500": '{"client_id":"nope","additional_params":{"x":%s}}' % nested(500),
    "nested-500-x15": '{"client_id":"nope","additional_params":{%s}}' % ",".join('"x%d":%s' % (i, nested(500)) for i in range(15)),
    "values-256": '{"client_id":"nope","additional_params":{"x":[%s]}}' % ",".join(["[]"] * 252),
    "depth-16": '{"client_id":"nope","additional_params":{"x":[%s]}}' % ",".join([nested(13)] * 19),
    "escapes-16k": '{"client_id":"nope","additional_params":{"x":"%s"}}' % ("\\u00e9" * 2600),
    "start": '{"client_id":"demo-web"}',
    "start-values-256": '{"client_id":"demo-web","additional_params":{"x":[%s]}}' % ",".join(["[]"] * 252),
}
for name, body in bodies.items():
    assert len(body) <= 16384, (name, len(body))
    with open(f"{work}/{name}.lua", "w") as script:
        script.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [==[%s]==]\n' % body)
    print(name, len(body), file=open(f"{work}/sizes", "a"))
PY

measure() {  # name, path, [script]
  local before after requests
  before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  requests=$(wrk -t1 -c16 -d"${seconds}s" ${3:+-s "$3"} "http://127.0.0.1:$port$2" | awk '/requests in/ {print $1}')
  after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  printf '%-16s %8s requests  %7.1f µs of server CPU each\n' "$1" "$requests" "$(echo "($after - $before) * 10000 / $requests" | bc -l)"
}

echo "body sizes (bytes):"; sed 's/^/  /' "$work/sizes"
measure healthz /healthz
for name in nested-500 nested-500-x15 values-256 depth-16 escapes-16k start start-values-256; do
  measure "$name" /v1/journeys/web_login/start "$work/$name.lua"
done

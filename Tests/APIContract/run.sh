#!/usr/bin/env bash
# Contract tests: checks that Sources/CountersignServer/HTTP/OpenAPI/openapi.json is a valid OpenAPI
# document, starts a development server on a free port (its own temporary directory and database, a known
# admin key and metrics token), waits for /readyz, seeds it (seed.py), and fuzzes every operation with
# schemathesis: no 5xx answers, and every answer conforms to the document (status code, content type,
# headers, body schema); operations that need the admin key refuse requests without it. Examples,
# coverage, fuzzing and stateful (link) phases, a fixed seed and a bounded number of examples.
#
# Usage: Tests/APIContract/run.sh [COUNTERSIGN_BIN] [VENV]
#   COUNTERSIGN_BIN  the countersign executable (or the environment variable of that name)
#   VENV             the virtualenv to install into and use (default: .build/contract-venv)
# Environment: CONTRACT_SEED (default 20261123), CONTRACT_MAX_EXAMPLES (per operation, default 100),
# CONTRACT_STATEFUL_EXAMPLES (chains of linked calls, default 200), CONTRACT_REPORT_DIR (when set:
# every request and answer as HAR, the JSON reports and the server's log are kept there).
#
# Prints `Contract: N cases, F failures` and exits non-zero on any failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:-${COUNTERSIGN_BIN:-}}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "usage: $0 <countersign executable> [venv]   (or set COUNTERSIGN_BIN)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
venv=${2:-$repo/.build/contract-venv}
spec=$repo/Sources/CountersignServer/HTTP/OpenAPI/openapi.json
seed=${CONTRACT_SEED:-20261123}
max_examples=${CONTRACT_MAX_EXAMPLES:-100}
stateful_examples=${CONTRACT_STATEFUL_EXAMPLES:-200}

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# Absolute: the runs below start in the server's directory.
venv=$(cd "$venv" && pwd)
# Installs only what is missing or pinned differently (a no-op once the pins are met).
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"

echo "==> validating $spec"
"$venv/bin/openapi-spec-validator" "$spec"

work=$(mktemp -d /tmp/countersign-contract.XXXXXX)
server_pid=
watcher_pid=
stop() {
  local status=$?
  for pid in $watcher_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "${CONTRACT_REPORT_DIR:-}" ]; then
    mkdir -p "$CONTRACT_REPORT_DIR"
    cp "$work"/*.log "$work"/*.json "$CONTRACT_REPORT_DIR"/ 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
    echo "==> last lines of the server's log"
    tail -n 40 "$work/server.log"
  fi
  rm -rf "$work"
  exit "$status"
}
trap stop EXIT

port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
admin_key=contract-$("$venv/bin/python" -c 'import secrets; print(secrets.token_hex(16))')
metrics_token=metrics-$("$venv/bin/python" -c 'import secrets; print(secrets.token_hex(16))')
base=http://127.0.0.1:$port

echo "==> starting countersign serve --dev on $base"
# No start rate limits and no limit on wrong admin keys: the run starts journeys faster than a person
# would and sends requests without the key to check each is refused, and a limit that cuts in at a moment
# that depends on timing would make runs differ. The 429 answers are still in the contract.
(
  cd "$work"
  export COUNTERSIGN_HOST=127.0.0.1 COUNTERSIGN_PORT=$port COUNTERSIGN_ADMIN_KEY=$admin_key
  export COUNTERSIGN_METRICS_TOKEN=$metrics_token COUNTERSIGN_JOURNEYS_DIR=$repo/journeys COUNTERSIGN_DATABASE_URL=$work/countersign.sqlite
  export COUNTERSIGN_MASTER_KEY_FILE=$work/countersign.master-key
  export COUNTERSIGN_START_RATE_PER_CLIENT=0 COUNTERSIGN_START_RATE_PER_ADDRESS=0 COUNTERSIGN_ADMIN_FAILURES_PER_MINUTE=0
  exec "$bin" serve --dev
) >"$work/server.log" 2>&1 &
server_pid=$!

echo "==> seeding"
CONTRACT_METRICS_TOKEN=$metrics_token \
  "$venv/bin/python" "$here/seed.py" "$base" "$admin_key" "$bin" "$work" "$seed" "$max_examples" "$stateful_examples"

# The seeded phone approves whatever reaches it while the run lasts, so that event streams end with an
# event (requests that need the web code typed on the phone stay pending).
"$bin" device watch --auto-approve --profile "$work/phone" >"$work/phone.log" 2>&1 &
watcher_pid=$!

version=$("$venv/bin/schemathesis" --version | awk '{print $NF}')
# Two passes: every operation in every phase, then chains of journey calls alone (among the admin
# operations' links they would rarely be walked). Each runs in the temporary directory: schemathesis keeps
# its cache and crash files in `.schemathesis/` under its working directory, which leaves with $work.
schemathesis_pass() {
  local name=$1
  shift
  (cd "$work" && "$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run "$spec" --url "$base" --no-color \
    --report "json${CONTRACT_REPORT_DIR:+,har}" --report-json-path "$work/report-$name.json" \
    --report-har-path "$work/requests-$name.har.json" "$@")
}
st_status=0
echo "==> schemathesis $version, seed $seed: every operation, at most $max_examples examples each, $stateful_examples linked scenarios"
schemathesis_pass all --phases examples,coverage,fuzzing,stateful || st_status=$?
echo "==> schemathesis $version, seed $seed: journeys, $stateful_examples linked scenarios"
schemathesis_pass journeys --phases stateful --include-path-regex '^/v1/' || st_status=$?

read -r cases failures < <("$venv/bin/python" - "$work/report-all.json" "$work/report-journeys.json" <<'PY'
import json, sys
cases = failures = 0
for path in sys.argv[1:]:
    try:
        report = json.load(open(path))
    except (OSError, ValueError):
        failures += 1  # a pass that wrote no report did not run
        continue
    generated = report["test_cases"]["generated"]
    if generated == 0:
        failures += 1  # a pass that generated nothing tested nothing
    cases += generated
    failures += sum(f.get("count", 1) for f in report.get("failures", [])) + len(report.get("errors", []))
print(cases, failures)
PY
)
echo "Contract: $cases cases, $failures failures"
[ "$st_status" -eq 0 ] && [ "$failures" -eq 0 ]

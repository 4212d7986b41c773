#!/usr/bin/env bash
# Runs every test of Countersign on a fresh machine: installs what the tests need (zlib1g-dev,
# libsqlite3-dev, libqrencode-dev and libjemalloc-dev to link, PostgreSQL, nginx, Node.js and npm, Chromium and its driver, zbar-tools to read QR codes back, Selenium in a virtualenv), runs the browser SDK's unit
# tests against the npm package it packs, builds and tests the Swift SDK's own package, builds the server once, builds the Android SDK with kotlinc and runs its JUnit tests against a development server, runs the whole Swift suite on SQLite, the demo web app's tests in headless
# Chromium, OpenID CIBA driven by a bank's backend written with joserfc, the API contract (openapi-spec-validator and schemathesis against a real server), a newcomer's first commands (the release archive run from a temporary
# directory, scripts/dev.sh from a clean clone, which builds the server once more), then the server suites again on a throwaway PostgreSQL cluster that this script starts and
# stops, with the tests of several instances on it (behind nginx among them), and OpenID CIBA on two instances.
set -euo pipefail
cd "$(dirname "$0")/.."
# What the checkout holds besides its commits before the run: the run must add nothing to it.
tree_before=$(git status --porcelain 2>/dev/null || true)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
dpkg -s zlib1g-dev >/dev/null 2>&1 || missing+=(zlib1g-dev)
dpkg -s libsqlite3-dev >/dev/null 2>&1 || missing+=(libsqlite3-dev)
dpkg -s libqrencode-dev >/dev/null 2>&1 || missing+=(libqrencode-dev)
dpkg -s libjemalloc-dev >/dev/null 2>&1 || missing+=(libjemalloc-dev)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
[ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v zbarimg >/dev/null 2>&1 || missing+=(zbar-tools)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3 python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> installing ${missing[*]}"
  # Keep the package from creating and starting its own cluster.
  as_root mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | as_root tee /etc/postgresql-common/createcluster.d/countersign-tests.conf >/dev/null
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

log_dir=$(mktemp -d /tmp/countersign-test-logs.XXXXXX)

echo "==> browser SDK: npm pack, installed as an app would, then its unit tests (node --test)"
sdk_package=$(mktemp -d /tmp/countersign-sdk.XXXXXX)
(cd Sources/CountersignServer/Browser/sdk && npm pack --silent --pack-destination "$sdk_package" >/dev/null)
rm -rf Tests/BrowserSDK/node_modules
npm install --silent --no-save --no-package-lock --offline --prefix Tests/BrowserSDK "$sdk_package"/*.tgz
rm -rf "$sdk_package"
node --test --test-reporter=tap Tests/BrowserSDK 2>&1 | tee "$log_dir/browser-sdk.tap"

echo "==> Swift SDK package (Clients/Swift): built and tested on its own, as a phone app depends on it"
(cd Clients/Swift && swift build --build-tests && swift test --skip-build) 2>&1 | tee "$log_dir/swift-sdk.log"

echo "==> building"
swift build --build-tests

echo "==> docs/CONFIGURATION.md lists what countersign serve --help prints"
scripts/check-configuration-doc.sh "$(swift build --show-bin-path)/countersign"

echo "==> Android SDK (Clients/Android): kotlinc build, JUnit 5 against a development server"
scripts/android-test.sh "$(swift build --show-bin-path)/countersign" 2>&1 | tee "$log_dir/android-sdk.txt"

echo "==> tests on SQLite"
swift test --skip-build 2>&1 | tee "$log_dir/sqlite.log"

echo "==> demo web app in headless Chromium (selenium)"
venv=.build/browser-tests-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# Installs only what is missing or pinned differently (a no-op once the pins are met).
"$venv/bin/pip" install -q --disable-pip-version-check -r Tests/BrowserDemo/requirements.txt
COUNTERSIGN_BIN="$(swift build --show-bin-path)/countersign" \
  "$venv/bin/python" -m unittest discover -s Tests/BrowserDemo -v 2>&1 | tee "$log_dir/browser.log"

echo "==> OpenID CIBA: a bank's backend (joserfc) against a real server, a simulated phone answering"
COUNTERSIGN_BIN="$(swift build --show-bin-path)/countersign" \
  "$venv/bin/python" -m unittest discover -s Tests/CIBA -v 2>&1 | tee "$log_dir/ciba.txt"

echo "==> API contract: the OpenAPI document validated, then schemathesis against a real server"
Tests/APIContract/run.sh "$(swift build --show-bin-path)/countersign" .build/contract-venv 2>&1 | tee "$log_dir/contract.txt"

echo "==> a newcomer's first commands: the release archive run from anywhere, scripts/dev.sh from a clean clone"
COUNTERSIGN_BIN_PATH="$(swift build --show-bin-path)" COUNTERSIGN_FIRST_RUN_CLONE=1 \
  python3 -m unittest discover -s Tests/FirstRun -v 2>&1 | tee "$log_dir/first-run.txt"

echo "==> tests on PostgreSQL"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
pg_port=${COUNTERSIGN_TEST_PG_PORT:-54329}
pg_dir=$(mktemp -d /tmp/countersign-pg.XXXXXX)
run_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
stop_pg() { run_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$pg_dir"; }
trap stop_pg EXIT
run_pg "$pg_bin/initdb" -D "$pg_dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 >/dev/null
# In the configuration file, so that a test's `pg_ctl start` or `restart` keeps them. No autovacuum: a
# worker on a test database keeps DROP DATABASE … WITH (FORCE) from removing it (only a superuser may
# end that worker), and the test databases live for seconds.
cat >>"$pg_dir/data/postgresql.conf" <<CONF
port = $pg_port
unix_socket_directories = '$pg_dir'
listen_addresses = '127.0.0.1'
fsync = off
synchronous_commit = off
max_connections = 200
autovacuum = off
CONF
# TLS with a certificate for localhost from an authority of the tests' own (COUNTERSIGN_TEST_PG_CA): the
# TLS tests reach the cluster with sslmode=require and that authority in sslrootcert. The suites' own URL
# says sslmode=disable.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=Countersign test authority" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
  -keyout "$pg_dir/ca.key" -out "$pg_dir/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
  -keyout "$pg_dir/data/server.key" -out "$pg_dir/server.csr" 2>/dev/null
openssl x509 -req -in "$pg_dir/server.csr" -CA "$pg_dir/ca.pem" -CAkey "$pg_dir/ca.key" -CAcreateserial -days 2 \
  -extfile <(printf "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth") -out "$pg_dir/data/server.crt" 2>/dev/null
chmod 600 "$pg_dir/data/server.key"
# A client certificate from the same authority for the role countersign_certified, which signs in with it
# alone, over TLS only (pg_hba.conf's `cert` method): the tests of sslcert and sslkey
# (COUNTERSIGN_TEST_PG_CLIENT_CERT and _KEY).
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=countersign_certified" \
  -keyout "$pg_dir/client.key" -out "$pg_dir/client.csr" 2>/dev/null
openssl x509 -req -in "$pg_dir/client.csr" -CA "$pg_dir/ca.pem" -CAkey "$pg_dir/ca.key" -CAcreateserial -days 2 \
  -extfile <(printf "extendedKeyUsage=clientAuth") -out "$pg_dir/client.pem" 2>/dev/null
chmod 600 "$pg_dir/client.key"
cp "$pg_dir/ca.pem" "$pg_dir/data/root.crt"
sed -i '1i hostssl all countersign_certified 127.0.0.1/32 cert\nhost all countersign_certified 127.0.0.1/32 reject' "$pg_dir/data/pg_hba.conf"
[ "$(id -u)" = 0 ] && chown postgres "$pg_dir/data/server.key" "$pg_dir/data/server.crt" "$pg_dir/data/root.crt"
printf "ssl = on\nssl_ca_file = 'root.crt'\n" >>"$pg_dir/data/postgresql.conf"
pg_ctl_command="$pg_bin/pg_ctl -D $pg_dir/data -l $pg_dir/log"
[ "$(id -u)" = 0 ] && pg_ctl_command="runuser -u postgres -- $pg_ctl_command"
run_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w start >/dev/null
run_pg "$pg_bin/psql" -q -h "$pg_dir" -p "$pg_port" -U postgres -v ON_ERROR_STOP=1 \
  -c "CREATE ROLE countersign LOGIN CREATEDB PASSWORD 'countersign'" \
  -c "CREATE DATABASE countersign OWNER countersign" \
  -c "CREATE ROLE countersign_certified LOGIN IN ROLE countersign" \
  -c "GRANT pg_read_all_stats TO countersign"
# One test at a time: every test runs a server with its own database and connection pool, and the
# whole suite at once would need more connections than one PostgreSQL cluster should hand out (and
# two of the several-instance tests stop and restart the cluster, through COUNTERSIGN_TEST_PG_CTL).
COUNTERSIGN_TEST_DATABASE_URL="postgres://countersign:countersign@127.0.0.1:$pg_port/countersign?sslmode=disable" \
COUNTERSIGN_TEST_PG_SOCKET="$pg_dir/.s.PGSQL.$pg_port" \
COUNTERSIGN_TEST_PG_CA="$pg_dir/ca.pem" \
COUNTERSIGN_TEST_PG_CLIENT_CERT="$pg_dir/client.pem" \
COUNTERSIGN_TEST_PG_CLIENT_KEY="$pg_dir/client.key" \
COUNTERSIGN_TEST_PG_CTL="$pg_ctl_command" \
  swift test --skip-build --no-parallel --filter CountersignServerTests --filter SeveralInstancesTests --filter LoadBalancerTests \
  2>&1 | tee "$log_dir/postgres.log"

echo "==> OpenID CIBA on PostgreSQL: two instances on each test's database"
COUNTERSIGN_BIN="$(swift build --show-bin-path)/countersign" \
COUNTERSIGN_CIBA_POSTGRES_URL="postgres://countersign:countersign@127.0.0.1:$pg_port" COUNTERSIGN_CIBA_PSQL="$pg_bin/psql" \
  "$venv/bin/python" -m unittest discover -s Tests/CIBA -v 2>&1 | tee "$log_dir/ciba-postgres.txt"

# Whatever a run writes goes under .build/, a temporary directory, or a name .gitignore lists.
tree_after=$(git status --porcelain 2>/dev/null || true)
if [ "$tree_after" != "$tree_before" ]; then
  echo "The test run left files in the checkout:" >&2
  diff <(printf '%s\n' "$tree_before") <(printf '%s\n' "$tree_after") >&2 || true
  exit 1
fi

# Every run passed (pipefail stops the script otherwise): print one total for all of them.
passed=$( (cat "$log_dir"/*.log | sed -n 's/.*Test run with \([0-9]*\) tests\{0,1\} in .* passed after.*/\1/p'
           sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$log_dir/browser.log" "$log_dir/ciba.txt" "$log_dir/ciba-postgres.txt" "$log_dir/first-run.txt"
           sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log_dir/browser-sdk.tap"
           sed -n 's/^\[ *\([0-9]*\) tests successful *\]$/\1/p' "$log_dir/android-sdk.txt") | awk '{ total += $1 } END { print total + 0 }')
echo "Total: ${passed} passed, 0 failed"
grep '^Contract:' "$log_dir/contract.txt"

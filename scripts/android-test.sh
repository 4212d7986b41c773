#!/usr/bin/env bash
# Builds the Android SDK (Clients/Android) with Debian's Kotlin compiler and runs its JUnit 5 tests: the
# shared vectors, the key store, the client against a scripted server, and the phone's flows against a
# real `countersign serve --dev` that this script starts on a free loopback port with its own temporary
# database, and stops. The Android-only classes (src/android) are compiled against the declared surface
# of the Android API in src/android-stubs: there is no Android SDK here, so they are compiled, not run.
# The integration code the server generates for each journey it loads (GET
# /admin/v1/journeys/{id}/integration-code?language=kotlin) is compiled against the library, all in one run.
#
# Usage: scripts/android-test.sh <countersign executable>
# Installs kotlin, libkotlinx-coroutines-java, libkotlinx-atomicfu-java, junit5 and
# libandroid-json-org-java when missing. Build output goes to Clients/Android/.build. Exits non-zero on
# any failure; the output ends with the JUnit console launcher's summary.
set -euo pipefail

bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "usage: $0 <countersign executable>" >&2
  exit 2
fi
# Absolute, and read from where the script was called.
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
cd "$(dirname "$0")/.."
repo=$(pwd)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
for package in kotlin libkotlinx-coroutines-java libkotlinx-atomicfu-java junit5 libandroid-json-org-java python3; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

sdk=$repo/Clients/Android
build=$sdk/.build
java_dir=/usr/share/java
# Android's own org.json (json-android.jar), so the JSON code that runs here is the code a phone runs.
deps=$java_dir/kotlinx-coroutines-core.jar:$java_dir/json-android.jar
test_deps=$java_dir/junit-jupiter-api.jar:$java_dir/apiguardian-api.jar:$java_dir/opentest4j.jar
run_deps=$deps:$java_dir/atomicfu.jar:$java_dir/kotlin-stdlib.jar
rm -rf "$build"
mkdir -p "$build/main" "$build/stubs" "$build/android" "$build/test"

# kotlinc 1.3 on JDK 17 warns about -Xverify:none at every start; that line says nothing about our code.
kotlin_compile() { kotlinc -jvm-target 1.8 "$@" 2> >(grep -v 'Xverify:none' >&2); }

echo "==> compiling the library (src/main)"
kotlin_compile -cp "$deps" -d "$build/main" "$sdk/src/main/kotlin"
echo "==> compiling the Android-only classes (src/android) against the declared Android API (src/android-stubs)"
javac -nowarn -d "$build/stubs" $(find "$sdk/src/android-stubs" -name '*.java' | sort)
kotlin_compile -cp "$deps:$build/main:$build/stubs" -d "$build/android" "$sdk/src/android/kotlin"
echo "==> compiling the tests (src/test)"
kotlin_compile -cp "$deps:$build/main:$test_deps" -d "$build/test" "$sdk/src/test/kotlin"
cp -R "$sdk/src/test/resources/." "$build/test/"

work=$(mktemp -d /tmp/countersign-android.XXXXXX)
server_pid=
stop() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop EXIT

admin_key=android-$(python3 -c 'import secrets; print(secrets.token_hex(16))')
# A free port is only free when chosen: a server that lost it to another process is started on another.
for attempt in 1 2 3 4 5; do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  echo "==> starting countersign serve --dev on $base"
  rm -rf "$work/server" && mkdir -p "$work/server"
  # No start rate limits: the tests start journeys faster than a person would.
  (
    cd "$work/server"
    export COUNTERSIGN_HOST=127.0.0.1 COUNTERSIGN_PORT=$port COUNTERSIGN_ADMIN_KEY=$admin_key
    export COUNTERSIGN_JOURNEYS_DIR=$repo/journeys COUNTERSIGN_DATABASE_URL=$work/server/countersign.sqlite
    export COUNTERSIGN_MASTER_KEY_FILE=$work/server/countersign.master-key
    export COUNTERSIGN_START_RATE_PER_CLIENT=0 COUNTERSIGN_START_RATE_PER_ADDRESS=0
    exec "$bin" serve --dev --port "$port"
  ) >"$work/server.log" 2>&1 &
  server_pid=$!
  started=
  for _ in $(seq 1 600); do
    if grep -q "Server started" "$work/server.log"; then started=yes; break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  [ -n "$started" ] && break
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=
  if ! grep -q "Address already in use" "$work/server.log"; then
    echo "countersign serve did not start:" >&2
    cat "$work/server.log" >&2
    exit 1
  fi
done
if [ -z "$server_pid" ]; then
  echo "countersign serve did not start (no free port)" >&2
  exit 1
fi

echo "==> compiling the integration code the server generates for every journey it loads (kotlinc, against src/main)"
# GET /admin/v1/journeys/{id}/integration-code?language=kotlin, as the console shows it. Each file declares a
# package of its own, so all of them compile in one run, against the library as an app compiles them.
integration=$work/integration
mkdir -p "$integration/src" "$integration/classes"
python3 - "$base" "$admin_key" "$integration/src" <<'PY'
import json, os, sys, urllib.parse, urllib.request

base, key, out = sys.argv[1:4]

def get(path):
    request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + key, "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.load(reply)

listed = get("/admin/v1/journeys")
journeys = listed if isinstance(listed, list) else listed.get("journeys", [])
if not journeys:
    sys.exit("GET /admin/v1/journeys listed no journey")
for index, journey in enumerate(journeys):
    answer = get("/admin/v1/journeys/%s/integration-code?language=kotlin" % urllib.parse.quote(journey["id"], safe=""))
    name = answer.get("filename", "")
    if answer.get("language") != "kotlin" or not name.endswith(".kt") or os.path.basename(name) != name:
        sys.exit("journey %s: unexpected answer %r" % (journey["id"], {k: answer.get(k) for k in ("language", "filename")}))
    # A folder per journey: two journeys' files may share a name, never a package.
    folder = os.path.join(out, "%03d" % index)
    os.makedirs(folder)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as file:
        file.write(answer["code"])
print("    %d journeys" % len(journeys))
PY
kotlin_compile -cp "$deps:$build/main" -d "$integration/classes" $(find "$integration/src" -name '*.kt' | sort)

echo "==> JUnit 5"
status=0
COUNTERSIGN_TEST_URL=$base COUNTERSIGN_TEST_ADMIN_KEY=$admin_key \
  java -jar "$java_dir/junit-platform-console-standalone.jar" --disable-banner --disable-ansi-colors \
  --include-engine=junit-jupiter --fail-if-no-tests \
  -cp "$build/main:$build/test:$run_deps" --scan-classpath "$build/test" >"$work/junit.txt" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  cat "$work/junit.txt"
  echo "==> last lines of the server's log"
  tail -n 40 "$work/server.log"
  echo "==> summary"
  grep -E '^\[ +[0-9]+ (tests|containers) ' "$work/junit.txt" || true
else
  cat "$work/junit.txt"
fi
exit "$status"

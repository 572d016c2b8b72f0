#!/usr/bin/env bash
# Runs every test suite of the repository and prints one closing line "N passed, M failed".
# Installs what the tests need on a fresh machine first: Debian's nats-server (the Go reference
# server the differential tests compare against), Debian's chromium (the browser WebSocket test),
# the node packages of the nats.js scenarios, clang (the Native AOT publish) and afl++ (the fuzz step, through scripts/fuzz.sh).
# Nothing is skipped silently: a missing tool is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

log() { printf '\n== %s\n' "$*"; }

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  log "installing Debian's nats-server (Go reference server)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq nats-server >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq nats-server >/dev/null
  fi
fi

# mosquitto_pub is an MQTT client the tests drive; the mosquitto broker is the MQTT 5 reference.
if ! command -v mosquitto_pub >/dev/null 2>&1 || ! command -v mosquitto >/dev/null 2>&1; then
  log "installing Debian's mosquitto and mosquitto-clients (MQTT tests, MQTT 5 reference broker)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq mosquitto mosquitto-clients >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq mosquitto mosquitto-clients >/dev/null
  fi
fi

# Debian's chromium: the WebSocket tests load the browser build of nats.js in a headless page.
if ! command -v chromium >/dev/null 2>&1; then
  log "installing Debian's chromium (headless browser for the WebSocket page test)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
  fi
fi

# nats.go (the Go project's client) publishes in the flow-control tests; built offline from Debian's source package.
if [ ! -d /usr/share/gocode/src/github.com/nats-io/nats.go ] || ! command -v go >/dev/null 2>&1; then
  log "installing Go and Debian's nats.go (golang-github-nats-io-go-nats-dev)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq golang-go golang-github-nats-io-go-nats-dev >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq golang-go golang-github-nats-io-go-nats-dev >/dev/null
  fi
fi

# nats.c (the C client) logs in with creds files in the operator-mode client tests; compiled with gcc.
if [ ! -f /usr/include/nats/nats.h ] || ! command -v gcc >/dev/null 2>&1; then
  log "installing gcc and Debian's nats.c (libnats-dev)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq gcc libnats-dev >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq gcc libnats-dev >/dev/null
  fi
fi

if [ -f tests/js/package.json ]; then
  log "installing nats.js scenario packages"
  npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
fi

# The /metrics tests parse scrapes with the Prometheus project's Python parser (Debian package, ~200 kB).
if ! /usr/bin/python3 -c 'import prometheus_client.openmetrics.parser' >/dev/null 2>&1; then
  log "installing Debian's python3-prometheus-client (Prometheus/OpenMetrics text parser)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq python3-prometheus-client >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq python3-prometheus-client >/dev/null
  fi
fi

# The server-level power-loss tests mount tests/tools/powercut-fs.py (FUSE, python3-fusepy on libfuse2, fusermount from fuse3).
if ! /usr/bin/python3 -c 'import fusepy' >/dev/null 2>&1 || ! command -v fusermount >/dev/null 2>&1; then
  log "installing Debian's python3-fusepy and fuse3 (power-cut file system of the JetStream power-loss tests)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq python3-fusepy fuse3 >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq python3-fusepy fuse3 >/dev/null
  fi
fi

log "building (Release)"
if ! dotnet build Nats.slnx -c Release -nologo -v quiet; then
  echo "build failed"
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0
status=0
# Names of failed tests and checks, repeated just above the closing line so that a log's tail says what failed.
failures=()
note_failures() {
  # VSTest prints "  Failed Namespace.Class.Method [12 s]" for each failed test.
  while IFS= read -r line; do failures+=("$line"); done < <(grep -E '^ +Failed [A-Za-z_]' "$1" | sed -E 's/^ +//')
}

# One style (.editorconfig): the build already fails on the :warning style rules; this also catches whitespace and
# using-order drift that the build does not report. Counted as one check.
log "dotnet format --verify-no-changes"
if dotnet format Nats.slnx --verify-no-changes --severity warn -v q; then
  passed=$((passed + 1))
else
  echo "dotnet format found files to reformat: run 'dotnet format Nats.slnx --severity warn' and commit"
  failures+=("dotnet format")
  failed=$((failed + 1))
  status=1
fi
for project in tests/*/*.csproj samples/*/*.csproj; do
  name=$(basename "$project" .csproj)
  log "$name"
  out=$(mktemp)
  dotnet test "$project" -c Release --no-build --nologo 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  # VSTest's summary: "Passed!  - Failed:     0, Passed:    70, Skipped: ..."
  summary=$(grep -E '(Passed|Failed)! +- Failed: +[0-9]+, Passed: +[0-9]+' "$out" | tail -1)
  if [ -n "$summary" ]; then
    f=$(sed -E 's/.*Failed: +([0-9]+),.*/\1/' <<<"$summary")
    p=$(sed -E 's/.*Passed: +([0-9]+),.*/\1/' <<<"$summary")
    passed=$((passed + p))
    failed=$((failed + f))
  fi
  if [ "$rc" -ne 0 ]; then
    status=1
    [ -z "$summary" ] && failed=$((failed + 1))
    note_failures "$out"
    failures+=("($name exited $rc)")
  fi
  rm -f "$out"
done

# The Native AOT executable is what README's run command and the benchmark run: publish it, then run a subset of the
# integration tests against it (NATS_SERVER_EXE makes the tests start that executable instead of hosting the server
# in-process): version flags and signals, the acceptance scenario next to Go (NATS.Net core, JetStream, KV, /varz,
# bad input), NATS.Net JetStream, duplicate PubAcks and resent QoS 2 PUBLISHes on the power-cut file system,
# kill -9 during publishes.
if { ! command -v clang >/dev/null 2>&1 && ! command -v clang-14 >/dev/null 2>&1; } || [ ! -e /usr/include/zlib.h ]; then
  log "installing clang and zlib1g-dev (Native AOT linker prerequisites)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq clang zlib1g-dev >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq clang zlib1g-dev >/dev/null
  fi
fi
log "Native AOT: dotnet publish, then integration tests against the executable"
aot_dir=$(mktemp -d)
aot_start=$(date +%s)
if dotnet publish -c Release -r linux-x64 src/Nats.Server.App/Nats.Server.App.csproj -o "$aot_dir" -nologo -v quiet \
    && "$aot_dir/nats-net-server" --version; then
  echo "published in $(( $(date +%s) - aot_start )) s"
  out=$(mktemp)
  NATS_SERVER_EXE="$aot_dir/nats-net-server" dotnet test tests/Nats.Server.IntegrationTests/Nats.Server.IntegrationTests.csproj \
    -c Release --no-build --nologo \
    --filter "FullyQualifiedName~Operations.ExecutableAcceptanceTests|FullyQualifiedName~Operations.ExecutableTests|FullyQualifiedName~JetStream.NatsNetJetStreamTests|FullyQualifiedName~JetStream.DuplicatePublishTests|FullyQualifiedName~PowerLoss.DuplicateAckDurabilityTests|FullyQualifiedName~Mqtt.MqttQos2DurabilityTests|FullyQualifiedName~JetStream.JetStreamCrashTests" \
    2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  summary=$(grep -E '(Passed|Failed)! +- Failed: +[0-9]+, Passed: +[0-9]+' "$out" | tail -1)
  if [ -n "$summary" ]; then
    passed=$((passed + $(sed -E 's/.*Passed: +([0-9]+).*/\1/' <<<"$summary")))
    failed=$((failed + $(sed -E 's/.*Failed: +([0-9]+),.*/\1/' <<<"$summary")))
  fi
  if [ "$rc" -ne 0 ]; then
    status=1
    [ -z "$summary" ] && failed=$((failed + 1))
    note_failures "$out"
    failures+=("(Native AOT integration subset exited $rc)")
  fi
  rm -f "$out"
  echo "Native AOT step: $(( $(date +%s) - aot_start )) s"
else
  echo "Native AOT publish failed"
  failures+=("Native AOT publish")
  failed=$((failed + 1))
  status=1
fi
rm -rf "$aot_dir"

# Coverage-guided fuzzing of the parsers (docs/FUZZING.md): afl++ (installed by the script when missing) on each target
# for 20 s from its seed corpus; a crash or hang fails the step and prints the input. Counted as one check.
log "fuzz: protocol, config, websocket, mqtt, jsapi (20 s each)"
if bash scripts/fuzz.sh --budget 20 --no-build; then
  passed=$((passed + 1))
else
  failures+=("fuzz")
  failed=$((failed + 1))
  status=1
fi

log "dotnet pack, then install the nats-net-server tool from the local folder and run it"
if bash scripts/tool-smoke.sh; then
  passed=$((passed + 1))
else
  failures+=("tool smoke")
  failed=$((failed + 1))
  status=1
fi

if [ -f scripts/bench.sh ]; then
  log "benchmark harness smoke run (message counts only, no timings asserted)"
  if bash scripts/bench.sh --smoke; then
    passed=$((passed + 1))
  else
    failures+=("bench smoke")
    failed=$((failed + 1))
    status=1
  fi
fi

echo
if [ "${#failures[@]}" -gt 0 ]; then
  echo "what failed:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
exit $status

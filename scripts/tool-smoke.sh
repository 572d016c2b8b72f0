#!/usr/bin/env bash
# Packs the NuGet packages (library and dotnet tool) from the Release build, checks their contents,
# installs the nats-net-server tool from the local folder only (an empty package cache, a tool path in
# a temp dir) and runs it: -v, start, a client round trip, SIGINT, exit code 0.
# Run after `dotnet build Nats.slnx -c Release`; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "tool-smoke: $*" >&2; [ -f "$tmp/server.log" ] && cat "$tmp/server.log" >&2; exit 1; }

dotnet pack Nats.slnx -c Release --no-build -nologo -v quiet -o "$tmp/artifacts" >/dev/null || fail "dotnet pack failed"
server_pkg=$(ls "$tmp"/artifacts/Nats.Server.[0-9]*.nupkg)
tool_pkg=$(ls "$tmp"/artifacts/nats-net-server.[0-9]*.nupkg)
ls "$tmp"/artifacts/Nats.Storage.[0-9]*.nupkg "$tmp"/artifacts/Nats.Subjects.[0-9]*.nupkg "$tmp"/artifacts/Nats.Server.NatsNet.[0-9]*.nupkg >/dev/null \
  || fail "Nats.Storage, Nats.Subjects or Nats.Server.NatsNet package missing"

listing=$(/usr/bin/python3 -m zipfile -l "$server_pkg")
for entry in README.md lib/net10.0/Nats.Server.dll lib/net10.0/Nats.Server.xml; do
  grep -q " *$entry " <<<"$listing" || grep -q "^$entry" <<<"$listing" || fail "$entry missing from $(basename "$server_pkg")"
done
if grep -qiE 'test|bench' <<<"$(grep -o '^[^ ]*\.dll' <<<"$listing")"; then fail "test or benchmark code in $(basename "$server_pkg")"; fi
nuspec=$(/usr/bin/python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read("Nats.Server.nuspec").decode())' "$server_pkg")
grep -q '<license type="expression">' <<<"$nuspec" || fail "no license expression in the Nats.Server nuspec"

version=$(basename "$tool_pkg" .nupkg); version=${version#nats-net-server.}
# An empty package cache: the install can only come from the local folder.
NUGET_PACKAGES="$tmp/packages" dotnet tool install --tool-path "$tmp/tools" --add-source "$tmp/artifacts" \
  nats-net-server --version "$version" >/dev/null || fail "dotnet tool install failed"
tool="$tmp/tools/nats-net-server"

[ "$("$tool" -v)" = "nats-server: v2.9.10" ] || fail "-v did not print Go's version line"

# SIGINT back to its default first: when this script itself runs with SIGINT ignored (started in the
# background by a non-interactive shell), the tool inherits the ignore and the runtime never sees the signal.
perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die "exec: $!"' "$tool" -a 127.0.0.1 -p -1 -m -1 >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "Server is ready" "$tmp/server.log" && break
  kill -0 "$pid" 2>/dev/null || fail "the tool exited during startup"
  sleep 0.1
done
port=$(sed -nE 's/.*Listening for client connections on 127\.0\.0\.1:([0-9]+).*/\1/p' "$tmp/server.log" | head -1)
[ -n "$port" ] || fail "no client port in the log"

# A client round trip over bash's /dev/tcp: subscribe, publish to ourselves, PING.
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'CONNECT {"verbose":false}\r\nSUB smoke 1\r\nPUB smoke 5\r\nhello\r\nPING\r\n' >&3
reply=""
while IFS= read -r -t 30 line <&3; do
  reply+="$line"$'\n'
  [[ "$line" == PONG* ]] && break
done
exec 3>&-
grep -q "^MSG smoke 1 5" <<<"$reply" || fail "no MSG back from the tool's server: $reply"

kill -INT "$pid"
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "still running 30 s after SIGINT ($(grep -E "^(State|SigBlk|SigIgn|SigCgt)" /proc/$pid/status | tr "\n\t" "  "))"
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" -eq 0 ] || fail "exit code $rc after SIGINT (want 0)"
grep -q "Server Exiting" "$tmp/server.log" || fail "no orderly shutdown in the log"
echo "tool-smoke: packed $(basename "$server_pkg"), $(basename "$tool_pkg"); installed from the local folder; ran, served a client, stopped with exit 0"

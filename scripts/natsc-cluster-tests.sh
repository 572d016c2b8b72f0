#!/usr/bin/env bash
# Runs nats.c's own tests that start clusters (test/test.c: servers started with -cluster/-routes) against
# Go's nats-server and against ours, and prints one line per test and server: "go|ours NAME PASS|FAIL".
# nats.c's test suite is built from the nats.c source of the version Debian's libnats-dev has (v3.4.1):
# NATS_C_SRC names an unpacked source tree, otherwise it is cloned from GitHub. Ours is put on the suite's
# NATS_TEST_SERVER_EXE as a shim that execs the Release build (the same PID, so the suite's SIGINT reaches it).
# The tests use nats.c's fixed ports (4222-4224, 5222-5224, 6222-6224, 4443-4444): run it alone.
# Run after `dotnet build Nats.slnx -c Release`. Exits non-zero when a test passes on Go and fails on ours.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

tests=(GetServers GetDiscoveredServers DiscoveredServersCb IgnoreDiscoveredServers ServerPoolUpdatedOnClusterUpdate
  GetClientID SSLReconnectWithAuthError ReconnectImplicitUserInfo)

work=${NATS_C_WORK:-$(mktemp -d /tmp/natsc-cluster-XXXXXX)}
src=${NATS_C_SRC:-$work/nats.c}
if [ ! -f "$src/test/test.c" ]; then
  git clone -q --depth 1 --branch v3.4.1 https://github.com/nats-io/nats.c "$src" || { echo "cannot get nats.c v3.4.1" >&2; exit 2; }
fi
build=$work/build
if [ ! -x "$build/test/testsuite" ]; then
  cmake -S "$src" -B "$build" -DNATS_BUILD_STREAMING=OFF -DNATS_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log" >&2; exit 2; }
  cmake --build "$build" --target testsuite -j 1 >"$work/build.log" 2>&1 || { tail -50 "$work/build.log" >&2; exit 2; }
fi

# The suite's test index of each name: its line in test/list.txt, from 0 (as nats.c's CMake numbers them).
index_of() {
  local n
  n=$(grep -n -x "$1" "$src/test/list.txt" | cut -d: -f1)
  [ -n "$n" ] && echo $((n - 1))
}

dll=$repo/src/Nats.Server.App/bin/Release/net10.0/nats-net-server.dll
[ -f "$dll" ] || { echo "$dll is missing: build Release first" >&2; exit 2; }
shim=$work/ours-nats-server
printf '#!/bin/sh\nexec dotnet %s "$@"\n' "$dll" >"$shim"
chmod +x "$shim"
go=$(command -v nats-server || echo /usr/sbin/nats-server)

regressions=0
for name in "${tests[@]}"; do
  i=$(index_of "$name")
  [ -n "$i" ] || { echo "no test $name in test.c" >&2; exit 2; }
  declare -A result=()
  for kind in go ours; do
    exe=$go
    [ "$kind" = ours ] && exe=$shim
    # The suite reads certs/ and writes its server log in the current directory.
    (cd "$src/test" && NATS_TEST_SERVER_EXE=$exe timeout 300 "$build/test/testsuite" "$i" "$i") >"$work/$kind-$name.log" 2>&1
    if [ $? -eq 0 ] && ! grep -q "FAILED" "$work/$kind-$name.log"; then result[$kind]=PASS; else result[$kind]=FAIL; fi
    echo "$kind $name ${result[$kind]}"
  done
  if [ "${result[go]}" = PASS ] && [ "${result[ours]}" = FAIL ]; then
    regressions=$((regressions + 1))
    tail -30 "$work/ours-$name.log"
  fi
  unset result
done
echo "logs in $work"
exit $((regressions > 0))

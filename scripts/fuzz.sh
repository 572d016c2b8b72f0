#!/usr/bin/env bash
# Coverage-guided fuzzing of the parsers (docs/FUZZING.md): builds fuzz/Nats.Fuzz, instruments a copy of its
# Nats.Server.dll with SharpFuzz, and runs afl-fuzz on each target for a fixed budget, starting from its seed corpus
# (fuzz/corpus/<target>). Fails when a target crashed (threw anything but its parser's documented error, or broke an
# oracle invariant) or hung, and prints each such input (hex) with the exception replayed outside afl.
#   scripts/fuzz.sh [--budget SECONDS] [--out DIR] [--no-build] [target...]   (targets: protocol config websocket mqtt jsapi)
# --out keeps afl's output directories (queue, crashes, hangs) there instead of a temp dir removed at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

budget=60
out=""
build=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(protocol config websocket mqtt jsapi)

if ! command -v afl-fuzz >/dev/null 2>&1; then
  echo "installing Debian's afl++ (afl-fuzz)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq afl++ >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq afl++ >/dev/null
  fi
fi
command -v afl-fuzz >/dev/null 2>&1 || { echo "fuzz: afl-fuzz is not available"; exit 1; }
dotnet tool restore >/dev/null || { echo "fuzz: dotnet tool restore (SharpFuzz.CommandLine) failed"; exit 1; }

if [ "$build" = 1 ]; then
  if ! dotnet build fuzz/Nats.Fuzz/Nats.Fuzz.csproj -c Release -nologo -v quiet >"${TMPDIR:-/tmp}/nats-fuzz-build.$$.log" 2>&1; then
    cat "${TMPDIR:-/tmp}/nats-fuzz-build.$$.log"; rm -f "${TMPDIR:-/tmp}/nats-fuzz-build.$$.log"
    echo "fuzz: build failed"; exit 1
  fi
  rm -f "${TMPDIR:-/tmp}/nats-fuzz-build.$$.log"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] && mkdir -p "$out"
# The instrumented copy lives apart from the build output, which the tests and the server keep using uninstrumented.
cp -r fuzz/Nats.Fuzz/bin/Release/net10.0 "$work/bin"
dotnet sharpfuzz "$work/bin/Nats.Server.dll" >/dev/null || { echo "fuzz: SharpFuzz instrumentation failed"; exit 1; }
harness=(dotnet "$work/bin/Nats.Fuzz.dll")

# Not a dedicated machine: no CPU pinning, no core_pattern or governor changes, no terminal UI.
export AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_FORKSRV_INIT_TMOUT=60000 AFL_QUIET=1

status=0
for target in "${targets[@]}"; do
  [ -d "fuzz/corpus/$target" ] || { echo "fuzz: unknown target $target (no fuzz/corpus/$target)"; status=1; continue; }
  findings="${out:-$work}/$target"
  rm -rf "$findings"
  echo "== fuzz $target: ${budget} s"
  # -t: one input may take 5 s before it counts as a hang (a busy 2-core machine, the JIT); hangs are replayed below.
  timeout -k 10 $((budget + 120)) afl-fuzz -i "fuzz/corpus/$target" -o "$findings" -t 5000 -m none -V "$budget" \
    -- "${harness[@]}" "$target" >"$work/$target.log" 2>&1
  rc=$?
  stats="$findings/default/fuzzer_stats"
  if [ ! -f "$stats" ]; then
    echo "fuzz: afl-fuzz did not run ($rc):"; tail -30 "$work/$target.log"; status=1; continue
  fi
  execs=$(sed -n 's/^execs_done *: *//p' "$stats")
  paths=$(sed -n 's/^corpus_count *: *//p' "$stats")
  edges=$(sed -n 's/^edges_found *: *//p' "$stats")
  echo "   $execs executions, corpus $paths, edges $edges"
  failed=0
  for crash in "$findings"/default/crashes/id:*; do
    [ -f "$crash" ] || continue
    failed=1
    echo "-- crash: $(basename "$crash")"; xxd "$crash" | head -40
    timeout 60 dotnet fuzz/Nats.Fuzz/bin/Release/net10.0/Nats.Fuzz.dll "$target" --replay "$crash" | head -40
  done
  for hang in "$findings"/default/hangs/id:*; do
    [ -f "$hang" ] || continue
    # afl's timeout can fire on a loaded machine: a hang counts when it also takes over 30 s on its own.
    if timeout 30 dotnet fuzz/Nats.Fuzz/bin/Release/net10.0/Nats.Fuzz.dll "$target" --replay "$hang" >/dev/null 2>&1; then
      echo "-- slow under afl, not a hang on its own: $(basename "$hang")"
      continue
    fi
    failed=1
    echo "-- hang: $(basename "$hang")"; xxd "$hang" | head -40
  done
  if [ "$failed" = 1 ]; then
    echo "fuzz $target: FAILED"
    status=1
  else
    echo "fuzz $target: no crash, no hang"
  fi
done
exit $status

#!/usr/bin/env bash
# End-to-end benchmark: Go nats-server vs ours, measured alternately in one run.
#   bash scripts/bench.sh                    full run: all rows, writes BENCHMARKS.md region + bench-results.json
#   bash scripts/bench.sh --smoke            every row briefly, verifies message counts (CI)
#   bash scripts/bench.sh --row pubsub-16b   one row (comma-separate several; --list shows names)
# Other flags: --rounds N, --duration SEC, --ours-cmd "CMD", --go-cmd "CMD", --md FILE, --json FILE.
# Our server is measured as the Native AOT executable (what README's run command publishes), falling
# back to the JIT build if the AOT publish fails; --jit measures the JIT build. --smoke uses the JIT
# build (it checks counts, and an AOT publish takes minutes); --aot makes it use the AOT executable.
set -euo pipefail
cd "$(dirname "$0")/.."

command_line="$*"
args=()
smoke=0
custom_ours=0
mode=""
for a in "$@"; do
  case "$a" in
    --smoke) smoke=1 ;;
    --ours-cmd) custom_ours=1 ;;
  esac
  case "$a" in
    --aot) mode=aot ;;
    --jit) mode=jit ;;
    *) args+=("$a") ;;
  esac
done
if [[ -z "$mode" ]]; then
  if [[ $smoke -eq 1 ]]; then mode=jit; else mode=aot; fi
fi

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
if [[ $custom_ours -eq 0 ]]; then
  # Our server is always measured as a Release build. A build failure is reported, and the
  # harness then shows "not implemented" for ours instead of stopping the Go measurements.
  if ! dotnet build -c Release src/Nats.Server.App/Nats.Server.App.csproj -nologo -v quiet; then
    echo "warning: Release build of src/Nats.Server.App failed; ours will show as not implemented" >&2
  fi
  if [[ $mode == aot ]]; then
    case "$(uname -m)" in aarch64|arm64) rid=linux-arm64 ;; *) rid=linux-x64 ;; esac
    aot_dir=src/Nats.Server.App/bin/Release/net10.0/$rid/publish
    if dotnet publish -c Release -r "$rid" src/Nats.Server.App/Nats.Server.App.csproj -nologo -v quiet -o "$aot_dir" \
        && [[ -x "$aot_dir/nats-net-server" ]]; then
      args=(--ours-cmd "$aot_dir/nats-net-server" "${args[@]}")
    else
      echo "warning: Native AOT publish of src/Nats.Server.App failed (clang missing?); measuring the JIT build" >&2
    fi
  fi
fi
dotnet build -c Release bench/Nats.LoadBench/Nats.LoadBench.csproj -nologo -v quiet

extra=()
if [[ $smoke -eq 0 ]]; then
  # Full runs publish their results; smoke and single-row runs only print unless asked.
  has_row=0
  for a in "${args[@]}"; do [[ "$a" == "--row" ]] && has_row=1; done
  if [[ $has_row -eq 0 ]]; then
    extra+=(--md BENCHMARKS.md --json bench-results.json)
  fi
fi

export LOADBENCH_COMMAND="bash scripts/bench.sh${command_line:+ $command_line}"
exec dotnet bench/Nats.LoadBench/bin/Release/net10.0/nats-loadbench.dll "${extra[@]}" "${args[@]}"

#!/usr/bin/env bash
# How large an R3 stream's RAFT log grows (issue #26, log compaction): three servers of one kind on loopback, each
# its own store, an R3 file stream created through server A and COUNT messages of SIZE bytes published to it with
# nats.go PublishAsync (256 in flight); then per server the stream group's RAFT directory on disk (du), the whole
# store, and VmRSS. Run it once per server kind.
#   bash scripts/r3-log-probe.sh --cmd "dotnet src/Nats.Server.App/bin/Release/net10.0/nats-net-server.dll" [--count 1000000] [--size 128]
#   bash scripts/r3-log-probe.sh --cmd nats-server
set -euo pipefail
cd "$(dirname "$0")/.."
count=1000000 size=128 cmd="" base=${TMPDIR:-/tmp}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --count) count=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --dir) base=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$cmd" ]] || { echo "--cmd is required" >&2; exit 2; }
probe=$(mktemp -d "$base/r3-log-probe.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$probe"; }
trap cleanup EXIT
GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$probe/jsscale" ./bench/go/jsscale/main.go

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/VmRSS/ { printf "%.1f", $2/1024 }' "/proc/$1/status"; }
names=(A B C)
declare -A client route
for n in "${names[@]}"; do client[$n]=$(free_port); route[$n]=$(free_port); done
for n in "${names[@]}"; do
  routes=""
  for m in "${names[@]}"; do [[ $m == "$n" ]] || routes+="\"nats-route://127.0.0.1:${route[$m]}\", "; done
  mkdir -p "$probe/$n/store"
  cat > "$probe/$n/server.conf" <<CONF
server_name: $n
jetstream { store_dir: "$probe/$n/store" }
accounts { SYS { users: [{ user: sys, password: pass }] }, APP { jetstream: enabled, users: [{ user: app, password: pass }] } }
system_account: SYS
cluster { name: PROBE, listen: "127.0.0.1:${route[$n]}", routes: [${routes%, }] }
CONF
  $cmd -a 127.0.0.1 -p "${client[$n]}" -c "$probe/$n/server.conf" > "$probe/$n/server.log" 2>&1 &
  pids+=($!)
done
"$probe/jsscale" publish "nats://app:pass@127.0.0.1:${client[A]}" R3LOG "$count" "$size" 1 3
sleep 5
echo "| Server | RAFT dir of the stream group (MiB) | Files | Store (MiB) | VmRSS (MiB) |"
echo "|---|---|---|---|---|"
i=0
for n in "${names[@]}"; do
  group=$(find "$probe/$n/store" -type d -name 'S-R3*' | head -1)
  echo "| $n | $(du -sb "$group" | awk '{ printf "%.1f", $1/1048576 }') | $(ls "$group" | tr '\n' ' ') | $(du -sb "$probe/$n/store" | awk '{ printf "%.1f", $1/1048576 }') | $(rss_mb "${pids[$i]}") |"
  i=$((i+1))
done

#!/usr/bin/env bash
# File-stream scale probe, Go's server and ours in one run (docs/STORAGE.md, "Scale: file streams").
# For each server: publish COUNT messages of SIZE bytes on 1,000 subjects to a file stream with nats.go
# PublishAsync (256 in flight), stop it cleanly, record the store's size on disk, start it again and
# time the first answer to $JS.API.STREAM.INFO, record VmRSS 2 s later, consume every message with a
# durable pull consumer (fetch 1000, ack none), record VmRSS again. --kill stops the server after
# publishing with SIGKILL instead (a crash: the restart is then a recovery). --filtered SUBJECT first reads
# that subject's messages (COUNT/1000 of them: one of the 1,000 subjects) after the restart with a second
# durable pull consumer filtered on it (fetch 100, ack none), timed: the read skips the other subjects.
#   bash scripts/js-scale-probe.sh --ours-cmd PATH [--count 2000000] [--size 128] [--dir /tmp] [--kill] [--only go|ours] [--filtered SCALE.7]
set -euo pipefail
cd "$(dirname "$0")/.."
count=2000000 size=128 ours="" go_cmd=nats-server base=${TMPDIR:-/tmp} stop=TERM only="" filtered=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --count) count=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --ours-cmd) ours=$2; shift 2 ;;
    --go-cmd) go_cmd=$2; shift 2 ;;
    --dir) base=$2; shift 2 ;;
    --kill) stop=KILL; shift ;;
    --only) only=$2; shift 2 ;;
    --filtered) filtered=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$ours" ]] || { echo "--ours-cmd is required" >&2; exit 2; }
probe=$(mktemp -d "$base/js-scale-probe.XXXXXX")
trap 'rm -rf "$probe"' EXIT
GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$probe/jsscale" ./bench/go/jsscale/main.go

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/VmRSS/ { printf "%.1f", $2/1024 }' "/proc/$1/status"; }
now_ns() { date +%s%N; }

run() {
  local name=$1 cmd=$2 store="$probe/$1" port pid t0 t1 answer
  mkdir -p "$store"
  port=$(free_port)
  $cmd -js -sd "$store" -a 127.0.0.1 -p "$port" >"$probe/$name.log" 2>&1 &
  pid=$!
  "$probe/jsscale" ready "nats://127.0.0.1:$port" -
  local pub; pub=$("$probe/jsscale" publish "nats://127.0.0.1:$port" SCALE "$count" "$size" 1000)
  local rss_pub; rss_pub=$(rss_mb $pid)
  kill -$stop $pid; wait $pid || true
  local disk; disk=$(du -sb "$store" | awk '{ printf "%.0f", $1/1048576 }')
  port=$(free_port)
  t0=$(now_ns)
  $cmd -js -sd "$store" -a 127.0.0.1 -p "$port" >>"$probe/$name.log" 2>&1 &
  pid=$!
  answer=$("$probe/jsscale" info "nats://127.0.0.1:$port" SCALE)
  t1=${answer%% *}
  sleep 2
  local rss_restart; rss_restart=$(rss_mb $pid)
  local filt=""
  if [[ -n "$filtered" ]]; then
    filt=$("$probe/jsscale" filtered "nats://127.0.0.1:$port" SCALE "$filtered" $((count / 1000)) 100)
    filt=" ${filt#consumed } |"
  fi
  local con; con=$("$probe/jsscale" consume "nats://127.0.0.1:$port" SCALE "$count")
  local rss_con; rss_con=$(rss_mb $pid)
  kill -TERM $pid; wait $pid || true
  printf '| %s | %s | %s MB | %s MB | %.3f s | %s MB |%s %s | %s MB |\n' "$name" "${pub#published }" "$rss_pub" "$disk" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')" "$rss_restart" "$filt" "${con#consumed }" "$rss_con"
  rm -rf "$store"
}

echo "$count x $size B file stream, 1,000 subjects, stopped with SIG$stop; $(date -u +%FT%TZ); load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -n "$filtered" ]]; then
  echo "| server | publish (PublishAsync 256) | RSS after publish | disk | restart to stream info | RSS after restart | filtered read of $filtered (fetch 100) | consume (fetch 1000, ack none) | RSS after consume |"
  echo '|---|---|---:|---:|---:|---:|---|---|---:|'
else
  echo '| server | publish (PublishAsync 256) | RSS after publish | disk | restart to stream info | RSS after restart | consume (fetch 1000, ack none) | RSS after consume |'
  echo '|---|---|---:|---:|---:|---:|---|---:|'
fi
[[ "$only" == ours ]] || run go "$go_cmd"
[[ "$only" == go ]] || run ours "$ours"

#!/usr/bin/env bash
# Jepsen-style fault trials of a replicated file stream (issue #26), ours and Go 2.9.10 side by side: each fault of
# tests/Nats.Server.IntegrationTests/JetStream/Cluster/Faults run N times on each (a fresh cluster per trial: three
# servers and R3, or five and R5 for the faults named "<fault>/5"), then one table of figures per fault and server:
# trials, acknowledged messages, lost (worst replica), acknowledged at another sequence, duplicated, diverged
# replicas, trials that did not converge, acknowledged messages the durable consumer never delivered, max publish gap.
#
# Usage: scripts/jepsen.sh [trials per fault, default 3] [test filter, e.g. "DisplayName~PowerCut"]
# Needs a Release build (dotnet build Nats.slnx -c Release), /usr/sbin/nats-server 2.9.10, FUSE (python3-fusepy,
# fuse3) for the power cut. Results: one JSON line per trial in artifacts/jepsen/results.jsonl, the table in
# artifacts/jepsen/summary.md, the test log in artifacts/jepsen/test.log.
set -uo pipefail
cd "$(dirname "$0")/.."
trials="${1:-3}"
filter="(FullyQualifiedName~ReplicatedStreamFaultTests|FullyQualifiedName~FiveServerFaultTests)${2:+&$2}"
out=artifacts/jepsen
mkdir -p "$out"
: > "$out/results.jsonl"
NATS_FAULT_TRIALS="$trials" NATS_FAULT_RESULTS="$PWD/$out/results.jsonl" \
  dotnet test tests/Nats.Server.IntegrationTests/Nats.Server.IntegrationTests.csproj -c Release --no-build \
  --filter "$filter" --logger "console;verbosity=detailed" > "$out/test.log" 2>&1
status=$?
/usr/bin/python3 - "$out/results.jsonl" > "$out/summary.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| Fault | Server | Trials | Acked | Lost (worst replica) | Lost everywhere | Wrong seq | Duplicated | Diverged replicas (trials) | Not converged | Missed by the consumer | Max publish gap (s) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for fault in sorted({r["Fault"] for r in rows}):
    for kind in ("ours", "go"):
        rs = [r for r in rows if r["Fault"] == fault and r["Kind"] == kind]
        if not rs:
            continue
        gaps = [r["MaxGapSeconds"] for r in rs]
        print(f"| {fault} | {kind} | {len(rs)} | {sum(r['Acked'] for r in rs)} | {sum(r['LostWorst'] for r in rs)} (max {max(r['LostWorst'] for r in rs)}) "
              f"| {sum(r['LostAll'] for r in rs)} | {sum(r['WrongSeq'] for r in rs)} | {sum(r['Duplicated'] for r in rs)} "
              f"| {sum(r['Diverged'] for r in rs)} ({sum(1 for r in rs if r['Diverged'])}) | {sum(1 for r in rs if not r['Converged'])} "
              f"| {sum(r.get('ConsumerMissed', 0) for r in rs)} | {min(gaps):.2f}-{max(gaps):.2f} |")
PY
cat "$out/summary.md"
grep -E "^\s+(Passed|Failed|Total) " "$out/test.log" | tail -3
exit $status

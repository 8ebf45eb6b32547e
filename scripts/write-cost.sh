#!/usr/bin/env bash
# write-cost.sh: what one request costs the nodes, for the capacity model
# in cluster/SCALE.md. Starts NODES local nodes (1 or 3) of bin/addrwatchd
# on fresh data dirs, runs one bench SCENARIO (default sheet-put, durable
# writes) for SECONDS at CONNECTIONS, and prints per node the CPU time per
# request (user + system, from /proc) and, for node 1, the fsync and
# fdatasync calls per request (counted by strace with a seccomp filter, so
# only those calls stop the process). Run from the repository root after
# make build (it needs bin/addrwatchd and bin/addrwatch):
#
#   scripts/write-cost.sh 1 10 64              # NODES SECONDS CONNECTIONS
#   scripts/write-cost.sh 3 10 64
#   scripts/write-cost.sh 1 10 32 auth-reads
#   RAFT_GROUPS=3 scripts/write-cost.sh 3 10 64     # a cluster sharded over 3 raft groups
set -euo pipefail
NODES=${1:-1} SECONDS_RUN=${2:-10} CONNS=${3:-64} SCENARIO=${4:-sheet-put} RAFT_GROUPS=${RAFT_GROUPS:-1}
command -v strace >/dev/null || { echo "write-cost.sh needs strace (apt-get install strace)" >&2; exit 1; }
declare -a pids
work=$(mktemp -d)
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
ports=($(go run ./bench free-ports $((NODES * 3))))
peers="" targets=""
for i in $(seq 1 "$NODES"); do
  raft=${ports[$(( (i-1)*3 + 2 ))]}
  peers="$peers${peers:+,}n$i=$raft"
  targets="$targets${targets:+,}http://${ports[$(( (i-1)*3 ))]}"
done
if [ "$NODES" -gt 1 ]; then
  bin/addrwatch cluster certs --out "$work/certs" --nodes "$(seq -s, -f 'n%g' 1 "$NODES")" >/dev/null
fi
for i in $(seq 1 "$NODES"); do
  http=${ports[$(( (i-1)*3 ))]} admin=${ports[$(( (i-1)*3 + 1 ))]} raft=${ports[$(( (i-1)*3 + 2 ))]}
  args=(--limits off --data "$work/n$i" --http "$http" --admin "$admin" --raft "$raft" --admin-token write-cost)
  # Nodes of a cluster prove themselves with certificates of one CA (a
  # lone node makes its own in its data dir).
  [ "$NODES" -gt 1 ] && args+=(--node-id "n$i" --peers "$peers"
    --cluster-ca "$work/certs/ca.crt" --cluster-cert "$work/certs/n$i.crt" --cluster-key "$work/certs/n$i.key")
  [ "$RAFT_GROUPS" -gt 1 ] && args+=(--groups "$RAFT_GROUPS")
  if [ "$i" = 1 ]; then
    strace -f --seccomp-bpf -c -e trace=fsync,fdatasync -o "$work/strace" bin/addrwatchd "${args[@]}" >"$work/n$i.log" 2>&1 &
    tracer=$!
  else
    bin/addrwatchd "${args[@]}" >"$work/n$i.log" 2>&1 &
    pids[$i]=$!
  fi
done
for _ in $(seq 1 50); do pids[1]=$(pgrep -P "$tracer" || true); [ -n "${pids[1]}" ] && break; sleep 0.1; done
admin1=http://${ports[1]}
for _ in $(seq 1 200); do curl -sf "$admin1/readyz" >/dev/null && break; sleep 0.1; done
if [ "$RAFT_GROUPS" -gt 1 ]; then
  # The nodes hand group leaders over in their first seconds; wait until
  # the leaders are spread (no node leads two more than another).
  for _ in $(seq 1 100); do
    curl -sf -H "Authorization: Bearer write-cost" "$admin1/admin/v1/cluster" | python3 -c '
import collections, json, sys
st = json.load(sys.stdin)
led = collections.Counter(g["leader"] for g in st["groups"])
nodes = {n["id"] for n in st["groups"][0]["nodes"]}
counts = [led.get(n, 0) for n in nodes]
sys.exit(0 if "" not in led and max(counts) - min(counts) <= 1 else 1)' && break
    sleep 0.2
  done
fi
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
go build -o "$work/bench" ./bench
before=(); for i in $(seq 1 "$NODES"); do before+=("$(cpu "${pids[$i]}")"); done
"$work/bench" --targets "$targets" --admin "$admin1" --admin-token write-cost -c "$CONNS" --duration "${SECONDS_RUN}s" --json "$SCENARIO" >"$work/run.json" 2>"$work/bench.txt"
after=(); for i in $(seq 1 "$NODES"); do after+=("$(cpu "${pids[$i]}")"); done
writes=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["scenarios"][0]["total"]["requests"])' "$work/run.json")
tick=$(getconf CLK_TCK)
grep -m1 "^$SCENARIO " "$work/bench.txt" || true
echo "$SCENARIO: $writes requests in ${SECONDS_RUN}s at $CONNS connections on $NODES node(s), $RAFT_GROUPS raft group(s)"
for i in $(seq 0 $((NODES - 1))); do
  awk -v b="${before[$i]}" -v a="${after[$i]}" -v w="$writes" -v t="$tick" -v n=$((i + 1)) \
    'BEGIN { s = (a - b) / t; printf "node %d: %.2f CPU-s, %.1f µs CPU per request\n", n, s, s * 1e6 / w }'
done
curl -sf -H "Authorization: Bearer write-cost" "$admin1/admin/v1/cluster" | grep -o '"writes":{[^}]*}' || true
kill "${pids[1]}"; wait "$tracer" 2>/dev/null || true
fsyncs=$(awk '$NF == "fsync" || $NF == "fdatasync" { s += $4 } END { print s + 0 }' "$work/strace")
awk -v f="$fsyncs" -v w="$writes" 'BEGIN { printf "node 1: %d fsync+fdatasync calls (setup included), %.3f per request\n", f, f / w }'

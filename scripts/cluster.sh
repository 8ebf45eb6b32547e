#!/usr/bin/env bash
# Run a three-node addrwatch cluster on loopback in the foreground (`make
# cluster`). Node N (1..3) listens on http 127.0.0.1:818N, admin
# 127.0.0.1:819N and raft 127.0.0.1:710N, keeps its data (and its generated
# admin token) in ./cluster-data/nN and logs to ./cluster-data/nN.log.
# The nodes talk mutual TLS with certificates from ./cluster-data/certs
# (made by `addrwatch cluster certs` when missing). A new ./cluster-data
# gets a demo account with a read key; a rerun reuses the data and skips
# that. Ctrl-C stops all three nodes.
set -euo pipefail

cd "$(dirname "$0")/.."

DATA=./cluster-data
CERTS=$DATA/certs
BIN=./bin
PEERS=n1=127.0.0.1:7101,n2=127.0.0.1:7102,n3=127.0.0.1:7103
NODES=(1 2 3)
READY_WAIT=60 # seconds for every node to answer /readyz with 200

# The nodes and the CLI are configured by flags only: an ADDRWATCH_* variable
# from the caller's shell (say a production ADDRWATCH_ADMIN_TOKEN) must not
# leak into this throwaway cluster.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^ADDRWATCH_' || true)

http_addr() { echo "127.0.0.1:818$1"; }
admin_addr() { echo "127.0.0.1:819$1"; }
raft_addr() { echo "127.0.0.1:710$1"; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# cli N ARGS... runs the CLI against node N's admin and public listeners.
cli() {
	local n=$1
	shift
	"$BIN/addrwatch" --admin "http://$(admin_addr "$n")" --data "$DATA/n$n" --server "http://$(http_addr "$n")" "$@"
}

for n in "${NODES[@]}"; do
	for port in "818$n" "819$n" "710$n"; do
		if listening "$port"; then
			echo "cluster: 127.0.0.1:$port is already in use; is a cluster (or make run) already running?" >&2
			exit 1
		fi
	done
done

"${MAKE:-make}" --no-print-directory build

fresh=true
for n in "${NODES[@]}"; do
	if [ -n "$(ls -A "$DATA/n$n" 2>/dev/null)" ]; then
		fresh=false
	fi
done
mkdir -p "$DATA"
chmod 700 "$DATA"

# Node certificates: the cluster CA signs one per node; a node accepts
# another only with a certificate from that CA. Any that are missing (all of
# them on a fresh start) are made now.
missing=()
for n in "${NODES[@]}"; do
	[ -f "$CERTS/n$n.crt" ] || missing+=("n$n")
done
if [ "${#missing[@]}" -gt 0 ]; then
	"$BIN/addrwatch" cluster certs --out "$CERTS" --nodes "$(IFS=,; echo "${missing[*]}")" >/dev/null
	echo "cluster: made node certificates for ${missing[*]} in $CERTS"
fi

pids=()
stopping=false
stop_nodes() {
	$stopping && return
	stopping=true
	trap '' INT TERM
	echo
	echo "cluster: stopping the nodes"
	for i in "${!pids[@]}"; do
		kill -TERM "${pids[$i]}" 2>/dev/null || true
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" 2>/dev/null || true
	done
	echo "cluster: stopped. The data is kept in $DATA for the next 'make cluster';"
	echo "cluster: remove it with 'make cluster-clean' (rm -rf $DATA)."
}
trap 'stop_nodes; exit 130' INT
trap 'stop_nodes; exit 143' TERM
trap 'stop_nodes' EXIT

for n in "${NODES[@]}"; do
	"$BIN/addrwatchd" --node-id "n$n" --data "$DATA/n$n" \
		--http "$(http_addr "$n")" --admin "$(admin_addr "$n")" --raft "$(raft_addr "$n")" \
		--peers "$PEERS" \
		--cluster-ca "$CERTS/ca.crt" --cluster-cert "$CERTS/n$n.crt" --cluster-key "$CERTS/n$n.key" \
		>>"$DATA/n$n.log" 2>&1 &
	pids+=($!)
	echo "cluster: started n$n (pid $!): http $(http_addr "$n"), admin $(admin_addr "$n"), raft $(raft_addr "$n") (mutual TLS), log $DATA/n$n.log"
done

deadline=$((SECONDS + READY_WAIT))
for n in "${NODES[@]}"; do
	until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$(admin_addr "$n")/readyz" || true)" = 200 ]; do
		if ! kill -0 "${pids[$((n - 1))]}" 2>/dev/null; then
			echo "cluster: n$n exited; the end of $DATA/n$n.log:" >&2
			tail -n 20 "$DATA/n$n.log" >&2
			exit 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "cluster: n$n is not ready after ${READY_WAIT}s; see $DATA/n$n.log" >&2
			exit 1
		fi
		sleep 0.2
	done
done
echo "cluster: all three nodes are ready"

creds=$DATA/demo-credentials
if $fresh; then
	# Node 1 may be a follower: it forwards both requests to the leader.
	password="demo-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
	if ! account=$(cli 1 account create --plan base --password "$password" --login demo 2>"$DATA/cli.err") ||
		! key=$(cli 1 key create --capability read --name "demo read key" \
			--owner-secret "$(sed -n 's/^owner_secret: //p' <<<"$account")" 2>"$DATA/cli.err"); then
		echo "cluster: creating the demo account failed:" >&2
		cat "$DATA/cli.err" >&2
		echo "cluster: 'make cluster-clean' and retry for a demo account" >&2
		rm -f "$DATA/cli.err"
		exit 1
	fi
	rm -f "$DATA/cli.err"
	account_id=$(sed -n 's/^account_id: //p' <<<"$account")
	owner_secret=$(sed -n 's/^owner_secret: //p' <<<"$account")
	read_key=$(sed -n 's/^key: //p' <<<"$key")
	{
		echo "addrwatch cluster demo account (saved in $creds)"
		echo "  site:          http://$(http_addr 1)/  (sign in with this login and password, on any node)"
		echo "  login:         demo"
		echo "  password:      $password"
		echo "  account id:    $account_id"
		echo "  owner secret:  $owner_secret"
		echo "  read key:      $read_key"
		echo
		echo "Try it against any node (a follower forwards the request to the leader):"
		for n in "${NODES[@]}"; do
			echo "  curl -s -H 'Authorization: Bearer $read_key' http://$(http_addr "$n")/v1/me"
		done
	} >"$creds.tmp"
	chmod 600 "$creds.tmp"
	mv "$creds.tmp" "$creds"
else
	echo "cluster: note: $DATA already holds a cluster, so no demo account was created (make cluster-clean starts over)"
fi

echo
echo "Cluster status (bin/addrwatch cluster status, through n1):"
cli 1 cluster status || true
echo
if [ -f "$creds" ]; then
	cat "$creds"
else
	echo "No saved demo credentials in $creds; create an account with:"
	echo "  bin/addrwatch account create --plan base --password 'a long password' --admin http://$(admin_addr 1) --data $DATA/n1"
fi
echo
echo "The CLI needs each node's admin URL and data dir (for its admin token), e.g.:"
echo "  bin/addrwatch cluster status --admin http://$(admin_addr 2) --data $DATA/n2"
leader=$(cli 1 --json cluster status 2>/dev/null | sed -n 's/.*"leader": *"n\([0-9]\)".*/\1/p' || true)
if [ -n "$leader" ]; then
	echo "Kill the leader to watch failover: kill -9 ${pids[$((leader - 1))]} (n$leader), then retry the curl against another node."
else
	echo "Kill a node to watch failover: kill -9 PID (pids ${pids[*]}), then retry the curl against another node."
fi
echo "Press Ctrl-C to stop the cluster."

# Wait in short sleeps so Ctrl-C is handled at once, and say when a node
# goes away (for example after a kill -9).
reported=()
while :; do
	alive=0
	for i in "${!pids[@]}"; do
		if kill -0 "${pids[$i]}" 2>/dev/null; then
			alive=$((alive + 1))
		elif [ -z "${reported[$i]:-}" ]; then
			reported[i]=1
			echo "cluster: n$((i + 1)) (pid ${pids[$i]}) has exited; see $DATA/n$((i + 1)).log"
		fi
	done
	if [ "$alive" -eq 0 ]; then
		echo "cluster: every node has exited"
		exit 1
	fi
	sleep 1 &
	wait $! || true
done

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/addrwatch/addrwatch/cluster"
)

// clusterRecoverCommand is the one command that does not speak HTTP: a
// cluster that has lost its quorum cannot serve the admin API, so the way
// out works on a stopped node's data dir, through cluster.Recover.
var clusterRecoverCommand = &command{
	words:    []string{"cluster", "recover"},
	synopsis: "--data DIR --node-id ID [--raft ADDR] [--peers ID=ADDR,...]",
	summary:  "make a stopped node's data dir serve again after a lost quorum",
	details: `Rewrite the cluster configuration in the data dir of a stopped node, for a
cluster that has lost its quorum for good (most of its voters gone with their
disks): nothing commits and no membership change can fix it. The node keeps
everything in its log and snapshots, entries that never committed included
(nothing can tell which those were), and gets the configuration given:
itself as the only voter, or with --peers the voters listed (run the command
with the same list on each of them). Start the node as before afterwards: it
elects itself (or the peers elect one) and serves.

Run it on the node with the most data (the old leader, or the one whose
'addrwatch cluster status' showed the highest applied index). Never start a
node that was left out on its old data dir: it still has the old
configuration. Empty its data dir, start it with --join and add it again
with 'addrwatch cluster add'. The command refuses a data dir in use (stop the
node first) and one without raft state.`,
	example: "addrwatch cluster recover --data /var/lib/addrwatch --node-id n1",
	api:     localData,
	define: func(fs *flag.FlagSet) action {
		nodeID := fs.String("node-id", "", "the stopped node's `ID` (its addrwatchd --node-id)")
		raftAddr := fs.String("raft", "", "the node's raft `ADDR` when not the one its data dir records")
		peers := fs.String("peers", "", "the voters after the recovery, `ID=ADDR,...`, this node among them (default: this node alone)")
		return func(ctx context.Context, a *app, _ []string) error {
			dir := firstSet(a.globals.data, a.getenv("ADDRWATCH_DATA"))
			if dir == "" {
				return usagef("--data is required: the stopped node's data directory")
			}
			if *nodeID == "" {
				return usagef("--node-id is required")
			}
			list, err := cluster.ParsePeers(*peers)
			if err != nil {
				return usagef("--peers: %v", err)
			}
			return recoverCluster(a, cluster.RecoverConfig{DataDir: dir, NodeID: *nodeID, RaftAddr: *raftAddr, Peers: list,
				Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		}
	},
}

func recoverCluster(a *app, cfg cluster.RecoverConfig) error {
	report, err := cluster.Recover(cfg)
	if err != nil {
		return err
	}
	if a.globals.json {
		out, err := json.Marshal(report)
		if err != nil {
			return err
		}
		return printRaw(a.stdout, out)
	}
	var left []string
	for _, s := range report.Before {
		if !containsNode(report.After, s.ID) {
			left = append(left, s.ID)
		}
	}
	next := "Start the node as before (same --node-id and --raft): it elects itself and serves."
	if len(report.After) > 1 {
		next = "Run the same command on each of the other voters, then start them as before: they elect a leader and serve."
	}
	_, err = fmt.Fprintf(a.stdout, "recovered %s (node %s)\n  entries: up to %d (term %d), now one snapshot of %d accounts\n  before:  %s\n  now:     %s\n%s\n",
		report.DataDir, cfg.NodeID, report.Index, report.Term, report.Accounts, describeNodes(report.Before), describeNodes(report.After), next)
	if err == nil && len(left) > 0 {
		_, err = fmt.Fprintf(a.stdout, "Do not start %s on the old data: empty the data dir, start with --join and add it again with 'addrwatch cluster add'.\n", strings.Join(left, ", "))
	}
	return err
}

func containsNode(nodes []cluster.ServerStatus, id string) bool {
	for _, n := range nodes {
		if n.ID == id {
			return true
		}
	}
	return false
}

func describeNodes(nodes []cluster.ServerStatus) string {
	var parts []string
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", n.ID, n.RaftAddr, n.Suffrage))
	}
	return strings.Join(parts, ", ")
}

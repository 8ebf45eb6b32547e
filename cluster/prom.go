package cluster

import (
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// Prometheus metrics of the node: raft's state read at scrape time, and
// the write path's apply latency and group-commit batch sizes.

// Collectors returns the node's metrics for a registry.
func (n *Node) Collectors() []prometheus.Collector {
	gauge := func(name, help string, value func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, value)
	}
	return append([]prometheus.Collector{
		n.metrics.applyLatency,
		n.metrics.commitBatch,
		n.metrics.entryLatency,
		gauge("addrwatch_raft_state", "Raft state: 0 follower, 1 candidate, 2 leader, 3 shutdown.", func() float64 {
			switch n.raft.State() {
			case raft.Candidate:
				return 1
			case raft.Leader:
				return 2
			case raft.Shutdown:
				return 3
			}
			return 0
		}),
		gauge("addrwatch_raft_term", "Current raft term.", func() float64 { return float64(n.raft.CurrentTerm()) }),
		gauge("addrwatch_raft_commit_index", "Highest log index known committed.", func() float64 { return float64(n.raft.CommitIndex()) }),
		gauge("addrwatch_raft_applied_index", "Highest log index applied to the accounts.", func() float64 { return float64(n.appliedIndex()) }),
		gauge("addrwatch_raft_last_contact_seconds", "Seconds since a follower last heard from the leader (0 on the leader).", func() float64 {
			if n.raft.State() == raft.Leader {
				return 0
			}
			return time.Since(n.raft.LastContact()).Seconds()
		}),
		gauge("addrwatch_serving", "1 when this node leads and has applied its log.", func() float64 {
			if n.serving() {
				return 1
			}
			return 0
		}),
		gauge("addrwatch_accounts", "Account actors held by this node.", func() float64 { return float64(n.accounts.Len()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "addrwatch_node_connections_refused_total",
			Help: "Connections to the raft address refused before serving: no TLS or no certificate of the cluster CA, a bad stream byte, too slow, or too many at once."},
			func() float64 { return float64(n.nodes.refused.Load()) }),
	}, n.verify.collectors()...)
}

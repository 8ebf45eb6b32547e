package cluster

import (
	"time"

	gometrics "github.com/armon/go-metrics"
	gmprometheus "github.com/armon/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// hashicorp/raft and raft-wal report their own metrics through
// armon/go-metrics' process-wide instance: raft's leader dispatch (the
// leader's append), commit time, each follower's AppendEntries round trip
// and store time, FSM apply, snapshots; raft-wal's appends, bytes and
// segment rotations. ExportRaftMetrics points that instance at a
// Prometheus registry, so /metrics shows them beside the node's own: the
// stage table of DESIGN.md ("Where a durable write's time goes") can be
// read from them. The instance is one per process, as raft's calls to it
// are package-level; a process runs one node (in-process test clusters
// share it, and none of their checks read it).
//
// go-metrics names a metric by joining its key with underscores
// (raft.commitTime is raft_commitTime); timers and samples are Prometheus
// summaries (_sum, _count, quantiles), counters counters, gauges gauges.

// raftMetricsExpiry is how long a metric nothing reports stays on
// /metrics (a follower's replication metrics after it led, say).
const raftMetricsExpiry = 10 * time.Minute

// ExportRaftMetrics sends raft's and raft-wal's metrics to reg. Call it
// once per process, before Open, so no early metric is lost.
func ExportRaftMetrics(reg prometheus.Registerer) error {
	sink, err := gmprometheus.NewPrometheusSinkFrom(gmprometheus.PrometheusOpts{Registerer: reg, Expiration: raftMetricsExpiry})
	if err != nil {
		return err
	}
	cfg := gometrics.DefaultConfig("")
	cfg.EnableHostname = false // the scrape target names the node
	cfg.EnableHostnameLabel = false
	cfg.EnableServiceLabel = false
	cfg.EnableRuntimeMetrics = false // the Go collector has these
	_, err = gometrics.NewGlobal(cfg, sink)
	return err
}

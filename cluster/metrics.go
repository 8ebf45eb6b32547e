package cluster

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// applyMetrics counts what the write path does, for the cluster status and
// for operators judging group commit: how many commands each raft entry
// carried and how long apply took.
type applyMetrics struct {
	entries      atomic.Uint64 // raft entries proposed by this node
	proposed     atomic.Uint64 // commands in them
	applied      atomic.Uint64 // commands applied by the FSM
	applyBatches atomic.Uint64
	applyNanos   atomic.Uint64

	// The node's own Prometheus histograms: each node has its own, so
	// in-process clusters (the tests) do not mix their observations.
	applyLatency prometheus.Histogram
	commitBatch  prometheus.Histogram
	entryLatency prometheus.Histogram
}

func newApplyMetrics() *applyMetrics {
	return &applyMetrics{
		applyLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "addrwatch_apply_batch_seconds",
			Help:    "Time to apply one raft batch to the account actors.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		commitBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "addrwatch_commit_batch_commands",
			Help:    "Commands group-committed in one raft log entry by this node.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		entryLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "addrwatch_raft_entry_seconds",
			Help:    "Time from handing an entry to raft (raft.Apply) until it has committed and applied here: raft's queue, the leader's append, replication and apply.",
			Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16),
		}),
	}
}

func (m *applyMetrics) observeBatch(commands int) {
	m.entries.Add(1)
	m.proposed.Add(uint64(commands))
	m.commitBatch.Observe(float64(commands))
}

func (m *applyMetrics) observeEntry(took time.Duration) { m.entryLatency.Observe(took.Seconds()) }

func (m *applyMetrics) observeApply(commands int, took time.Duration) {
	m.applyLatency.Observe(took.Seconds())
	m.applyBatches.Add(1)
	m.applied.Add(uint64(commands))
	m.applyNanos.Add(uint64(took.Nanoseconds()))
}

// WriteStats is a snapshot of applyMetrics.
type WriteStats struct {
	EntriesProposed      uint64  `json:"entries_proposed"`
	CommandsProposed     uint64  `json:"commands_proposed"`
	CommandsPerEntry     float64 `json:"commands_per_entry"`
	CommandsApplied      uint64  `json:"commands_applied"`
	ApplyBatches         uint64  `json:"apply_batches"`
	MeanApplyBatchMicros float64 `json:"mean_apply_batch_micros"`
}

func (m *applyMetrics) stats() WriteStats {
	s := WriteStats{
		EntriesProposed:  m.entries.Load(),
		CommandsProposed: m.proposed.Load(),
		CommandsApplied:  m.applied.Load(),
		ApplyBatches:     m.applyBatches.Load(),
	}
	if s.EntriesProposed > 0 {
		s.CommandsPerEntry = float64(s.CommandsProposed) / float64(s.EntriesProposed)
	}
	if s.ApplyBatches > 0 {
		s.MeanApplyBatchMicros = float64(m.applyNanos.Load()) / float64(s.ApplyBatches) / 1e3
	}
	return s
}

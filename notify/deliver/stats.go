package deliver

import (
	"maps"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/addrwatch/addrwatch/actors"
)

// Stats count what the deliverer did since start, for the admin status
// (/admin/v1/cluster's "deliverer") and tests.
type Stats struct {
	Sent      int64 `json:"sent"`      // tries made
	Delivered int64 `json:"delivered"` // tries the receiver took
	// Failed counts the failed tries by class.
	Failed   map[string]int64 `json:"failed"`
	InFlight int              `json:"in_flight"` // tries not yet recorded
	// HeldBack counts the tries this node started and then refused of
	// its own making, its budgets (rate_limited: another caller spent
	// them first) or its setup (key_mismatch, no_relay), also in Failed:
	// put off, not recorded.
	HeldBack int64 `json:"held_back"`
	// WaitingForBudget counts the due entries the last read of each
	// account left for the budgets of the account or of their channel,
	// which had no room for them: not started, so neither tried nor
	// held back; read again when the budgets have room.
	WaitingForBudget int `json:"waiting_for_budget"`
	// AcksRecorded counts the tries recorded through the log;
	// AckBatches the RecordDeliveries proposed, AckErrors those that
	// failed (their tries are made again).
	AcksRecorded int64 `json:"acks_recorded"`
	AckBatches   int64 `json:"ack_batches"`
	AckErrors    int64 `json:"ack_errors"`
	// Reads are the outbox reads, ReadErrors those that failed.
	Reads      int64 `json:"reads"`
	ReadErrors int64 `json:"read_errors"`
	// LastError is the last failure, a try's class and detail (which
	// never hold a URL's path or a secret) or an ack's.
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
}

// Stats returns the counts so far.
func (d *Deliverer) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	s.Failed = maps.Clone(d.stats.Failed)
	return s
}

// count counts a try's result.
func (d *Deliverer) count(e actors.DueDelivery, r actors.DeliveryResult, start time.Time) {
	d.mu.Lock()
	d.stats.Sent++
	if r.Delivered {
		d.stats.Delivered++
	} else {
		d.stats.Failed[r.Class]++
		d.stats.LastError, d.stats.LastErrorAt = r.Class+": "+r.Detail, start.UTC().Format(time.RFC3339)
	}
	d.mu.Unlock()
	d.opts.Metrics.tried(e, r, start)
}

// Metrics are the deliverer's Prometheus series.
type Metrics struct {
	tries    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	lag      prometheus.Histogram
	acks     *prometheus.CounterVec
	inflight prometheus.Gauge
	waiting  prometheus.Gauge
}

// NewMetrics registers the deliverer's series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		tries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addrwatch_notify_tries_total",
			Help: "Notification tries, by channel kind and outcome (delivered, or the failure's class).",
		}, []string{"kind", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "addrwatch_notify_try_seconds",
			Help:    "Time of one notification try, from its start to the receiver's answer, by channel kind.",
			Buckets: prometheus.ExponentialBuckets(1e-3, 2, 16),
		}, []string{"kind"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "addrwatch_notify_first_try_lag_seconds",
			Help:    "Time from a chain event's record to the end of its first try that was delivered.",
			Buckets: prometheus.ExponentialBuckets(1e-3, 2, 20),
		}),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addrwatch_notify_acks_total",
			Help: "Tries proposed through the log, by result (recorded, or failed: tried again).",
		}, []string{"result"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "addrwatch_notify_in_flight",
			Help: "Notification tries made or being made whose result is not yet recorded.",
		}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "addrwatch_notify_waiting_for_budget",
			Help: "Due notifications this leader holds back until their account's or endpoint's send budget has room (waiting_for_budget in /admin/v1/cluster).",
		}),
	}
	reg.MustRegister(m.tries, m.latency, m.lag, m.acks, m.inflight, m.waiting)
	return m
}

func (m *Metrics) tried(e actors.DueDelivery, r actors.DeliveryResult, start time.Time) {
	if m == nil {
		return
	}
	outcome := "delivered"
	if !r.Delivered {
		outcome = r.Class
	}
	kind := string(e.Channel.Kind)
	m.tries.WithLabelValues(kind, outcome).Inc()
	latency := time.Duration(r.LatencyMs) * time.Millisecond
	m.latency.WithLabelValues(kind).Observe(latency.Seconds())
	if r.Delivered && r.Attempt == 1 && e.Event.At > 0 {
		m.lag.Observe(start.Add(latency).Sub(time.Unix(0, e.Event.At)).Seconds())
	}
}

func (m *Metrics) acked(n int, recorded bool) {
	if m == nil {
		return
	}
	result := "recorded"
	if !recorded {
		result = "failed"
	}
	m.acks.WithLabelValues(result).Add(float64(n))
}

// waitingForBudget sets the gauge to the deliverer's count.
func (m *Metrics) waitingForBudget(n int) {
	if m == nil {
		return
	}
	m.waiting.Set(float64(n))
}

func (m *Metrics) inFlight(delta int) {
	if m == nil {
		return
	}
	m.inflight.Add(float64(delta))
}

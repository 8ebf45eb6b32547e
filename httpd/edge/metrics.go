package edge

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

// RequestMetrics are the request metrics per route: counts by status and
// latency. The route label is the route's pattern
// (/v1/portfolio/cards/{card_id}, which each route's handler notes with
// RouteLabeled), never the raw path, so IDs and secrets cannot reach a
// label and the series stay few.
type RequestMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	mu    sync.RWMutex
	cache map[seriesKey]routeSeries
}

// NewRequestMetrics registers the request metrics with reg.
func NewRequestMetrics(reg prometheus.Registerer) *RequestMetrics {
	m := &RequestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addrwatch_http_requests_total",
			Help: "Requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "addrwatch_http_request_seconds",
			Help:    "Time to answer a request, by route pattern and method.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
		}, []string{"route", "method"}),
		cache: map[seriesKey]routeSeries{},
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// Wrap measures every request that next answers.
func (m *RequestMetrics) Wrap(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := ctx.Time() // when fasthttp took the request up
		if start.IsZero() {
			start = time.Now() // a request fasthttp did not take up itself
		}
		next(ctx)
		route, _ := ctx.UserValue(routeLabelKey).(string)
		if route == "" {
			route = "unmatched"
		}
		s := m.series(route, ctx.Method(), ctx.Response.StatusCode())
		s.requests.Inc()
		s.latency.Observe(time.Since(start).Seconds())
	}
}

// routeLabelKey is the user value a request's route label is kept under,
// boxed once.
var routeLabelKey any = routeLabel{}

type routeLabel struct{}

// RouteLabeled is h, the handler of the route with pattern route, noting
// the pattern as its requests' route label (what fasthttp/router's
// SaveMatchedRoutePath does, but with the label boxed once per route
// instead of key and label twice per request).
func RouteLabeled(route string, h fasthttp.RequestHandler) fasthttp.RequestHandler {
	label := any(route)
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue(routeLabelKey, label)
		h(ctx)
	}
}

// seriesKey names one route, method and status.
type seriesKey struct {
	route, method string
	status        int
}

// routeSeries are the metrics of one seriesKey, resolved once: looking
// labels up in the vectors hashes them and allocates on every request.
type routeSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func (m *RequestMetrics) series(route string, method []byte, status int) routeSeries {
	k := seriesKey{route, methodLabel(method), status}
	m.mu.RLock()
	s, found := m.cache[k]
	m.mu.RUnlock()
	if found {
		return s
	}
	s = routeSeries{
		requests: m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(status)),
		latency:  m.latency.WithLabelValues(k.route, k.method),
	}
	m.mu.Lock()
	m.cache[k] = s
	m.mu.Unlock()
	return s
}

// methodLabel names the methods the API uses and folds any other token a
// client sends into "OTHER", which keeps the series (and the cache) few.
func methodLabel(method []byte) string {
	for _, m := range [...]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"} {
		if string(method) == m {
			return m
		}
	}
	return "OTHER"
}

package httpd

import (
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Request metrics per route: counts by status and latency. The route label
// is the router's pattern (/v1/portfolio/cards/{card_id}), never the raw
// path, so IDs and secrets cannot reach a label and the series stay few.
type requestMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newRequestMetrics(reg prometheus.Registerer) *requestMetrics {
	m := &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addrwatch_http_requests_total",
			Help: "Requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "addrwatch_http_request_seconds",
			Help:    "Time to answer a request, by route pattern and method.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18),
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// wrap measures every request that next answers.
func (m *requestMetrics) wrap(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		next(ctx)
		route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
		if route == "" {
			route = "unmatched"
		}
		method := string(ctx.Method())
		m.requests.WithLabelValues(route, method, strconv.Itoa(ctx.Response.StatusCode())).Inc()
		m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	}
}

// metricsHandler serves the registry in Prometheus's text format.
func metricsHandler(g prometheus.Gatherer) fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
}

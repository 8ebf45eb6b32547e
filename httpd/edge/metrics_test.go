package edge

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/valyala/fasthttp"
)

// Every request is counted under its method, status and route; a method
// the API does not use is folded into OTHER so a client cannot mint
// series.
func TestRequestMetricsCountsBySeries(t *testing.T) {
	m := NewRequestMetrics(prometheus.NewRegistry())
	h := m.Wrap(func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusTeapot) })
	for _, method := range []string{"GET", "GET", "BREW", "WHEN", "DELETE"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		h(&ctx)
	}
	for _, c := range []struct {
		method string
		want   float64
	}{{"GET", 2}, {"OTHER", 2}, {"DELETE", 1}, {"BREW", 0}} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues("unmatched", c.method, "418")); got != c.want {
			t.Errorf("%s requests = %v, want %v", c.method, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.latency); n != 3 {
		t.Errorf("latency series = %d, want 3 (GET, OTHER, DELETE)", n)
	}
}

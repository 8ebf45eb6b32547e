package admin

import (
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// pprofPrefix is where the admin listener serves profiles.
const pprofPrefix = "/debug/pprof/"

// pprofHandler serves Go's profiles on the admin listener, under
// /debug/pprof/ as net/http/pprof lays them out.
var pprofHandler = fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case pprofPrefix + "cmdline":
		pprof.Cmdline(w, r)
	case pprofPrefix + "profile":
		pprof.Profile(w, r)
	case pprofPrefix + "symbol":
		pprof.Symbol(w, r)
	case pprofPrefix + "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
}))

// metricsHandler serves the registry in Prometheus's text format.
func metricsHandler(g prometheus.Gatherer) fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
}

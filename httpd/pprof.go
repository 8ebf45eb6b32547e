package httpd

import (
	"net/http"
	"net/http/pprof"

	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// pprofHandler serves Go's profiles on the admin listener, under
// /debug/pprof/ as net/http/pprof lays them out.
var pprofHandler = fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/debug/pprof/cmdline":
		pprof.Cmdline(w, r)
	case "/debug/pprof/profile":
		pprof.Profile(w, r)
	case "/debug/pprof/symbol":
		pprof.Symbol(w, r)
	case "/debug/pprof/trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
}))

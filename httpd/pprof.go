package httpd

import (
	"net/http"
	"net/http/pprof"

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

package httpd

// Stand-ins until the other issue-14 branches merge (deleted then).

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

func (s *Server) requestIsHTTPS(ctx *fasthttp.RequestCtx) bool { return ctx.IsTLS() }

func siteLastUsed(actors.KeyView) string { return "never" }

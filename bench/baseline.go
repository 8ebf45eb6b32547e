package main

import (
	"net"

	"github.com/valyala/fasthttp"
)

// baseline answers every request from a bare fasthttp handler in this
// process with a fixed body the size of a /v1/me answer. It measures what
// the harness itself costs (this client, loopback, the kernel, on the
// same cores): the server under test cannot look faster than this, and a
// figure close to it means the client, not the server, is the limit.

var baselineBody = []byte(`{"account_id":"stvas32yjitu6cnx","key_id":"kost5guw6mwci4ep","capability":"read","plan":"extended",` +
	`"accessible_card_ids":["qezeode5wia5cfx2","ogxyacnkyjifl6nm","lo7jpjdzlemsulsw"],"accessible_space_ids":["4lrnzkakplaswuu4"],` +
	`"portfolio_cards":{"used":3,"limit":10},"bookmark_spaces":{"used":2,"limit":10},"rate_limit":{"remaining":null}}`)

func startBaseline(e *env) (func(), error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &fasthttp.Server{
		NoDefaultServerHeader: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(baselineBody)
		},
	}
	go srv.Serve(ln)
	e.baselineURL = "http://" + ln.Addr().String() + "/v1/me"
	return func() { srv.Shutdown() }, nil
}

func newBaselineWorker(e *env, _ int) worker {
	// The same Authorization header size as a real key, so the request
	// costs the client what a real one does.
	return &fixedWorker{req: request{op: "GET /v1/me (in-process fasthttp)", method: "GET", url: e.baselineURL,
		bearer: "awk.stvas32yjitu6cnx.kost5guw6mwci4ep.gswuw7auzi5w7jb2st4k5h5qytmdlhnvvm7nj7ghdilphkgj7laq"}}
}

// Package httpd is the fasthttp front end: the agent API at /v1 and the
// owner API at /owner/v1, and it mounts the owner's site at / (package
// httpd/site, wired by site_backend.go) and the admin API at /admin/v1
// with /metrics, profiles and the health probes (package httpd/admin,
// wired by admin.go). It authenticates each request, turns it into a
// command or a query for the account it names, and renders the result. It
// does not import protoactor or raft: it talks to the node through the
// narrow Store interface (and the admin API through its own Operator).
// The HTTP edge's hardening (listeners, framing, client IP, rate limits,
// request metrics) is package httpd/edge, which edge.go wires to the
// Server; forwarding to the leader is package httpd/forward, which
// forward.go wires; MCP over HTTP is package mcpserver/mcphttp, which
// mcp.go wires. The rooms do not import each other: edge.go hands the
// edge how to tell a request another node forwarded (forward.Scheme:
// Receive made its named client its remote address), forward.go hands forwarding the edge's client IP, scheme
// and read errors, and admin.go hands the admin API the error and JSON
// writers and the JSON decoder. Whether a node forwarded a request is the
// listener's, not the request's: the chains of the forwarded listeners
// (publicRoutes and adminRoutes with forwarded set) have no edge limits,
// never forward again, and tell the admin gate that a node checked the
// token.
//
// Errors take one path. Route bodies return an error; writeError turns it
// into the spec's {"code","error"} once, through specError (errors.As to an
// *actors.Error, else the cluster condition it is, clusterRefusals). An *actors.Error becomes an
// error only once known not nil: a nil one returned or assigned as an error
// would be a non-nil error, and TestNoTypedNilErrorReturns type-checks the
// package for that.
//
// Request state is one explicit value (request.go). A route of the agent or
// owner API is registered through routes, which makes a *request when the
// request reaches it and hands it to the handler: the fasthttp request,
// the route's audience and the read consistency asked for. The handler
// parses the credential into it (s.bearer); every store query goes
// through s.query (or ask, typed), which records a use of the credential
// unless the request is passive and names the API key that authenticated;
// the route writes a returned error (request.fail), keeping its code, and
// then counts the agent request in its key's activity. Nothing of this
// rides in a context value or a fasthttp user value. The site's calls make
// their own request value (site_backend.go), passive for the live view's
// polls.
//
// The owner's site is package site: httpd mounts its routes (site_backend.go
// gives it the store, the owner API's operations and the edge's rules it
// declares it needs), and the History shapes both show are package views.
// What a card's address holds comes through Balances (history.go), read
// and summed by package balances for the History summary
// (history_balances.go) and the site alike.
package httpd

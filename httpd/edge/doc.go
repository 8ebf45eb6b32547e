// Package edge is the HTTP edge's hardening: everything a request meets
// before a route, and the rules about clients that the rooms behind it
// share.
//
// What lives here:
//
//   - codes.go: the codes of a request refused before it reaches an
//     operation;
//   - server.go: a listener's fasthttp server (Edge.NewServer) with its
//     timeouts, body limit and read buffer, the refusal of a bad head
//     before any route (RefuseBadHeads), and the answer to a request
//     fasthttp could not read (ReadError);
//   - conn.go: the per-client connection cap and the connection wrapper
//     that lingers after a refusal (CloseAfterAnswer);
//   - head.go and lines.go: the framing and version rules of a request
//     head and the check of its line endings, against request smuggling;
//   - path.go: the path guard and the Location of the trailing-slash
//     redirect (RedirectTarget);
//   - clientip.go: who a request's client is, behind trusted proxies
//     (Clients), and the key the per-client limits count it by;
//   - ratelimit.go: the spec's per-client token buckets (Limits) and the
//     Sheet routes' global ceiling;
//   - owner.go and backoff.go: the back-off of wrong owner credentials
//     (OwnerLimits): passwords per client, per account and per login,
//     bearer secrets per client and account, each a bounded ledger of
//     failures whose wait doubles past a free allowance;
//   - tls.go: whether a request came over HTTPS, and HSTS;
//   - bearer.go: the token of an "Authorization: Bearer" header;
//   - metrics.go: the request metrics per route pattern (RequestMetrics);
//   - log.go: fasthttp's log lines, redacted of request bytes.
//
// What it depends on: fasthttp and its router (for the matched route's
// pattern), the token buckets and ledgers (x/time/rate and golang-lru),
// the Prometheus client and actors, for the error type and codes; the edge mints
// the codes of a request refused before it reaches an operation
// (CodeBadRequest and the others). It imports no other package of httpd.
// What it needs of the layers behind it comes in as functions: the
// writer of the spec's {code, error} answer (Edge.WriteError), whether a
// request was forwarded by another node, which named its client and
// scheme (Clients), which
// budget a request spends (Spending), a route's own timeouts
// (Listener.Request), which account a request's owner bearer secret
// names and the password check a back-off guards (OwnerLimits).
package edge

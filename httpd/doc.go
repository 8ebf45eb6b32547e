// Package httpd is the fasthttp front end: the agent API at /v1 and the
// owner API at /owner/v1. It authenticates each request, turns it into a
// command or a query for the account it names, and renders the result. It
// does not import protoactor or raft: it talks to the node through the
// narrow Store interface. The HTTP edge's hardening (listeners, framing,
// client IP, rate limits, request metrics) is package httpd/edge, which
// edge.go wires to the Server; forwarding to the leader is package
// httpd/forward, which forward.go wires; the admin API at /admin/v1 (with
// /metrics, profiles and the health probes) is package httpd/admin, which
// admin.go wires and which talks to the node through its own Operator. The
// rooms do not import each other: edge.go hands the edge what forwarding
// knows of a request (forward.Forwarded, NamedClient, NamedHTTPS),
// forward.go hands forwarding the edge's client IP, scheme and read
// errors, and admin.go hands the admin API the error and JSON writers,
// the JSON decoder and whether a node forwarded a request.
//
// Errors take one path. Route bodies return an error; writeError turns it
// into the spec's {"code","error"} once, through specError (errors.As to an
// *actors.Error, else the cluster condition it is, clusterRefusals). An *actors.Error becomes an
// error only once known not nil: a nil one returned or assigned as an error
// would be a non-nil error, and TestNoTypedNilErrorReturns type-checks the
// package for that. The site's pages hold errors typed (*actors.Error), the
// API's converted by siteErr.
package httpd

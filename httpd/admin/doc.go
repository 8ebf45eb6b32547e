// Package admin is the admin API: what the operator reaches on the admin
// listener with the operator token.
//
// What lives here:
//
//   - api.go: what the admin API needs (Operator, GroupTransferer,
//     Accounts) and what the server gives it (Config), and the API;
//   - routes.go: the routes under /admin/v1 (cluster status, adding and
//     removing a node, leadership transfer, snapshot, backup, account
//     creation), /metrics, the profiles and the health probes, and which
//     of them a node answers about itself (ServedLocally);
//   - slots.go: moving a slot between the raft groups of a sharded
//     cluster and draining a node (SlotMover, Drainer);
//   - restore.go: the admin listener's body rules (ReadBody, Request,
//     BodyBytesMax) and the restore, its upload streamed to a spool file;
//   - gate.go: the operator token's gate in front of every admin operation
//     (Gate) and in front of /metrics, and the token check;
//   - pprof.go: Go's profiles and the Prometheus handler;
//   - routing.go: which leader of a sharded cluster serves an operation on
//     the cluster itself (RouteKey: RouteMeta, RouteGroup), for the
//     server's forwarding.
//
// What it depends on: the node, through the small interfaces it declares
// (Operator and what a sharded node adds: GroupTransferer, SlotMover,
// Drainer), account creation (Accounts, which holds the secrets and the
// password hashing), and the functions in Config for what every room
// shares: the one writer of the spec's {code, error} answer and its
// status, the JSON writer and decoder, and whether another node forwarded
// a request having checked the token. It imports actors (the error type
// and codes, plans and logins), cluster/clustererr (which refusals of a
// restore pass through as they are), and httpd/edge (the Bearer header,
// a connection closed after its answer, the bad-request code); never
// httpd or httpd/forward. httpd builds it from its Config (httpd/admin.go)
// and mounts it on the admin listeners; cmd/addrwatchd gives it the node.
package admin

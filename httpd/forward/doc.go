// Package forward passes the requests a follower cannot serve to the
// leader and relays the answers, so that a client never needs to know
// which node leads; and it serves, on the leader, what followers pass on.
//
// What lives here:
//
//   - forwarder.go: the decision to forward (Forwarder.Handler: serve here,
//     wait for a leader, or pass on; in a sharded cluster to the leader of
//     the request's account's group) and the relaying over pooled node
//     connections, one request per connection;
//   - frames.go, client.go, server.go, writer.go: framed forwarding, many
//     public requests at once on one node connection (the follower's
//     end, the leader's FramedServer, and the writer both ends share);
//   - stream.go: History CSV downloads, relayed as the leader writes them;
//   - cluster.go: what it needs of the node;
//   - node.go: what a request carries over a node connection (the client's
//     IP and scheme, as the follower's edge saw them), and Receive, which
//     makes them the request's own: the client's IP its remote address,
//     the scheme a header Scheme reads.
//
// Whether a request was forwarded is not a mark on it but the listener it
// arrived on: the chains of the listeners other nodes reach are built
// with Receive and Forwarder.Received (never forward again), those of the
// listeners clients reach with IgnoreNodeHeaders and Forwarder.Handler.
//
// What it depends on: the node, through the small interfaces it declares
// (Cluster, Leadership, ShardedCluster: where each leader is, and a dialer
// of node connections), and the edge, through the functions in Config and
// FramedConfig (the client's IP and scheme, which requests stream, how an
// error is written in the spec's {code, error}, how a request that cannot
// be read is answered). It imports actors only for the error codes of its
// own answers, and never httpd: httpd builds a Forwarder in front of its
// routes and a FramedServer of them (httpd/forward.go), and
// cmd/addrwatchd gives both the node.
package forward

//go:build faultinject

package main

// The faultinject build of addrwatchd (go build -tags faultinject) exists
// for the fault test in system_test alone: it lets the test route every
// connection this node opens to another node through a proxy of the
// test's, which can then drop, delay or cut it (a network partition).
// The ordinary build has none of this file: it cannot be told to send
// node traffic anywhere but the raft addresses themselves.
//
// The route table comes from faultRoutesEnv: comma-separated pairs
// "raftaddr=proxyaddr". A connection to raftaddr (a peer's --raft address,
// as raft and forwarding name it) is dialled at proxyaddr instead; the
// proxy passes it on to raftaddr. Any other address is dialled as is. The
// TLS handshake runs over the proxied connection, so with the --cluster-*
// flags a proxy sees only ciphertext, and what the test partitions is the
// mutual TLS path itself.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/addrwatch/addrwatch/cluster"
)

// faultRoutesEnv names the environment variable holding the route table.
const faultRoutesEnv = "ADDRWATCH_FAULTINJECT_ROUTES"

// nodeDialFromEnv returns a DialFunc that follows the route table of
// faultRoutesEnv, or nil when the variable is unset. A malformed table is
// an error: a fault test that thinks it partitions nodes when it does not
// would prove nothing.
func nodeDialFromEnv(getenv func(string) string, logger *slog.Logger) (cluster.DialFunc, error) {
	logger.Warn("this addrwatchd is the faultinject build, made for the fault test: never run it in production", "routes_env", faultRoutesEnv)
	v := getenv(faultRoutesEnv)
	if v == "" {
		return nil, nil
	}
	routes, err := parseFaultRoutes(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", faultRoutesEnv, err)
	}
	logger.Warn("node connections follow the fault test's routes", "routes", v)
	var d net.Dialer
	return func(ctx context.Context, addr string) (net.Conn, error) {
		if via, found := routes[addr]; found {
			addr = via
		}
		return d.DialContext(ctx, "tcp", addr)
	}, nil
}

// parseFaultRoutes parses "raftaddr=proxyaddr,raftaddr=proxyaddr".
func parseFaultRoutes(s string) (map[string]string, error) {
	routes := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		to, via, found := strings.Cut(strings.TrimSpace(pair), "=")
		if !found {
			return nil, fmt.Errorf("route %q is not raftaddr=proxyaddr", pair)
		}
		for _, addr := range []string{to, via} {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return nil, fmt.Errorf("route %q: %w", pair, err)
			}
		}
		if _, dup := routes[to]; dup {
			return nil, fmt.Errorf("two routes to %s", to)
		}
		routes[to] = via
	}
	return routes, nil
}

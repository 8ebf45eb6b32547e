package admin

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

// Routing in a sharded cluster (the server's forwarding): a request is
// served by the leader of its account's group, but an admin operation on
// the cluster itself names no account. RouteKey says whose leader serves
// it, as a routing key the node's forwarding understands.

// RouteMeta is the routing key of a request that the meta group's leader
// must serve (a slot's move, a membership change). No account ID can be
// it: IDs are base32.
const RouteMeta = "#meta"

// RouteGroup is the routing key of a request that group's leader must
// serve (a transfer of its leadership); ParseRouteGroup reads it back.
func RouteGroup(group int) string { return "#group:" + strconv.Itoa(group) }

// ParseRouteGroup is the group a RouteGroup key names.
func ParseRouteGroup(key string) (int, bool) {
	n, found := strings.CutPrefix(key, "#group:")
	if !found {
		return 0, false
	}
	g, err := strconv.Atoi(n)
	return g, err == nil && g >= 0
}

// RouteKey is the routing key of an admin operation on the cluster, and
// true: RouteMeta for a membership change, a slot's move, a drain and a
// restore, RouteGroup for a transfer of one group's leadership, "" (a
// group picked at random) for any other transfer. It reports false for
// every other request, which is routed by the account it names.
func RouteKey(ctx *fasthttp.RequestCtx) (string, bool) {
	if bytes.HasPrefix(ctx.Path(), []byte(Prefix+"/cluster/nodes")) {
		return RouteMeta, true // a sharded cluster's membership changes start on the meta leader
	}
	switch string(ctx.Path()) {
	case slotMovePath, drainPath, restorePath:
		return RouteMeta, true
	case transferPath:
		var in struct {
			Group *int `json:"group"`
		}
		if json.Unmarshal(ctx.PostBody(), &in) == nil && in.Group != nil {
			return RouteGroup(*in.Group), true
		}
		return "", true
	}
	return "", false
}

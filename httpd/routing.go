package httpd

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/valyala/fasthttp"
)

// Routing in a sharded cluster: every account lives in one raft group, and
// a request is served by the leader of its account's group. The edge finds
// the account from what the request carries, before anything is checked:
// the secret in its Authorization header or session cookie names its
// account, and a sign-in names a login or an account ID. The node that
// serves the request authenticates it as always; a wrong guess here only
// sends the request to a node that refuses it.

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

// routingAccount is the account the request acts on, or "" when it names
// none (the leader of a group picked at random serves it), or RouteMeta.
func (s *Server) routingAccount(ctx *fasthttp.RequestCtx) string {
	if bytes.HasPrefix(ctx.Path(), []byte(adminPrefix+"/cluster/nodes")) {
		return RouteMeta // a sharded cluster's membership changes start on the meta leader
	}
	switch string(ctx.Path()) {
	case slotMovePath, drainPath, adminPrefix + "/restore":
		return RouteMeta
	case adminPrefix + "/cluster/transfer":
		var in struct {
			Group *int `json:"group"`
		}
		if json.Unmarshal(ctx.PostBody(), &in) == nil && in.Group != nil {
			return RouteGroup(*in.Group)
		}
		return ""
	}
	if token, found := bearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)); found {
		return accountOfSecret(token)
	}
	if token := site.SessionToken(ctx, s.requestIsHTTPS(ctx)); token != "" {
		return accountOfSecret(token)
	}
	if !ctx.IsPost() {
		return ""
	}
	switch string(ctx.Path()) {
	case ownerPrefix + "/sessions":
		var in struct {
			Login     string `json:"login"`
			AccountID string `json:"account_id"`
		}
		if json.Unmarshal(ctx.PostBody(), &in) != nil {
			return ""
		}
		if in.Login != "" {
			return s.accountOfLogin(in.Login)
		}
		return in.AccountID
	case "/sign-in":
		// The site's form takes a login or, failing that, an account ID.
		return s.accountOfLogin(string(ctx.PostArgs().Peek("login")))
	}
	return ""
}

// accountOfLogin is the account whose login is login, or login itself,
// which the site also takes as an account ID.
func (s *Server) accountOfLogin(login string) string {
	if account, found := s.store.AccountForLogin(login); found {
		return account
	}
	return login
}

// accountOfSecret is the account a bearer secret names (its second
// dot-separated part, in every kind: awk.<account>.…, aws.<account>.…,
// awt.<account>.…), or "".
func accountOfSecret(token string) string {
	prefix, rest, found := strings.Cut(token, ".")
	if !found || (prefix != prefixAPIKey && prefix != prefixOwnerSecret && prefix != prefixSession) {
		return ""
	}
	account, _, _ := strings.Cut(rest, ".")
	return account
}

// AccountPlacement is what a Store of a sharded cluster adds: whether this
// node serves an account, so that a new account's ID can be drawn until
// it falls in a group this node leads.
type AccountPlacement interface {
	Serves(account string) bool
}

// placementTries bounds the IDs drawn for a new account; with G groups of
// which this node leads one, a draw lands there with chance 1/G.
const placementTries = 1000

// newAccountID draws an account ID that this node serves, when the store
// places accounts (a sharded cluster), so that the create does not fail
// with not-leader. The request reached this node because it leads a group
// picked at random, so accounts still spread evenly over the groups.
func (s *Server) newAccountID() string {
	id := newID()
	for i := 0; s.placement != nil && i < placementTries && !s.placement.Serves(id); i++ {
		id = newID()
	}
	return id
}

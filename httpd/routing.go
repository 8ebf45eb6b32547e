package httpd

import (
	"encoding/json"
	"strings"

	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// Routing in a sharded cluster: every account lives in one raft group, and
// a request is served by the leader of its account's group. The edge finds
// the account from what the request carries, before anything is checked:
// the secret in its Authorization header or session cookie names its
// account, and a sign-in names a login or an account ID. The node that
// serves the request authenticates it as always; a wrong guess here only
// sends the request to a node that refuses it.

// routingAccount is the account the request acts on, or "" when it names
// none (the leader of a group picked at random serves it), or the routing
// key of an admin operation on the cluster itself (admin.RouteKey:
// admin.RouteMeta, admin.RouteGroup).
func (s *Server) routingAccount(ctx *fasthttp.RequestCtx) string {
	if key, cluster := admin.RouteKey(ctx); cluster {
		return key
	}
	if token, found := edge.BearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)); found {
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

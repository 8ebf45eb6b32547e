package httpd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

func TestAccountOfSecret(t *testing.T) {
	t.Parallel()
	for token, want := range map[string]string{
		"awk.acct1.key1.secret": "acct1",
		"aws.acct2.secret":      "acct2",
		"awt.acct3.sess.secret": "acct3",
		"awk.acct4":             "acct4", // the serving node refuses it; routing only needs the account
		"xyz.acct5.key.secret":  "",
		"acct6":                 "",
		"":                      "",
	} {
		if got := accountOfSecret(token); got != want {
			t.Errorf("accountOfSecret(%q) = %q, want %q", token, got, want)
		}
	}
}

// TestRoutingAccountFindsTheAccountOfEveryCredential: the key, owner
// secret and session of an account, and its sign-ins by login or by
// account ID through the API and the site's form, all route to it.
func TestRoutingAccountFindsTheAccountOfEveryCredential(t *testing.T) {
	t.Parallel()
	o := newLoginTest(t)
	id := o.account.AccountID
	request := func(method, path, contentType, body string, headers ...string) *fasthttp.RequestCtx {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(path)
		if contentType != "" {
			ctx.Request.Header.SetContentType(contentType)
		}
		ctx.Request.SetBodyString(body)
		for i := 0; i+1 < len(headers); i += 2 {
			ctx.Request.Header.Set(headers[i], headers[i+1])
		}
		return &ctx
	}
	cases := map[string]struct {
		ctx  *fasthttp.RequestCtx
		want string
	}{
		"API key":          {request("GET", "/v1/me", "", "", "Authorization", "Bearer awk."+id+".k.s"), id},
		"owner secret":     {request("GET", "/owner/v1/keys", "", "", "Authorization", "bearer "+o.account.OwnerSecret), id},
		"session cookie":   {request("GET", "/access", "", "", "Cookie", sessionCookie+"=awt."+id+".sess.secret"), id},
		"sign-in by login": {request("POST", "/owner/v1/sessions", "application/json", `{"login":"`+strings.ToUpper(ownerTestLogin)+`","password":"x"}`), id},
		"sign-in by ID":    {request("POST", "/owner/v1/sessions", "application/json", `{"account_id":"`+id+`","password":"x"}`), id},
		"site sign-in":     {request("POST", "/sign-in", "application/x-www-form-urlencoded", "login="+strings.ReplaceAll(ownerTestLogin, "+", "%2B")+"&password=x"), id},
		"site sign-in ID":  {request("POST", "/sign-in", "application/x-www-form-urlencoded", "login="+id+"&password=x"), id},
		"no credential":    {request("POST", "/admin/v1/accounts", "application/json", `{"plan":"base"}`), ""},
		"bad sign-in body": {request("POST", "/owner/v1/sessions", "application/json", `{"login":`), ""},
		"a GET sign-in":    {request("GET", "/owner/v1/sessions", "application/json", `{"account_id":"`+id+`"}`), ""},
	}
	for name, c := range cases {
		if got := o.server.routingAccount(c.ctx); got != c.want {
			t.Errorf("%s: routed to %q, want %q", name, got, c.want)
		}
	}
}

// placingStore serves only accounts whose ID starts with one of its
// prefixes, as a node leading some groups of a sharded cluster does.
type placingStore struct {
	*memoryStore
	served string // the first characters of the IDs this node serves
}

func (p placingStore) Serves(account string) bool {
	return strings.ContainsRune(p.served, rune(account[0]))
}

// TestNewAccountsLandWhereTheNodeServes: on a sharded node, a new
// account's ID is drawn until it falls in a group this node leads, so the
// create never fails for want of a leader here.
func TestNewAccountsLandWhereTheNodeServes(t *testing.T) {
	t.Parallel()
	store := placingStore{memoryStore: newMemoryStore(t), served: "ab"}
	s := New(Config{Store: store, PasswordCost: bcrypt.MinCost})
	for range 20 {
		created, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
		if err != nil {
			t.Fatal(err)
		}
		if !store.Serves(created.AccountID) {
			t.Fatalf("account %s created in a group this node does not serve", created.AccountID)
		}
	}
}

// shardedLeaders is a sharded cluster seen from a follower: each account
// has its own leader, and a request naming none goes to anyAddr.
type shardedLeaders struct {
	leaderCluster
	byAccount map[string]string
	anyAddr   string
}

func (c shardedLeaders) For(account string) forward.Leadership {
	if addr, found := c.byAccount[account]; found {
		return leaderCluster{addr: addr}
	}
	return leaderCluster{addr: c.anyAddr}
}

// TestForwardingGoesToTheAccountsGroupLeader: a follower of a sharded
// cluster forwards each request to the leader of its account's group,
// and one that names no account to the leader For("") names.
func TestForwardingGoesToTheAccountsGroupLeader(t *testing.T) {
	t.Parallel()
	leaderAt := func(name string) string {
		return serveLoopback(t, forward.Receive(func(ctx *fasthttp.RequestCtx) { ctx.WriteString(name) }))
	}
	cluster := shardedLeaders{
		byAccount: map[string]string{"acct1": leaderAt("leader of acct1"), "acct2": leaderAt("leader of acct2")},
		anyAddr:   leaderAt("leader of a random group"),
	}
	f := followerOf(cluster, nil)
	follower := serveLoopback(t, f.Handler(false, func([]byte) bool { return false }, func(ctx *fasthttp.RequestCtx) {
		t.Errorf("the follower served %s itself", ctx.Path())
	}))
	for bearer, want := range map[string]string{
		"awk.acct1.k.s": "leader of acct1",
		"awk.acct2.k.s": "leader of acct2",
		"aws.acct1.s":   "leader of acct1",
		"":              "leader of a random group",
	} {
		for range 2 { // the second goes over the framed or pooled connection already open
			if got := get(t, follower, "Authorization", "Bearer "+bearer); got != want {
				t.Errorf("%q went to %q, want %q", bearer, got, want)
			}
		}
	}
}

// FuzzRoutingAccount: what a client sends decides only where its request
// goes; no header, path or body makes the routing panic, and an account
// it names is one of the request's own strings.
func FuzzRoutingAccount(f *testing.F) {
	f.Add("POST", "/owner/v1/sessions", "", `{"login":"a.b@example.com","password":"x"}`)
	f.Add("POST", "/sign-in", "", "login=someone&password=x")
	f.Add("GET", "/v1/me", "Bearer awk.acct.key.secret", "")
	f.Add("POST", "/admin/v1/cluster/transfer", "Bearer admin", `{"group":-3}`)
	f.Add("POST", "/owner/v1/sessions", "", `{"account_id":12}`)
	o := newLoginTest(f)
	f.Fuzz(func(t *testing.T, method, path, auth, body string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(path)
		ctx.Request.Header.Set("Authorization", auth)
		ctx.Request.Header.SetContentType("application/x-www-form-urlencoded")
		ctx.Request.SetBodyString(body)
		got := o.server.routingAccount(&ctx)
		switch {
		case got == "" || got == admin.RouteMeta:
		case strings.HasPrefix(got, "#group:"):
			if _, ok := admin.ParseRouteGroup(got); !ok && !strings.Contains(body, "group") {
				t.Fatalf("a group route %q from nothing in the request", got)
			}
		case !strings.Contains(auth, got) && !strings.Contains(body, got) && got != o.account.AccountID && !namedInJSON(body, got):
			t.Fatalf("routed to %q, which the request does not name", got)
		}
	})
}

// namedInJSON reports whether body, as the sign-in JSON, names s as its
// login or account ID (JSON unescapes, and mends invalid UTF-8).
func namedInJSON(body, s string) bool {
	var in struct {
		Login     string `json:"login"`
		AccountID string `json:"account_id"`
	}
	return json.Unmarshal([]byte(body), &in) == nil && (in.Login == s || in.AccountID == s)
}

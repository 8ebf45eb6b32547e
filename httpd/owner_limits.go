package httpd

import (
	"context"
	"crypto/sha256"
	"math"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// Owner credential limits. Every owner credential can be guessed at, or
// hammered: the password at sign-in, at a password change and at an
// owner-secret rotation, and the bearer secrets (owner secret, session
// token) on every /owner/v1 request. Failures earn a back-off that doubles
// with each one past a free allowance, and a request in back-off is refused
// with 429 RATE_LIMITED and Retry-After. Clients are told apart as the edge
// limiter tells them: by IPv4 address or IPv6 /64. The limits apply whatever --limits says: that flag
// is for load tests of the Agent API.
//
//   - Passwords, per client: the back-off grows from 1 s to 15 min and is
//     forgotten after an hour without a failure. Success does not clear it,
//     so a client cannot launder its failures by signing in to an account
//     of its own in between. This is what stops one source.
//   - Passwords, per account: the back-off is capped at 2 s. That bounds a
//     guessing run spread over many clients to one password every 2 s on
//     the account, while an attacker can never lock the owner out: the
//     account's failures never refuse the owner secret or a live session,
//     and a sign-in waits at most 2 s.
//   - Passwords, per login: a sign-in by login is held to the login's
//     back-off (instead of the account's), capped at 2 s for the same
//     reason. It is kept by the login as typed, folded to lower case,
//     whether or not an account has it, so the back-off never tells an
//     attacker which logins exist. An account with a login can thus be
//     guessed at under two names, its id and its login, each held to one
//     password every 2 s once past its allowance.
//   - Bearer secrets, per client and account: a wrong owner secret or
//     session token naming an account earns that client a back-off on that
//     account's owner routes, growing as for passwords. They carry 256
//     random bits, so this is not about guessing but about a client
//     hammering an account; keying by the pair means neither a stale secret
//     in one script behind a shared address nor anyone who knows an account
//     id can lock the other owners, or this one, out. A missing or malformed
//     header, or an API key, cannot succeed here whatever its value, so it
//     is no attempt and is not counted.
//
// A password attempt counts as a failure from the moment it is admitted,
// and success takes the charge back: parallel attempts cannot slip past
// the back-off while their hashes run, and a successful attempt leaves no
// trace, so it is never slowed and the owner's next request is not either.
//
// The state is per node, not replicated: every owner request is served by
// the leader (followers forward), so the leader's ledgers see every
// attempt. Replicating them would put each guess through the raft log (a
// quorum fsync per wrong password, which turns the limiter into a write
// amplifier for the attacker) and would need wall-clock time inside apply.
// A leader change starts the ledgers afresh, which gives an attacker one
// more free allowance per election, and elections are not theirs to cause.
var (
	clientBackoff  = backoff{free: 10, first: time.Second, max: 15 * time.Minute, forget: time.Hour}
	accountBackoff = backoff{free: 10, first: time.Second, max: 2 * time.Second, forget: 15 * time.Minute}
	loginBackoff   = accountBackoff
)

// failureKeysMax bounds each ledger: past it the least recently failed
// key is dropped. A record is at most about 400 bytes with its key (an IP,
// the SHA-256 of an account id or of a login, or an IP and the account id
// of a bearer secret, which is at most bearerCharsMax long), so the four
// ledgers stay under about 70 MB together.
const failureKeysMax = 65_536

// backoff is one ledger's policy.
type backoff struct {
	free   int           // failures allowed before the first back-off
	first  time.Duration // the first back-off; each further failure doubles it
	max    time.Duration // the longest back-off
	forget time.Duration // a key with no failure for this long starts over
}

// delay is the back-off earned by n failures.
func (b backoff) delay(n int) time.Duration {
	d := time.Duration(0)
	for past := n - b.free; past > 0 && d < b.max; past-- {
		d = max(b.first, 2*d)
	}
	return min(d, b.max)
}

// failures is one key's record: how many, and when the last one was.
type failures struct {
	count int
	last  time.Time
}

// ledger counts recent failures by key, bounded by an LRU.
type ledger[K comparable] struct {
	policy backoff
	mu     sync.Mutex
	keys   *simplelru.LRU[K, failures]
}

func newLedger[K comparable](policy backoff, size int) *ledger[K] {
	keys, err := simplelru.NewLRU[K, failures](size, nil)
	if err != nil {
		panic("httpd: ledger size must be positive")
	}
	return &ledger[K]{policy: policy, keys: keys}
}

// record returns key's live record; a forgotten one is dropped. The caller
// holds mu.
func (l *ledger[K]) record(key K, now time.Time) failures {
	f, found := l.keys.Peek(key)
	if found && now.Sub(f.last) >= l.policy.forget {
		l.keys.Remove(key)
		return failures{}
	}
	return f
}

// wait is how long key must wait before its next attempt (zero: now).
func (l *ledger[K]) wait(key K, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waitLocked(l.record(key, now), now)
}

func (l *ledger[K]) waitLocked(f failures, now time.Time) time.Duration {
	if f.count == 0 {
		return 0
	}
	return max(0, f.last.Add(l.policy.delay(f.count)).Sub(now))
}

// fail records a failure of key at now.
func (l *ledger[K]) fail(key K, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.record(key, now)
	l.keys.Add(key, failures{count: f.count + 1, last: now})
}

// charge is a failure recorded in advance, which forgive takes back.
type charge struct {
	at, before time.Time // when it was made, and the last failure before it
}

// admit charges an attempt of key at now as a failure, or returns how long
// key must still wait (charging nothing).
func (l *ledger[K]) admit(key K, now time.Time) (charge, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.record(key, now)
	if wait := l.waitLocked(f, now); wait > 0 {
		return charge{}, wait
	}
	l.keys.Add(key, failures{count: f.count + 1, last: now})
	return charge{at: now, before: f.last}, 0
}

// forgive takes back a charge whose attempt succeeded (or was never
// checked). When no failure came after it, the record is as if the attempt
// had not been made.
func (l *ledger[K]) forgive(key K, c charge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, found := l.keys.Peek(key)
	if !found || f.count == 0 {
		return // dropped meanwhile: nothing to take back
	}
	f.count--
	if f.last.Equal(c.at) {
		f.last = c.before
	}
	if f.count == 0 {
		l.keys.Remove(key)
		return
	}
	l.keys.Add(key, f)
}

// len returns the number of keys held.
func (l *ledger[K]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keys.Len()
}

// ownerLimits holds the owner credential ledgers of one node.
type ownerLimits struct {
	clients  *ledger[string]      // password failures by client
	accounts *ledger[actors.Hash] // password failures by SHA-256 of the account id, so a long id costs no memory
	logins   *ledger[actors.Hash] // sign-in failures by SHA-256 of the folded login
	bearers  *ledger[string]      // bearer failures by client and account
	// client is the key of a request's client: its IPv4 address or IPv6 /64.
	client func(*fasthttp.RequestCtx) string
	now    func() time.Time
}

// newOwnerLimits builds the ledgers. Clients are told apart as the edge
// limits tell them (clientKeyOf: an IPv4 address or an IPv6 /64; it
// honours --trusted-proxies and names the original client of a forwarded
// request), even when those limits are off.
func newOwnerLimits(trusted []*net.IPNet, now func() time.Time) *ownerLimits {
	return &ownerLimits{
		clients:  newLedger[string](clientBackoff, failureKeysMax),
		accounts: newLedger[actors.Hash](accountBackoff, failureKeysMax),
		logins:   newLedger[actors.Hash](loginBackoff, failureKeysMax),
		bearers:  newLedger[string](clientBackoff, failureKeysMax),
		client:   func(ctx *fasthttp.RequestCtx) string { return clientKeyOf(ctx, trusted) },
		now:      now,
	}
}

// passwordCheckedKey marks a request whose password attempt was charged,
// so that its 401 is not counted a second time as a bearer failure.
const passwordCheckedKey = "addrwatch.owner.password-checked"

// guard refuses a client in back-off on the account its owner secret or
// session token names, and counts a refused one as a failure.
func (o *ownerLimits) guard(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		key, bearer := o.bearerKey(ctx)
		if !bearer {
			next(ctx)
			return
		}
		if wait := o.bearers.wait(key, o.now()); wait > 0 {
			writeError(ctx, ownerRateLimited(wait))
			return
		}
		next(ctx)
		if ctx.Response.StatusCode() == fasthttp.StatusUnauthorized && ctx.UserValue(passwordCheckedKey) == nil {
			o.bearers.fail(key, o.now())
		}
	}
}

// bearerKey names the client and the account of a request that carries an
// owner secret or a session token; it reports false for any other request.
func (o *ownerLimits) bearerKey(ctx *fasthttp.RequestCtx) (string, bool) {
	token, found := edge.BearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	if !found {
		return "", false
	}
	cred, valid := parseBearer(token, 0)
	if !valid || (cred.Kind != actors.CredentialOwnerSecret && cred.Kind != actors.CredentialSession) {
		return "", false
	}
	return o.bearerKeyFor(ctx, cred.AccountID), true
}

// bearerKeyFor is the bearer ledger's key of ctx's client on account: the
// owner API's Authorization header and the site's session cookie share it.
func (o *ownerLimits) bearerKeyFor(ctx *fasthttp.RequestCtx, account string) string {
	return o.client(ctx) + " " + account
}

// ownerRateLimited is the 429 of a client or account in back-off.
func ownerRateLimited(wait time.Duration) error {
	return &actors.Error{
		Code:       actors.CodeRateLimited,
		Message:    "too many failed owner credentials; wait for Retry-After seconds before trying again",
		RetryAfter: max(1, int(math.Ceil(wait.Seconds()))),
	}
}

// checkOwnerPassword is checkPassword behind the client's and the
// account's back-off.
func (s *Server) checkOwnerPassword(c context.Context, ctx *fasthttp.RequestCtx, cred actors.Credential, password string) (string, error) {
	return s.behindPasswordBackoff(ctx, s.owner.accounts, sha256.Sum256([]byte(cred.AccountID)), func() (string, error) {
		return s.checkPassword(c, cred, password)
	})
}

// behindPasswordBackoff runs check, a password check, behind the client's
// back-off and that of the name it was made under (named's key): the
// attempt is charged to both before the hash runs and taken back unless
// check found the password wrong (errWrongAccountOrPassword).
func (s *Server) behindPasswordBackoff(ctx *fasthttp.RequestCtx, named *ledger[actors.Hash], key actors.Hash, check func() (string, error)) (string, error) {
	o := s.owner
	ip, now := o.client(ctx), o.now()
	clientCharge, wait := o.clients.admit(ip, now)
	if wait > 0 {
		return "", ownerRateLimited(wait)
	}
	namedCharge, wait := named.admit(key, now)
	if wait > 0 {
		o.clients.forgive(ip, clientCharge)
		return "", ownerRateLimited(wait)
	}
	ctx.SetUserValue(passwordCheckedKey, true)
	stored, err := check()
	if err != errWrongAccountOrPassword {
		o.clients.forgive(ip, clientCharge)
		named.forgive(key, namedCharge)
	}
	return stored, err
}

// guardedRoutes registers every route it is given behind the owner
// limits' guard.
type guardedRoutes struct {
	routes routeAdder
	guard  func(fasthttp.RequestHandler) fasthttp.RequestHandler
}

func (g guardedRoutes) GET(path string, h fasthttp.RequestHandler) { g.routes.GET(path, g.guard(h)) }
func (g guardedRoutes) POST(path string, h fasthttp.RequestHandler) {
	g.routes.POST(path, g.guard(h))
}
func (g guardedRoutes) PUT(path string, h fasthttp.RequestHandler) { g.routes.PUT(path, g.guard(h)) }
func (g guardedRoutes) PATCH(path string, h fasthttp.RequestHandler) {
	g.routes.PATCH(path, g.guard(h))
}
func (g guardedRoutes) DELETE(path string, h fasthttp.RequestHandler) {
	g.routes.DELETE(path, g.guard(h))
}
func (g guardedRoutes) Handle(method, path string, h fasthttp.RequestHandler) {
	g.routes.Handle(method, path, g.guard(h))
}

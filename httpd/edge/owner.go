package edge

import (
	"crypto/sha256"
	"math"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
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

// OwnerLimits holds the owner credential ledgers of one node.
type OwnerLimits struct {
	clients  *ledger[string]      // password failures by client
	accounts *ledger[actors.Hash] // password failures by SHA-256 of the account id, so a long id costs no memory
	logins   *ledger[actors.Hash] // sign-in failures by SHA-256 of the folded login
	bearers  *ledger[string]      // bearer failures by client and account
	// client is the key of a request's client: its IPv4 address or IPv6 /64.
	client     func(*fasthttp.RequestCtx) string
	bearer     func(*fasthttp.RequestCtx) (account string, owner bool)
	writeError func(*fasthttp.RequestCtx, error)
	now        func() time.Time
}

// NewOwnerLimits builds the ledgers, at the time now gives. Clients are
// told apart as the edge limits tell them (Clients.Key: an IPv4 address or
// an IPv6 /64; it honours the trusted proxies and names the original
// client of a forwarded request), even when those limits are off. bearer
// names the account of a request that carries an owner secret or a
// session token, and reports false for any other request.
func (e *Edge) NewOwnerLimits(now func() time.Time, bearer func(*fasthttp.RequestCtx) (account string, owner bool)) *OwnerLimits {
	return &OwnerLimits{
		clients:    newLedger[string](ClientBackoff, failureKeysMax),
		accounts:   newLedger[actors.Hash](AccountBackoff, failureKeysMax),
		logins:     newLedger[actors.Hash](LoginBackoff, failureKeysMax),
		bearers:    newLedger[string](ClientBackoff, failureKeysMax),
		client:     e.Clients.Key,
		bearer:     bearer,
		writeError: e.WriteError,
		now:        now,
	}
}

// Attempt is one owner API request that carries an owner secret or a
// session token, as the back-off sees it: admitted before its route runs
// (Admit), then answered (Answered). The route holds it in its request
// value and hands it to the password checks it makes, which mark it: a
// request whose password was checked has had its attempt charged already,
// so its 401 is not counted a second time as a bearer failure.
type Attempt struct {
	limits *OwnerLimits
	key    string // the bearer ledger's key: the client and the account
	// PasswordChecked is set by AccountPassword and LoginPassword when
	// they ran the request's password check.
	PasswordChecked bool
}

// Admit refuses ctx's client while it is in back-off on the account its
// owner secret or session token names. It returns the request's attempt,
// nil for a request without such a bearer (a sign-in, an API key, none),
// which is no attempt.
func (o *OwnerLimits) Admit(ctx *fasthttp.RequestCtx) (*Attempt, error) {
	account, bearer := o.bearer(ctx)
	if !bearer {
		return nil, nil
	}
	key := o.bearerKey(ctx, account)
	if wait := o.bearers.wait(key, o.now()); wait > 0 {
		return nil, ownerRateLimited(wait)
	}
	return &Attempt{limits: o, key: key}, nil
}

// Answered counts a request answered with status: a 401 whose password
// was not checked is a wrong bearer secret, and earns its client a
// back-off on the account. A nil attempt counts nothing.
func (a *Attempt) Answered(status int) {
	if a != nil && status == fasthttp.StatusUnauthorized && !a.PasswordChecked {
		a.limits.bearers.fail(a.key, a.limits.now())
	}
}

// Guard wraps a handler that has no request value of its own (a route's
// method pin) in Admit and Answered.
func (o *OwnerLimits) Guard(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		attempt, err := o.Admit(ctx)
		if err != nil {
			o.writeError(ctx, err)
			return
		}
		next(ctx)
		attempt.Answered(ctx.Response.StatusCode())
	}
}

// BackOff refuses ctx's client while it is in back-off on account, as
// Admit does for a bearer secret: the site's session cookie shares the
// bearer ledger with the owner API's Authorization header.
func (o *OwnerLimits) BackOff(ctx *fasthttp.RequestCtx, account string) error {
	if wait := o.bearers.wait(o.bearerKey(ctx, account), o.now()); wait > 0 {
		return ownerRateLimited(wait)
	}
	return nil
}

// BearerFailed counts a wrong bearer secret (a session cookie) of ctx's
// client on account.
func (o *OwnerLimits) BearerFailed(ctx *fasthttp.RequestCtx, account string) {
	o.bearers.fail(o.bearerKey(ctx, account), o.now())
}

// bearerKey is the bearer ledger's key of ctx's client on account.
func (o *OwnerLimits) bearerKey(ctx *fasthttp.RequestCtx, account string) string {
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

// AccountPassword runs check, a password check of account, behind the
// client's and the account's back-off; check reports whether the password
// was wrong. It returns the refusal of a client or account in back-off,
// when check does not run. When it runs, it marks attempt (the request's,
// if it has one) as PasswordChecked.
func (o *OwnerLimits) AccountPassword(ctx *fasthttp.RequestCtx, attempt *Attempt, account string, check func() (wrong bool)) error {
	return o.behindPassword(ctx, attempt, o.accounts, sha256.Sum256([]byte(account)), check)
}

// LoginPassword is AccountPassword for a sign-in by login: behind the
// client's and the login's back-off, whether or not an account has it.
func (o *OwnerLimits) LoginPassword(ctx *fasthttp.RequestCtx, attempt *Attempt, login string, check func() (wrong bool)) error {
	return o.behindPassword(ctx, attempt, o.logins, sha256.Sum256([]byte(actors.FoldLogin(login))), check)
}

// behindPassword runs check behind the client's back-off and that of the
// name it was made under (named's key): the attempt is charged to both
// before the hash runs and taken back unless check found the password
// wrong.
func (o *OwnerLimits) behindPassword(ctx *fasthttp.RequestCtx, attempt *Attempt, named *ledger[actors.Hash], key actors.Hash, check func() (wrong bool)) error {
	ip, now := o.client(ctx), o.now()
	clientCharge, wait := o.clients.admit(ip, now)
	if wait > 0 {
		return ownerRateLimited(wait)
	}
	namedCharge, wait := named.admit(key, now)
	if wait > 0 {
		o.clients.forgive(ip, clientCharge)
		return ownerRateLimited(wait)
	}
	if attempt != nil {
		attempt.PasswordChecked = true
	}
	if !check() {
		o.clients.forgive(ip, clientCharge)
		named.forgive(key, namedCharge)
	}
	return nil
}

package httpd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// memoryStore is a Store on a real account registry without raft, so the
// owner routes run end to end with the real rules, login index included.
type memoryStore struct {
	mu       sync.Mutex // the registry applies from one goroutine at a time, as raft's FSM does
	accounts *registry.Registry
	// proposed counts the commands proposed: each is at least part of one
	// raft log entry, and a command proposed alone is one entry.
	proposed atomic.Int64
	// beforePropose, when set, sees each command first; an error it
	// returns refuses the command before it is applied.
	beforePropose func(cmd *actors.Command) error
}

func newMemoryStore(t testing.TB) *memoryStore {
	reg := registry.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(reg.Shutdown)
	return &memoryStore{accounts: reg}
}

func (m *memoryStore) Propose(_ context.Context, cmd *actors.Command) (actors.Result, error) {
	if m.beforePropose != nil {
		if err := m.beforePropose(cmd); err != nil {
			return actors.Result{}, err
		}
	}
	m.proposed.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.accounts.ApplyBatch([]*actors.Command{cmd})[0].Outcome()
}

func (m *memoryStore) Query(ctx context.Context, cred actors.Credential, q actors.Query, _ ReadConsistency) (actors.Result, error) {
	return m.accounts.Query(ctx, cred, q, 5*time.Second).Outcome()
}

func (m *memoryStore) AccountForLogin(login string) (string, bool) {
	return m.accounts.AccountForLogin(login)
}

// ownerTest is a Server on a memoryStore with an injected clock, without
// the edge limits (as under --limits off), and one account.
type ownerTest struct {
	t        testing.TB
	server   *Server
	clock    *clock
	handler  fasthttp.RequestHandler
	account  AccountCreated
	password string
	// conns are the clients' connections: each client's requests come
	// one after another on one, as an agent's on a keep-alive connection
	// (so they meet its memo, conn_memo.go).
	conns map[string]net.Conn
}

// conn is the connection of the client at ip.
func (o *ownerTest) conn(ip string) net.Conn {
	if o.conns == nil {
		o.conns = map[string]net.Conn{}
	}
	c := o.conns[ip]
	if c == nil {
		c = edge.WithMemo(benchConn{remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}})
		o.conns[ip] = c
	}
	return c
}

const ownerTestPassword = "correct horse battery"

func newOwnerTest(t testing.TB) *ownerTest {
	t.Helper()
	c := newClock()
	s := New(Config{Store: newMemoryStore(t), Now: c.now, PasswordCost: bcrypt.MinCost})
	created, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	return &ownerTest{t: t, server: s, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}
}

// send runs one request from ip and returns its status, Retry-After and body.
func (o *ownerTest) send(ip, method, path, bearer string, body any) (int, int, map[string]any) {
	o.t.Helper()
	status, retry, raw := o.sendRaw(ip, method, path, bearer, body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return status, retry, m
}

// sendRaw is send with the body as it was written.
func (o *ownerTest) sendRaw(ip, method, path, bearer string, body any) (int, int, []byte) {
	o.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	if bearer != "" {
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
	}
	if body != nil {
		b, _ := json.Marshal(body)
		req.Header.SetContentType("application/json")
		req.SetBody(b)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init2(o.conn(ip), benchLogger{}, true)
	req.CopyTo(&ctx.Request)
	o.handler(ctx)
	retry, _ := strconv.Atoi(string(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter)))
	return ctx.Response.StatusCode(), retry, append([]byte(nil), ctx.Response.Body()...)
}

func (o *ownerTest) signIn(ip, password string) (int, int) {
	o.t.Helper()
	status, retry, _ := o.send(ip, "POST", "/owner/v1/sessions", "", map[string]string{"account_id": o.account.AccountID, "password": password})
	return status, retry
}

func (o *ownerTest) expect(what string, status, retry, wantStatus, wantRetry int) {
	o.t.Helper()
	if status != wantStatus || retry != wantRetry {
		o.t.Fatalf("%s: status %d Retry-After %d, want %d Retry-After %d", what, status, retry, wantStatus, wantRetry)
	}
}

// Finding: 30 wrong passwords in a row were all 401 with no back-off. The
// limits are on although this server has no edge limits (--limits off).
func TestSignInBacksOffPerClientAndACorrectPasswordWorksAfter(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	const attacker, owner = "203.0.113.7", "198.51.100.2"
	for i := range edge.ClientBackoff.Free + 1 {
		status, retry := o.signIn(attacker, "wrong password")
		o.expect(fmt.Sprintf("wrong password %d", i+1), status, retry, fasthttp.StatusUnauthorized, 0)
	}
	for range 20 {
		status, retry := o.signIn(attacker, "wrong password")
		o.expect("wrong password in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)
	}
	// In back-off even the right password is not checked.
	status, retry := o.signIn(attacker, o.password)
	o.expect("right password in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)

	// Once the back-off has passed, the right password works, and the
	// session it gives works at once.
	o.clock.advance(time.Second)
	status, _, body := o.send(attacker, "POST", "/owner/v1/sessions", "", map[string]string{"account_id": o.account.AccountID, "password": o.password})
	o.expect("right password after the back-off", status, 0, fasthttp.StatusCreated, 0)
	session, _ := body["session"].(string)
	status, retry, _ = o.send(attacker, "GET", "/owner/v1/keys", session, nil)
	o.expect("the new session", status, retry, fasthttp.StatusOK, 0)

	// The success cleared nothing: the next failure doubles the back-off.
	status, retry = o.signIn(attacker, "wrong password")
	o.expect("next wrong password", status, retry, fasthttp.StatusUnauthorized, 0)
	status, retry = o.signIn(attacker, "wrong password")
	o.expect("doubled back-off", status, retry, fasthttp.StatusTooManyRequests, 2)

	// Another client shares only the account's back-off, capped at 2 s:
	// the attacker's 12 failures are past the account's allowance too.
	status, retry = o.signIn(owner, o.password)
	o.expect("another client at once", status, retry, fasthttp.StatusTooManyRequests, 2)
	o.clock.advance(edge.AccountBackoff.Max)
	status, retry = o.signIn(owner, o.password)
	o.expect("another client after the account's cap", status, retry, fasthttp.StatusCreated, 0)

	// An hour without a failure forgets the client's record.
	o.clock.advance(edge.ClientBackoff.Forget)
	for range edge.ClientBackoff.Free {
		status, retry = o.signIn(attacker, "wrong password")
		o.expect("wrong password after an hour", status, retry, fasthttp.StatusUnauthorized, 0)
	}
}

// Many clients guessing at one account are held to the account's capped
// back-off, and the owner is never locked out: the owner secret works
// throughout and a sign-in waits at most the cap.
func TestSignInBackOffPerAccountIsCappedAndNeverLocksTheOwnerOut(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	client := 0
	next := func() string { client++; return fmt.Sprintf("192.0.2.%d", client) }
	for i := range edge.AccountBackoff.Free + 1 {
		status, retry := o.signIn(next(), "wrong password")
		o.expect(fmt.Sprintf("wrong password %d", i+1), status, retry, fasthttp.StatusUnauthorized, 0)
	}
	for range 50 {
		status, retry := o.signIn(next(), "wrong password")
		o.expect("fresh client on an account in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)
		status, retry, _ = o.send(next(), "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
		o.expect("owner secret during the attack", status, retry, fasthttp.StatusOK, 0)
	}
	// The back-off keeps growing with admitted failures, up to its 2 s cap.
	for range 10 {
		o.clock.advance(edge.AccountBackoff.Max)
		status, retry := o.signIn(next(), "wrong password")
		o.expect("admitted wrong password", status, retry, fasthttp.StatusUnauthorized, 0)
		status, retry = o.signIn(next(), "wrong password")
		if status != fasthttp.StatusTooManyRequests || retry < 1 || retry > 2 {
			t.Fatalf("account back-off: status %d Retry-After %d, want 429 with at most 2", status, retry)
		}
	}
	o.clock.advance(edge.AccountBackoff.Max)
	status, retry := o.signIn(next(), o.password)
	o.expect("the owner's sign-in after at most the cap", status, retry, fasthttp.StatusCreated, 0)
}

// Finding: 30 guessed owner secrets in a row were all 401. Now a client
// that keeps presenting wrong bearer secrets for an account is held back
// on that account; other clients, other accounts and credentials that can
// never succeed here (an API key, garbage) are not counted or held.
func TestWrongOwnerSecretsBackOffPerClientAndAccount(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	const attacker, other = "203.0.113.9", "198.51.100.3"
	guess := "aws." + o.account.AccountID + ".guessedsecret"
	for i := range edge.ClientBackoff.Free + 1 {
		status, retry, _ := o.send(attacker, "GET", "/owner/v1/keys", guess, nil)
		o.expect(fmt.Sprintf("guess %d", i+1), status, retry, fasthttp.StatusUnauthorized, 0)
	}
	status, retry, _ := o.send(attacker, "GET", "/owner/v1/keys", guess, nil)
	o.expect("guess in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)
	status, retry, _ = o.send(attacker, "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
	o.expect("right secret from the client in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)
	status, retry, _ = o.send(attacker, "GET", "/owner/v1/keys", "awt."+o.account.AccountID+".sessionid.secret", nil)
	o.expect("session token for the account in back-off", status, retry, fasthttp.StatusTooManyRequests, 1)
	status, retry, _ = o.send(other, "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
	o.expect("right secret from another client", status, retry, fasthttp.StatusOK, 0)
	status, retry, _ = o.send(attacker, "GET", "/owner/v1/keys", "aws.another-account.guess", nil)
	o.expect("another account from the same client", status, retry, fasthttp.StatusUnauthorized, 0)
	for _, token := range []string{"", "garbage", "awk." + o.account.AccountID + ".keyid.secret"} {
		for range 2 * edge.ClientBackoff.Free {
			status, retry, _ = o.send(other, "GET", "/owner/v1/keys", token, nil)
			o.expect(fmt.Sprintf("token %q", token), status, retry, fasthttp.StatusUnauthorized, 0)
		}
	}
	o.clock.advance(time.Second)
	status, retry, _ = o.send(attacker, "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
	o.expect("right secret after the back-off", status, retry, fasthttp.StatusOK, 0)
}

// A wrong current password at a password change or an owner-secret
// rotation is a failed password like one at sign-in, and counts once (not
// also as a bearer failure).
func TestPasswordChangeAndRotationShareThePasswordBackOff(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	const ip = "203.0.113.11"
	secret := o.account.OwnerSecret
	for i := range edge.ClientBackoff.Free + 1 {
		path, body := "/owner/v1/owner-secret", any(map[string]string{"current_password": "wrong password"})
		if i%2 == 0 {
			path, body = "/owner/v1/password", map[string]string{"current_password": "wrong password", "new_password": "a new password"}
		}
		status, retry, _ := o.send(ip, "POST", path, secret, body)
		o.expect(fmt.Sprintf("%s with a wrong password", path), status, retry, fasthttp.StatusUnauthorized, 0)
	}
	status, retry := o.signIn(ip, o.password)
	o.expect("sign-in after wrong current passwords", status, retry, fasthttp.StatusTooManyRequests, 1)
	// The bearer secret was right all along: the client may still use it.
	status, retry, _ = o.send(ip, "GET", "/owner/v1/keys", secret, nil)
	o.expect("owner secret", status, retry, fasthttp.StatusOK, 0)

	o.clock.advance(time.Second)
	status, retry, body := o.send(ip, "POST", "/owner/v1/owner-secret", secret, map[string]string{"current_password": o.password})
	o.expect("rotation with the right password", status, retry, fasthttp.StatusOK, 0)
	if rotated, _ := body["owner_secret"].(string); rotated == "" || rotated == secret {
		t.Fatalf("rotation answered %v", body)
	}
}

// Successful attempts charge nothing: many sign-ins in a row from one
// client are never held back.
func TestSuccessfulSignInsAreNeverHeldBack(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	for range 5 * edge.ClientBackoff.Free {
		status, retry := o.signIn("203.0.113.12", o.password)
		o.expect("right password", status, retry, fasthttp.StatusCreated, 0)
	}
}

package httpd

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
)

// countingStore is a memoryStore that counts the commands proposed, by
// kind.
type countingStore struct {
	*memoryStore
	mu       sync.Mutex
	proposed map[actors.Kind]int
}

func (c *countingStore) Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error) {
	c.mu.Lock()
	c.proposed[cmd.Payload.Kind()]++
	c.mu.Unlock()
	return c.memoryStore.Propose(ctx, cmd)
}

func (c *countingStore) count(k actors.Kind) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proposed[k]
}

// seq is the account's change sequence, which every version, revision and
// ETag comes from.
func (c *countingStore) seq(account string) uint64 {
	var seq uint64
	err := c.accounts.Visit(func(a *actors.Account) (*actors.Account, error) {
		if a.ID == account {
			seq = a.Seq
		}
		return a, nil
	}, 5*time.Second)
	if err != nil {
		panic(err)
	}
	return seq
}

// useTest is an ownerTest on a countingStore whose every request waits for
// the use it records.
type useTest struct {
	*ownerTest
	server *Server
	store  *countingStore
}

func newUseTest(t *testing.T) *useTest {
	t.Helper()
	c := newClock()
	store := &countingStore{memoryStore: newMemoryStore(t), proposed: map[actors.Kind]int{}}
	s := New(Config{Store: store, Now: c.now, PasswordCost: bcrypt.MinCost})
	created, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	return &useTest{ownerTest: &ownerTest{t: t, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}, server: s, store: store}
}

const useTestClient = "198.51.100.9"

// call sends one request and waits until the use it made is recorded.
func (u *useTest) call(method, path, bearer string, body any) (int, map[string]any) {
	u.t.Helper()
	status, _, m := u.send(useTestClient, method, path, bearer, body)
	u.server.use.wait()
	return status, m
}

func (u *useTest) mustCall(method, path, bearer string, body any, want int) map[string]any {
	u.t.Helper()
	status, m := u.call(method, path, bearer, body)
	if status != want {
		u.t.Fatalf("%s %s: status %d, want %d: %v", method, path, status, want, m)
	}
	return m
}

// lastUsed is the key's last_used_at in the owner's key list.
func (u *useTest) lastUsed(keyID string) any {
	u.t.Helper()
	keys := u.mustCall("GET", "/owner/v1/keys", u.account.OwnerSecret, nil, fasthttp.StatusOK)["keys"].([]any)
	for _, k := range keys {
		if k := k.(map[string]any); k["key_id"] == keyID {
			lastUsed, listed := k["last_used_at"]
			if !listed {
				u.t.Fatalf("the key list has no last_used_at: %v", k)
			}
			return lastUsed
		}
	}
	u.t.Fatalf("key %s not listed", keyID)
	return nil
}

// TestKeyLastUseShowsUpOncePerGrain: an agent's use of its key shows in
// the owner's key list, and a minute of repeated use proposes one
// TouchKey, which changes no version. A wrong or revoked key records
// nothing.
func TestKeyLastUseShowsUpOncePerGrain(t *testing.T) {
	t.Parallel()
	u := newUseTest(t)
	created := u.mustCall("POST", "/owner/v1/keys", u.account.OwnerSecret, map[string]string{"capability": "read", "name": "bot"}, fasthttp.StatusCreated)
	key, keyID := created["key"].(string), created["key_id"].(string)
	if got := u.lastUsed(keyID); got != nil {
		t.Fatalf("an unused key lists last_used_at %v, want null", got)
	}
	seq := u.store.seq(u.account.AccountID)

	first := u.clock.now()
	for range 5 {
		u.mustCall("GET", "/v1/me", key, nil, fasthttp.StatusOK)
		u.clock.advance(10 * time.Second)
	}
	if got := u.store.count(actors.KindTouchKey); got != 1 {
		t.Fatalf("5 uses within a minute proposed %d TouchKey, want 1", got)
	}
	if got, want := u.lastUsed(keyID), first.UTC().Format(time.RFC3339Nano); got != want {
		t.Fatalf("last_used_at %v, want %s", got, want)
	}
	if got := u.store.seq(u.account.AccountID); got != seq {
		t.Fatalf("recording a use moved the account's sequence from %d to %d", seq, got)
	}

	// A minute after the recorded use, the next use is recorded.
	u.clock.advance(keyLastUsedGrain - 50*time.Second)
	again := u.clock.now()
	u.mustCall("GET", "/v1/me", key, nil, fasthttp.StatusOK)
	if got := u.store.count(actors.KindTouchKey); got != 2 {
		t.Fatalf("a use a grain later: %d TouchKey, want 2", got)
	}
	if got, want := u.lastUsed(keyID), again.UTC().Format(time.RFC3339Nano); got != want {
		t.Fatalf("last_used_at %v, want %s", got, want)
	}

	// A wrong secret for the key, or the key once revoked, is no use.
	u.clock.advance(2 * keyLastUsedGrain)
	u.mustCall("GET", "/v1/me", key[:len(key)-2]+"xx", nil, fasthttp.StatusUnauthorized)
	u.mustCall("DELETE", "/owner/v1/keys/"+keyID, u.account.OwnerSecret, nil, fasthttp.StatusNoContent)
	u.mustCall("GET", "/v1/me", key, nil, fasthttp.StatusUnauthorized)
	if got := u.store.count(actors.KindTouchKey); got != 2 {
		t.Fatalf("a wrong or revoked key proposed a TouchKey (%d, want 2)", got)
	}
}

// TestSessionDiesAfterIdleAndLivesOnWhenUsed: a session left idle for
// --session-idle is 401 like a wrong one; one used within its window lives
// on, at one TouchSession a minute at most, until its 24-hour cap.
func TestSessionDiesAfterIdleAndLivesOnWhenUsed(t *testing.T) {
	t.Parallel()
	u := newUseTest(t)
	start := u.clock.now()
	signIn := func() string {
		m := u.mustCall("POST", "/owner/v1/sessions", "", map[string]string{"account_id": u.account.AccountID, "password": u.password}, fasthttp.StatusCreated)
		if want := start.Add(SessionIdleDefault).UTC().Format(time.RFC3339Nano); m["expires_at"] != want {
			t.Fatalf("sign-in expires_at %v, want %s", m["expires_at"], want)
		}
		return m["session"].(string)
	}
	used, idle := signIn(), signIn()
	seq := u.store.seq(u.account.AccountID)

	u.clock.advance(20 * time.Minute)
	for range 3 {
		u.mustCall("GET", "/owner/v1/keys", used, nil, fasthttp.StatusOK)
	}
	if got := u.store.count(actors.KindTouchSession); got != 1 {
		t.Fatalf("3 uses at once proposed %d TouchSession, want 1", got)
	}
	if got := u.store.seq(u.account.AccountID); got != seq {
		t.Fatalf("extending a session moved the account's sequence from %d to %d", seq, got)
	}

	// 40 minutes in: the session used at 20 lives, the idle one is gone,
	// with the answer a wrong token gets.
	u.clock.advance(20 * time.Minute)
	u.mustCall("GET", "/owner/v1/keys", used, nil, fasthttp.StatusOK)
	_, expired := u.call("GET", "/owner/v1/keys", idle, nil)
	_, wrong := u.call("GET", "/owner/v1/keys", idle[:len(idle)-2]+"xx", nil)
	if expired["code"] != "UNAUTHORIZED" || !reflect.DeepEqual(expired, wrong) {
		t.Fatalf("an expired session got %v, a wrong one %v: want the same 401", expired, wrong)
	}

	// Used every 25 minutes, it lives to its cap and not a moment past.
	for u.clock.now().Add(25 * time.Minute).Before(start.Add(sessionLifetime)) {
		u.clock.advance(25 * time.Minute)
		u.mustCall("GET", "/owner/v1/keys", used, nil, fasthttp.StatusOK)
	}
	u.clock.t = start.Add(sessionLifetime)
	u.mustCall("GET", "/owner/v1/keys", used, nil, fasthttp.StatusUnauthorized)

}

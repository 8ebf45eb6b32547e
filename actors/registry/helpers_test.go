package registry

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// addrs are valid mainnet addresses, all distinct, for the cards of the
// test batches.
var addrs = []string{testaddr.P2PKH("registry-0"), testaddr.P2PKH("registry-1"), testaddr.P2PKH("registry-2"), testaddr.P2PKH("registry-3")}

// t0 is the time of the first command of every test batch.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()

var (
	systemP = actors.Principal{Kind: actors.PrincipalSystem}
	ownerP  = actors.Principal{Kind: actors.PrincipalOwner}
)

func hashOf(secret string) actors.Hash { return sha256.Sum256([]byte(secret)) }

func ptr[T any](v T) *T { return &v }

// refusal is the rule's refusal in res, nil when it succeeded: what
// actors' own tests read as res.err.
func refusal(res actors.Result) *actors.Error {
	_, err := res.Outcome()
	var refused *actors.Error
	if errors.As(err, &refused) {
		return refused
	}
	return nil
}

func wantCode(t *testing.T, res actors.Result, code actors.Code) *actors.Error {
	t.Helper()
	err := refusal(res)
	if err == nil {
		b, _ := json.Marshal(res.Body)
		t.Fatalf("succeeded with status %d body %s, want %s", res.Status, b, code)
	}
	if err.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	return err
}

func cardOf(t *testing.T, res actors.Result) actors.CardView {
	t.Helper()
	env, isCard := res.Body.(actors.CardEnvelope)
	if !isCard {
		t.Fatalf("result body is %T, want a card envelope", res.Body)
	}
	return env.Card
}

func mustNotMention(t *testing.T, what string, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Fatalf("%s %q reveals %q", what, text, s)
		}
	}
}

const queryTimeout = 5 * time.Second

func newTestRegistry(t *testing.T) *Registry {
	t.Helper()
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.Shutdown)
	return r
}

// batch builds commands for several accounts with increasing times.
type batch struct {
	at   int64
	cmds []*actors.Command
}

func (b *batch) add(account string, p actors.Principal, payload actors.Payload) *actors.Command {
	if b.at == 0 {
		b.at = t0
	}
	b.at += int64(time.Millisecond)
	c := &actors.Command{Account: account, At: b.at, Principal: p, Payload: payload}
	b.cmds = append(b.cmds, c)
	return c
}

func createAccount(id string) *actors.CreateAccount {
	return &actors.CreateAccount{Plan: actors.PlanBase, OwnerSecretHash: hashOf("os-" + id), PasswordHash: "pw-" + id, FirstSpaceID: "sp-" + id}
}

// applySerially applies cmds with plain actors.Apply, one account state
// per id: what the registry must be equivalent to.
func applySerially(cmds []*actors.Command) ([]actors.Result, map[string]*actors.Account) {
	states := map[string]*actors.Account{}
	results := make([]actors.Result, len(cmds))
	for i, c := range cmds {
		states[c.Account], results[i] = actors.Apply(states[c.Account], c)
		if a := states[c.Account]; a == nil || a.Deleted {
			// The registry holds no missing or deleted accounts.
			delete(states, c.Account)
		}
	}
	return results, states
}

func resultJSON(t *testing.T, r actors.Result) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Status int
		Body   any
		Err    *actors.Error
	}{r.Status, r.Body, refusal(r)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sameResults(t *testing.T, got, want []actors.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results for %d commands", len(got), len(want))
	}
	for i := range got {
		if g, w := resultJSON(t, got[i]), resultJSON(t, want[i]); g != w {
			t.Fatalf("result %d:\n got  %s\n want %s", i, g, w)
		}
	}
}

func (r *Registry) stateOf(t *testing.T, id string) []byte {
	t.Helper()
	var out []byte
	err := r.Visit(func(a *actors.Account) (*actors.Account, error) {
		if a.ID == id {
			b, err := json.Marshal(a)
			if err != nil {
				return nil, err
			}
			out = b
		}
		return a, nil
	}, queryTimeout)
	if err != nil {
		t.Fatalf("visit: %v", err)
	}
	return out
}

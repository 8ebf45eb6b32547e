package persistence

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// testdata/snapshot-before-issue-13.bin was written by the code before
// issue 13 (commit 75ff6fa): one account whose agent and owner made
// idempotent creates in turn (agent, owner, agent), and whose Sheet holds
// a cell with a terminal escape and an owner write counted in the
// Sheet-write budget, all accepted then. A node of today must restore it
// unchanged and replay its records.
const snapshotBefore13 = "testdata/snapshot-before-issue-13.bin"

func TestSnapshotFromBeforeIssue13StillRestores(t *testing.T) {
	data, err := os.ReadFile(snapshotBefore13)
	if err != nil {
		t.Fatal(err)
	}
	accounts, err := ReadSnapshot(bytes.NewReader(data))
	if err != nil || len(accounts) != 1 {
		t.Fatalf("ReadSnapshot: %d accounts, %v", len(accounts), err)
	}
	a := accounts[0]
	// Written again, the snapshot is the same bytes: nothing was lost or
	// reordered, and the encoding did not change.
	if again := writeSnapshot(t, accounts); !bytes.Equal(again, data) {
		t.Fatalf("the restored account writes a different snapshot:\n got %q\nwant %q", again, data)
	}
	const id = "acct-before-13"
	if a.Idempotency.Len() != 3 || a.Idempotency.PrincipalLen("key:"+id+"-key") != 2 || a.Idempotency.PrincipalLen("owner") != 1 {
		t.Fatalf("restored %d records (key %d, owner %d), want 3 (2 and 1)", a.Idempotency.Len(), a.Idempotency.PrincipalLen("key:"+id+"-key"), a.Idempotency.PrincipalLen("owner"))
	}
	if len(a.SheetWrites) != 2 {
		t.Fatalf("restored Sheet-write budget %v, want the agent's and the owner's writes", a.SheetWrites)
	}

	// Both principals' records replay, and nothing is created.
	at := at0 + int64(time.Hour)
	agent := actors.Principal{Kind: actors.PrincipalAgent, KeyID: id + "-key"}
	cards := len(a.Portfolio)
	replays := []struct {
		who  actors.Principal
		req  actors.IdempotencyRequest
		card string
	}{
		{agent, actors.IdempotencyRequest{Token: "agent-token-00000000", Method: "POST", Path: "/v1/portfolio/cards", BodyHash: sha("agent body 0"), PerPrincipal: true}, "card-agent-0"},
		{actors.Principal{Kind: actors.PrincipalOwner}, actors.IdempotencyRequest{Token: "owner-token-00000000", Method: "POST", Path: "/owner/v1/portfolio/cards", BodyHash: sha("owner body 0"), PerPrincipal: true}, "card-owner-0"},
		{agent, actors.IdempotencyRequest{Token: "agent-token-11111111", Method: "POST", Path: "/v1/portfolio/cards", BodyHash: sha("agent body 1"), PerPrincipal: true}, "card-agent-1"},
	}
	for _, r := range replays {
		at += int64(time.Second)
		req := r.req
		var res actors.Result
		a, res = actors.Apply(a, &actors.Command{Account: id, At: at, Principal: r.who, Idempotency: &req,
			Payload: &actors.CreatePortfolioCard{CardID: "card-new", Address: snapshotAddresses[0]}})
		body, replayed := res.Body.(json.RawMessage) // a replay returns the saved JSON
		if _, err := res.Outcome(); err != nil || res.Status != 201 || !replayed || !bytes.Contains(body, []byte(`"id":"`+r.card+`"`)) {
			t.Fatalf("replay of %s: %+v", r.req.Token, res)
		}
	}
	if len(a.Portfolio) != cards {
		t.Fatalf("the replays created cards: %d, was %d", len(a.Portfolio), cards)
	}
}

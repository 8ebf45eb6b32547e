package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// script returns a fixed sequence of commands touching every rule, with
// successes and failures mixed. Each call builds fresh values, so two runs
// share no pointers.
func script() []*Command {
	at := t0
	var cmds []*Command
	add := func(p Principal, payload Payload, idem *IdempotencyRequest) {
		at += int64(1500 * time.Millisecond)
		cmds = append(cmds, &Command{Account: "acct-d", At: at, Principal: p, Payload: payload, Idempotency: idem})
	}
	w := Principal{Kind: PrincipalAgent, KeyID: "kw"}
	r := Principal{Kind: PrincipalAgent, KeyID: "kr"}
	sess := Principal{Kind: PrincipalOwner, SessionID: "s1"}
	add(systemP, &CreateAccount{Plan: PlanBase, OwnerSecretHash: hashOf("os"), PasswordHash: "pw", FirstSpaceID: "sp1"}, nil)
	add(ownerP, &CreateKey{KeyID: "kw", Name: "writer", Capability: LevelWrite, Hash: hashOf("kw")}, nil)
	add(ownerP, &CreateKey{KeyID: "kr", Name: "reader", Capability: LevelRead, Hash: hashOf("kr")}, nil)
	add(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("s1"), ExpiresAt: at + int64(time.Hour), PasswordHash: "pw"}, nil)
	add(ownerP, &SetGrant{Resource: ResourceSpace, ID: "sp1", Level: LevelRead}, nil)
	for i := range 6 {
		add(w, &CreatePortfolioCard{CardID: fmt.Sprintf("cw%d", i), Address: addrs[i], CardFields: CardFields{Name: ptr(fmt.Sprintf("w%d", i))}},
			&IdempotencyRequest{Token: fmt.Sprintf("token-w-%010d", i), Method: "POST", Path: "/v1/portfolio/cards", BodyHash: hashOf(fmt.Sprint(i))})
	}
	add(w, &CreatePortfolioCard{CardID: "cw-replay", Address: addrs[0]},
		&IdempotencyRequest{Token: "token-w-0000000000", Method: "POST", Path: "/v1/portfolio/cards", BodyHash: hashOf("0")})
	add(w, &CreatePortfolioCard{CardID: "cw-conflict", Address: addrs[7]},
		&IdempotencyRequest{Token: "token-w-0000000000", Method: "POST", Path: "/v1/portfolio/cards", BodyHash: hashOf("other")})
	add(sess, &CreatePortfolioCard{CardID: "co1", Address: addrs[6], CardFields: CardFields{Note: ptr("owner\nnote")}}, nil)
	add(r, &CreatePortfolioCard{CardID: "cr", Address: addrs[7]}, nil)
	add(w, &CreatePortfolioCard{CardID: "dup", Address: addrs[1]}, nil)
	add(w, &UpdatePortfolioCard{CardID: "cw1", ExpectedVersion: "v999", CardFields: CardFields{Name: ptr("stale")}}, nil)
	add(ownerP, &SetGrant{Resource: ResourcePortfolioCard, ID: "cw2", Level: LevelRead}, nil)
	add(w, &UpdatePortfolioCard{CardID: "cw2", ExpectedVersion: "v8", CardFields: CardFields{Name: ptr("read only")}}, nil)
	add(ownerP, &SetPlan{Plan: PlanExtended}, nil)
	// Activity past a key's share: which lines go is decided in apply.
	line := func(key, op string, status, i int) ActivityEntry {
		return ActivityEntry{KeyID: key, Op: op, Status: status, Count: 1 + i%3, First: at - int64(i), Last: at,
			Resource: ResourceRef{Kind: ResourcePortfolioCard, ID: fmt.Sprint("c", i)}}
	}
	add(w, &RecordKeyActivity{Entries: []ActivityEntry{line("kw", "POST /v1/portfolio/cards", 201, 0), line("kw", ActivityUnknown, 404, 1)}}, nil)
	for n := range 9 {
		entries := make([]ActivityEntry, ActivityFlushMax)
		for i := range entries {
			entries[i] = line("kr", "GET /v1/portfolio/cards/{card_id}", 200, n*ActivityFlushMax+i)
		}
		add(r, &RecordKeyActivity{Entries: entries}, nil)
	}
	// Chain events: an address held by an Account card (cw0) and a bitcoin
	// Space's card, observed through every kind of change.
	add(ownerP, &CreateBookmarkCard{CardID: "bk0", SpaceID: "sp1", ExpectedSpaceVersion: "v1", Address: addrs[0]}, nil)
	// Notifications: channels and a rule before the observations, so
	// the outbox fills; acks, a second leader's ack and "send again"
	// after them.
	add(ownerP, webhookChannel("nc_d1"), nil)
	mail := emailChannel("nc_d2", "owner@example.com")
	add(ownerP, &mail, nil)
	add(ownerP, &PutNotifyRule{Scope: RuleCard, ID: "cw0", NotifyRuleFields: rule(2, 0, []string{"nc_d1"}, ChainEventKinds...)}, nil)
	add(w, &PutNotifyRule{Scope: RuleDefault, NotifyRuleFields: rule(2, 0, nil)}, nil)
	observe := func(tip int64, tipOnly bool, txs ...TxObservation) {
		add(systemP, &ObserveChain{ObserveAddress: ObserveAddress{Address: addrs[0], TipHeight: tip, TipHash: tipHash(tip), Txs: txs}, TipOnly: tipOnly}, nil)
	}
	observe(900, false)
	observe(900, false, mempoolTx("a1", 5000, hashN("c0")+":0"), mempoolTx("a2", 700, hashN("c1")+":0"), mempoolTx("a3", 10))
	replaced, dropped, reorged := mempoolTx("a2", 700), mempoolTx("a3", 10), confirmedTx("a1", 901, "b1", 5000)
	replaced.State, replaced.ReplacedBy, dropped.State, reorged.State = TxReplaced, hashN("a4"), TxDropped, TxReorged
	observe(901, false, confirmedTx("a1", 901, "b1", 5000), replaced, dropped)
	observe(901, false, reorged)
	observe(902, false, confirmedTx("a1", 902, "b2", 5000), confirmedTx("a5", 880, "b0", 1))
	observe(902+TxDeepConfirmations, true)
	add(ownerP, &ObserveChain{ObserveAddress: ObserveAddress{Address: addrs[0]}}, nil)
	seen := DeliveryEntryID(ChainEventID("cw0", hashN("a1"), ChainTxSeen, 1), "nc_d1")
	add(systemP, &RecordDeliveries{Results: []DeliveryResult{{EntryID: seen, Attempt: 1, At: at, Status: 502, Class: "answer", Detail: "the receiver answered 502"},
		{EntryID: seen, Attempt: 1, At: at + 5, Delivered: true, Status: 200}}}, nil)
	add(ownerP, &RedeliverEntry{EntryID: seen}, nil)
	add(ownerP, &UpdateNotifyChannel{ChannelID: "nc_d2", Enabled: ptr(false)}, nil)
	add(ownerP, &RotateNotifySecret{ChannelID: "nc_d1", Nonce: "rotated-nonce-0123456789"}, nil)
	add(ownerP, &DeleteNotifyRule{Scope: RuleCard, ID: "cw0"}, nil)
	add(ownerP, &DeleteNotifyChannel{ChannelID: "nc_d2"}, nil)
	add(ownerP, &RevokeKey{KeyID: "kr"}, nil)
	add(r, &CreatePortfolioCard{CardID: "late", Address: addrs[8]}, nil)
	add(sess, &ChangePassword{ExpectedPasswordHash: "pw", NewPasswordHash: "pw2"}, nil)
	add(ownerP, &CreateKey{KeyID: "kw2", Capability: LevelWrite, Hash: hashOf("kw2")}, nil)
	add(Principal{Kind: PrincipalAgent, KeyID: "kw2"}, &CreatePortfolioCard{CardID: "cw2b", Address: addrs[9], CardFields: CardFields{ColorKey: ptr("cyan")}}, nil)
	add(ownerP, &RotateOwnerSecret{NewHash: hashOf("os2")}, nil)
	add(Principal{Kind: PrincipalOwner, SecretEpoch: 1}, &RotateOwnerSecret{NewHash: hashOf("os3"), ExpectedPasswordHash: "stale"}, nil)
	add(ownerP, &SetPlan{Plan: PlanBase}, nil)
	add(ownerP, &SetExplorer{Explorer: "mempool.space"}, nil)
	add(ownerP, &SetExplorer{Explorer: "https://example.com"}, nil)
	add(Principal{Kind: PrincipalOwner, SecretEpoch: 1}, &SetPlan{Plan: PlanBase}, nil)
	add(sess, &ChangePassword{ExpectedPasswordHash: "pw2", NewPasswordHash: "pw3", NewOwnerSecretHash: ptr(hashOf("os4"))}, nil)
	add(Principal{Kind: PrincipalOwner, SecretEpoch: 1}, &SetPlan{Plan: PlanExtended}, nil)
	add(sess, &DeleteSession{}, nil)
	add(Principal{Kind: PrincipalOwner, SecretEpoch: 1}, &DeletePortfolioCard{CardID: "co1", ExpectedVersion: "v12"}, nil)
	return cmds
}

func TestApplyIsDeterministic(t *testing.T) {
	run := func() (states [][]byte, results [][]byte) {
		var a *Account
		for _, c := range script() {
			var res Result
			a, res = Apply(a, c)
			s, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			r, err := json.Marshal(struct {
				Status int
				Body   any
				Err    *Error
			}{res.Status, res.Body, res.err})
			if err != nil {
				t.Fatal(err)
			}
			states = append(states, s)
			results = append(results, r)
		}
		return states, results
	}
	s1, r1 := run()
	s2, r2 := run()
	for i := range s1 {
		if !bytes.Equal(r1[i], r2[i]) {
			t.Fatalf("command %d: results differ:\n%s\n%s", i, r1[i], r2[i])
		}
		if !bytes.Equal(s1[i], s2[i]) {
			t.Fatalf("command %d: states differ:\n%s\n%s", i, s1[i], s2[i])
		}
	}

	// The script's observations gave every kind of chain event to both
	// cards holding the address, so their comparison means something too.
	var final Account
	if err := json.Unmarshal(s1[len(s1)-1], &final); err != nil {
		t.Fatal(err)
	}
	told := map[string]map[ChainEventKind]bool{}
	for _, e := range final.ChainEvents {
		if told[e.CardID] == nil {
			told[e.CardID] = map[ChainEventKind]bool{}
		}
		told[e.CardID][e.Kind] = true
	}
	for _, card := range []string{"cw0", "bk0"} {
		if len(told[card]) != 6 {
			t.Errorf("card %s was told %v, want every kind of chain event", card, told[card])
		}
	}
	// And the outbox filled, was acked, and one entry was sent again.
	if final.Notify == nil || len(final.Notify.Outbox) < 10 || len(final.Notify.Deliveries) != 1 || len(final.Notify.Channels) != 1 {
		t.Errorf("the script's notifications: %+v", final.Notify)
	}

	// The script exercises both outcomes, so the comparison means something.
	var failures, successes int
	for _, r := range r1 {
		if bytes.Contains(r, []byte(`"Err":null`)) {
			successes++
		} else {
			failures++
		}
	}
	if failures < 5 || successes < 15 {
		t.Fatalf("script has %d successes and %d failures", successes, failures)
	}

	// A state restored from its JSON continues identically: replaying the
	// rest of the script on a decoded copy gives the same bytes. It is
	// restored halfway, and amid the chain observations (with transactions
	// recorded, confirmed and told), whose counts must survive it.
	cmds := script()
	amid := slices.IndexFunc(cmds, func(c *Command) bool { return c.Payload.Kind() == KindObserveChain }) + 3
	for _, split := range []int{len(cmds) / 2, amid} {
		var live *Account
		for _, c := range cmds[:split] {
			live, _ = Apply(live, c)
		}
		b, _ := json.Marshal(live)
		var restored Account
		if err := json.Unmarshal(b, &restored); err != nil {
			t.Fatal(err)
		}
		copyState := &restored
		for i, c := range cmds[split:] {
			var r1, r2 Result
			live, r1 = Apply(live, c)
			copyState, r2 = Apply(copyState, c)
			if (r1.err == nil) != (r2.err == nil) || r1.Status != r2.Status {
				t.Fatalf("restored at %d, command %d: live %+v, restored %+v", split, split+i, r1, r2)
			}
		}
		lb, _ := json.Marshal(live)
		cb, _ := json.Marshal(copyState)
		if !bytes.Equal(lb, cb) {
			t.Fatalf("restored at %d, the state diverged:\n%s\n%s", split, lb, cb)
		}
	}
}

package actors

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// due is what the deliverer reads at now.
func (ta *testAccount) due(now int64) DueDeliveries {
	ta.t.Helper()
	d, err := DueDeliveriesQuery{Now: now}.answer(ta.a, systemP, LevelWrite, now)
	if err != nil {
		ta.t.Fatal(err)
	}
	return d
}

// ack records one try as the system.
func (ta *testAccount) ack(r DeliveryResult) RecordedDeliveriesView {
	ta.t.Helper()
	return ta.mustOK(systemP, &RecordDeliveries{Results: []DeliveryResult{r}}).Body.(RecordedDeliveriesView)
}

// entryOf is the outbox entry id.
func (ta *testAccount) entryOf(id string) *OutboxEntry {
	ta.t.Helper()
	e := ta.a.Notify.outboxEntry(id)
	if e == nil {
		ta.t.Fatalf("no entry %s", id)
	}
	return e
}

// oneCardWithChannel makes an Account card on addrs[0], a webhook
// channel, and takes the address in.
func oneCardWithChannel(ta *testAccount) string {
	ta.t.Helper()
	card := ta.createCard(ta.owner, addrs[0])
	ta.addChannel("nc_a")
	ta.observeChain(addrs[0], 900)
	return card.ID
}

// Without a channel the outbox stays as it was: no state at all.
func TestNoChannelNoOutbox(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.createCard(ta.owner, addrs[0])
	ta.observeChain(addrs[0], 900)
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	if ta.a.Notify != nil {
		t.Fatalf("notify state %+v without a channel", ta.a.Notify)
	}
}

// Each event of a card is an entry per channel; the entries of one card
// on one channel go out in order, one at a time.
func TestEntriesOfOneCardGoOutInOrder(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	cardID := oneCardWithChannel(ta)
	other := ta.createCard(ta.owner, addrs[1])
	ta.observeChain(addrs[1], 900)
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	if v := ta.observeChain(addrs[0], 901, confirmedTx("a1", 901, "b1", 5000)); v.Events != 1 || v.Enqueued != 1 {
		t.Errorf("observed %+v, want an event and its entry", v)
	}
	ta.observeChain(addrs[1], 901, mempoolTx("c1", 70))
	if n := len(ta.a.Notify.Outbox); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
	first := ta.a.Notify.Outbox[0]
	if first.ID != DeliveryEntryID(first.Event.ID(), "nc_a") || first.State != DeliveryPending || first.Event.CardID != cardID {
		t.Errorf("first entry %+v", first)
	}
	d := ta.due(ta.at)
	if len(d.Due) != 2 || d.Due[0].EntryID != first.ID || d.Due[1].Event.CardID != other.ID {
		t.Fatalf("due %+v: want the head of each card", d.Due)
	}
	if d.Due[0].Attempt != 1 || d.Due[0].Channel.Target != "s1.sealed-nc_a" || d.Due[0].Channel.Kind != ChannelWebhook ||
		d.Due[0].Channel.Nonce == "" || d.Due[0].Channel.KeyFingerprint != "0123456789abcdef" {
		t.Errorf("what a sender needs: %+v", d.Due[0])
	}
	ta.ack(DeliveryResult{EntryID: first.ID, Attempt: 1, At: ta.at, Delivered: true, Status: 200, LatencyMs: 12})
	d = ta.due(ta.at)
	if len(d.Due) != 2 || d.Due[0].Event.Kind != ChainTxConfirmed {
		t.Errorf("after the first was delivered: %+v", d.Due)
	}
}

// An ack whose attempt is not the entry's next, or of an entry no longer
// pending, changes nothing: two leaders' tries, the first recorded wins.
func TestAcksAreIdempotent(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	id := ta.a.Notify.Outbox[0].ID
	ok := DeliveryResult{EntryID: id, Attempt: 1, At: ta.at, Delivered: true, Status: 204}
	if v := ta.ack(ok); v.Recorded != 1 {
		t.Fatalf("%+v", v)
	}
	before := ta.snapshot()
	failed := DeliveryResult{EntryID: id, Attempt: 1, At: ta.at + 1, Status: 500, Class: "answer"}
	v := ta.mustOK(systemP, &RecordDeliveries{Results: []DeliveryResult{ok, failed,
		{EntryID: "nd_" + fmt.Sprintf("%032x", 7), Attempt: 1, At: ta.at}}}).Body.(RecordedDeliveriesView)
	if v.Recorded != 0 || v.Ignored != 3 {
		t.Errorf("second leader's acks %+v", v)
	}
	if after := ta.snapshot(); string(after) != string(before) {
		t.Errorf("an ignored ack changed the account")
	}
	e := ta.entryOf(id)
	if e.State != DeliveryDelivered || e.Attempts != 1 || e.LastStatus != 204 {
		t.Errorf("entry %+v", e)
	}
	ta.mustFail(CodeUnauthorized, ta.owner, &RecordDeliveries{Results: []DeliveryResult{ok}})
	for name, bad := range map[string]DeliveryResult{
		"no entry id":       {Attempt: 1, At: 1},
		"attempt 0":         {EntryID: id, At: 1},
		"no time":           {EntryID: id, Attempt: 1},
		"long detail":       {EntryID: id, Attempt: 1, At: 1, Detail: string(make([]byte, DeliveryDetailBytesMax+1))},
		"newline in detail": {EntryID: id, Attempt: 1, At: 1, Detail: "a\nb"},
		"class with space":  {EntryID: id, Attempt: 1, At: 1, Class: "a b"},
		"delivered failing": {EntryID: id, Attempt: 1, At: 1, Delivered: true, Class: "answer"},
		"retry after 2 d":   {EntryID: id, Attempt: 1, At: 1, RetryAfterMs: (48 * time.Hour).Milliseconds()},
	} {
		t.Run(name, func(t *testing.T) {
			ta.t = t
			ta.mustFail(CodeValidation, systemP, &RecordDeliveries{Results: []DeliveryResult{ok, bad}})
		})
	}
	ta.t = t
	ta.mustFail(CodeValidation, systemP, &RecordDeliveries{})
}

// Failures back off on the schedule (at least the receiver's
// Retry-After); a failure a day after the first try is the last; the
// next entry of the card is due then.
func TestBackOffAndGiveUpAfterADay(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	ta.observeChain(addrs[0], 901, confirmedTx("a1", 901, "b1", 5000))
	id := ta.a.Notify.Outbox[0].ID
	at := ta.at
	first := at
	for attempt := 1; ; attempt++ {
		d := ta.due(at)
		if len(d.Due) != 1 || d.Due[0].EntryID != id || d.Due[0].Attempt != attempt {
			t.Fatalf("try %d at +%v: due %+v", attempt, time.Duration(at-first), d.Due)
		}
		ta.ack(DeliveryResult{EntryID: id, Attempt: attempt, At: at, Status: 503, Class: "answer"})
		e := ta.entryOf(id)
		if e.State == DeliveryGivenUp {
			if at-first < int64(deliveryGiveUpAfter) {
				t.Fatalf("given up after %v", time.Duration(at-first))
			}
			break
		}
		if want := at + int64(DeliveryBackoff(attempt)); e.NextAt != want {
			t.Fatalf("try %d: next at +%v, want +%v", attempt, time.Duration(e.NextAt-at), DeliveryBackoff(attempt))
		}
		if early := ta.due(e.NextAt - 1); len(early.Due) != 0 || early.NextAt != e.NextAt {
			t.Fatalf("due before its time: %+v", early)
		}
		at = e.NextAt
	}
	if got := []time.Duration{DeliveryBackoff(1), DeliveryBackoff(9), DeliveryBackoff(10), DeliveryBackoff(40)}; !slices.Equal(got,
		[]time.Duration{30 * time.Second, 4 * time.Hour, 4 * time.Hour, 4 * time.Hour}) {
		t.Errorf("schedule %v", got)
	}
	lines := ta.a.Notify.deliveryLinesOf(id)
	if len(lines) != ta.entryOf(id).Attempts || !lines[len(lines)-1].GaveUp || lines[0].GaveUp {
		t.Errorf("the delivery log holds %d lines for %d tries", len(lines), ta.entryOf(id).Attempts)
	}
	// The channel failed for that day too, so it is disabled; the owner
	// turns it on again.
	if ch := ta.a.notifyChannel("nc_a"); ch.Enabled || ch.DisabledReason != DisabledFailing {
		t.Errorf("the channel after a day of failures: %+v", ch)
	}
	ta.mustOK(ta.owner, &UpdateNotifyChannel{ChannelID: "nc_a", Enabled: ptr(true)})
	d := ta.due(at)
	if len(d.Due) != 1 || d.Due[0].Event.Kind != ChainTxConfirmed {
		t.Errorf("the next entry of the card is not due after the give-up: %+v", d.Due)
	}

	// A Retry-After longer than the schedule's wait is honoured.
	next := d.Due[0]
	ta.ack(DeliveryResult{EntryID: next.EntryID, Attempt: 1, At: at, Status: 429, Class: "answer", RetryAfterMs: 600_000})
	if e := ta.entryOf(next.EntryID); e.NextAt != at+int64(10*time.Minute) {
		t.Errorf("Retry-After not honoured: next in %v", time.Duration(e.NextAt-at))
	}
}

// A channel whose tries all failed for a day is disabled (failing); a
// success before that clears its failing state.
func TestAChannelFailingForADayIsDisabled(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000), mempoolTx("a2", 6000))
	ch := ta.a.notifyChannel("nc_a")
	first, second := ta.a.Notify.Outbox[0].ID, ta.a.Notify.Outbox[1].ID
	at := ta.at
	ta.ack(DeliveryResult{EntryID: first, Attempt: 1, At: at, Class: "timeout"})
	if ch.FailingSince != at {
		t.Fatalf("failing since %d, want %d", ch.FailingSince, at)
	}
	ta.ack(DeliveryResult{EntryID: first, Attempt: 2, At: at + int64(time.Hour), Delivered: true, Status: 200})
	if ch.FailingSince != 0 || ch.LastSuccessAt != at+int64(time.Hour) {
		t.Fatalf("a success left %+v", ch)
	}
	at += 2 * int64(time.Hour)
	ta.ack(DeliveryResult{EntryID: second, Attempt: 1, At: at, Class: "connection"})
	ta.ack(DeliveryResult{EntryID: second, Attempt: 2, At: at + int64(23*time.Hour), Class: "rate_limited"})
	if !ch.Enabled {
		t.Fatal("disabled within a day")
	}
	ta.ack(DeliveryResult{EntryID: second, Attempt: 3, At: at + int64(24*time.Hour), Class: "connection"})
	if ch.Enabled || ch.DisabledReason != DisabledFailing || ch.DisabledAt != at+int64(24*time.Hour) {
		t.Fatalf("after a day of failures %+v", ch)
	}
	if d := ta.due(at + int64(48*time.Hour)); len(d.Due) != 0 {
		t.Errorf("a disabled channel's entries are due: %+v", d.Due)
	}
	ta.observeChain(addrs[0], 900, mempoolTx("a3", 1))
	if n := len(ta.a.Notify.Outbox); n != 2 {
		t.Errorf("a disabled channel was enqueued to: %d entries", n)
	}
	summary, _ := OutboxQuery{}.answer(ta.a, ownerP, LevelWrite, ta.at)
	// That try was a day after the entry's first too: it was the last.
	if len(summary.Channels) != 1 || summary.Channels[0].Pending != 0 || summary.Channels[0].DisabledReason != DisabledFailing ||
		summary.Channels[0].FailingSince == nil || ta.entryOf(second).State != DeliveryGivenUp {
		t.Errorf("summary %+v", summary)
	}
}

// "Send again" makes a delivered or given-up entry pending and due now,
// with the same event and its tries counted on.
func TestSendAgain(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	e := ta.a.Notify.Outbox[0]
	eventID := e.Event.ID()
	ta.ack(DeliveryResult{EntryID: e.ID, Attempt: 1, At: ta.at, Delivered: true, Status: 200})
	ta.mustFail(CodeNotFound, ta.owner, &RedeliverEntry{EntryID: "nd_" + fmt.Sprintf("%032x", 1)})
	agent := ta.addKey(LevelWrite)
	ta.mustFail(CodeForbidden, agent, &RedeliverEntry{EntryID: e.ID})
	res := ta.mustOK(ta.owner, &RedeliverEntry{EntryID: e.ID})
	if res.Status != 202 || res.Body.(OutboxEntryView).State != DeliveryPending {
		t.Fatalf("send again: %+v", res)
	}
	d := ta.due(ta.at)
	if len(d.Due) != 1 || d.Due[0].Attempt != 2 || d.Due[0].Event.ID() != eventID {
		t.Fatalf("due after send again: %+v", d.Due)
	}
	ta.mustOK(ta.owner, &UpdateNotifyChannel{ChannelID: "nc_a", Enabled: ptr(false)})
	ta.mustFail(CodeConflict, ta.owner, &RedeliverEntry{EntryID: e.ID})
}

// Past outboxPendingMax the oldest pending entry is given up, with a line
// in the delivery log.
func TestTheOutboxIsBounded(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	tx := 0
	for len(ta.a.Notify.Outbox) <= outboxPendingMax {
		var txs []TxObservation
		for range observeTxsMax {
			tx++
			txs = append(txs, TxObservation{TxID: fmt.Sprintf("%064x", tx), State: TxMempool, ReceivedSat: 1})
		}
		ta.observeChain(addrs[0], 900, txs...)
	}
	pending := 0
	for _, e := range ta.a.Notify.Outbox {
		if e.State == DeliveryPending {
			pending++
		}
	}
	oldest := ta.a.Notify.Outbox[0]
	if pending != outboxPendingMax || oldest.State != DeliveryGivenUp || oldest.LastClass != ClassOutboxFull {
		t.Fatalf("%d pending, oldest %+v", pending, oldest)
	}
	lines := ta.a.Notify.deliveryLinesOf(oldest.ID)
	if len(lines) != 1 || lines[0].Class != ClassOutboxFull || !lines[0].GaveUp {
		t.Errorf("the give-up is not in the log: %+v", lines)
	}
	// Done entries leave a week later.
	ta.cmdAt(ta.at+int64(outboxDoneAgeMax)+1, systemP, nil)
	ta.observeChain(addrs[0], 900, mempoolTx("ff", 1))
	if ta.a.Notify.outboxEntry(oldest.ID) != nil {
		t.Error("a given-up entry outlived its week")
	}
}

// Deleting a channel drops its entries; a rule naming only deleted
// channels selects none (never every channel).
func TestDeletingAChannel(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	cardID := oneCardWithChannel(ta)
	ta.addChannel("nc_b")
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	if n := len(ta.a.Notify.Outbox); n != 2 {
		t.Fatalf("%d entries, want one per channel", n)
	}
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleCard, ID: cardID, NotifyRuleFields: rule(6, 0, []string{"nc_b"}, ChainEventKinds...)})
	ta.mustOK(ta.owner, &DeleteNotifyChannel{ChannelID: "nc_b"})
	if n := len(ta.a.Notify.Outbox); n != 1 || ta.a.Notify.Outbox[0].ChannelID != "nc_a" {
		t.Fatalf("entries after the deletion: %d", n)
	}
	ta.observeChain(addrs[0], 900, mempoolTx("a2", 5000))
	if n := len(ta.a.Notify.Outbox); n != 1 {
		t.Errorf("a rule naming a deleted channel enqueued %d", n-1)
	}
	view, _ := NotifyRulesQuery{}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if len(view.Cards) != 1 || !slices.Equal(view.Cards[0].Channels, []string{"nc_b"}) {
		t.Errorf("the rule %+v", view.Cards)
	}
}

// A rule's kinds and minimum amount choose the events told; its
// channels, where they are told.
func TestRulesChooseEventsAndChannels(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	cardID := oneCardWithChannel(ta)
	ta.addChannel("nc_b")
	ta.mustOK(ta.owner, &PutNotifyRule{Scope: RuleCard, ID: cardID, NotifyRuleFields: rule(6, 1000, []string{"nc_b"}, ChainTxSeen)})
	spent := mempoolTx("a3", 0)
	spent.SentSat = 2000
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 999), mempoolTx("a2", 1000), spent)
	ta.observeChain(addrs[0], 901, confirmedTx("a2", 901, "b1", 1000))
	var got []string
	for _, e := range ta.a.Notify.Outbox {
		got = append(got, fmt.Sprintf("%s %s %d", e.ChannelID, e.Event.Kind, e.Event.AmountSat))
	}
	if want := []string{"nc_b tx_seen 1000", "nc_b tx_seen -2000"}; !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
}

// The delivery log pages newest first, by channel; each line names its
// event's amount.
func TestDeliveryLogPages(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	ta.addChannel("nc_b")
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000))
	for _, e := range slices.Clone(ta.a.Notify.Outbox) {
		ta.ack(DeliveryResult{EntryID: e.ID, Attempt: 1, At: ta.at, Class: "timeout"})
		ta.ack(DeliveryResult{EntryID: e.ID, Attempt: 2, At: ta.at + 1, Delivered: true, Status: 200})
	}
	page, _ := DeliveryLogQuery{Limit: 3}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if len(page.Deliveries) != 3 || !page.HasMore || page.Deliveries[0].Seq != 4 || *page.NextBefore != 2 {
		t.Fatalf("first page %+v", page)
	}
	rest, _ := DeliveryLogQuery{Before: 2, Limit: 3}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if len(rest.Deliveries) != 1 || rest.HasMore || rest.Deliveries[0].Seq != 1 {
		t.Errorf("second page %+v", rest)
	}
	b, _ := DeliveryLogQuery{ChannelID: "nc_b"}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if len(b.Deliveries) != 2 || b.Deliveries[0].ChannelID != "nc_b" || !b.Deliveries[0].Delivered || b.Deliveries[1].Class != "timeout" || b.Deliveries[0].AmountSat != 5000 {
		t.Errorf("nc_b's lines %+v", b)
	}
	if _, err := (DeliveryLogQuery{Limit: DeliveryLogLimitMax + 1}).answer(ta.a, ownerP, LevelWrite, ta.at); err == nil {
		t.Error("a limit past the bound was answered")
	}
}

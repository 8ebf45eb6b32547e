package deliver

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/send"
)

// One card's entries on one channel go out one at a time and in order,
// each once, across acks: the next is due only once the previous one's
// ack applied, and the ack wakes the account. Other cards and channels
// are interleaved freely.
func TestOrderPerChannelAndCard(t *testing.T) {
	r := newRig(t, Options{})
	now := r.clock.Now()
	var want = map[[2]string][]string{}
	for _, q := range [][2]string{{"nc_a", "card_1"}, {"nc_a", "card_2"}, {"nc_b", "card_1"}} {
		for n := range 4 {
			want[q] = append(want[q], r.store.put("acct", q[0], q[1], n, now))
		}
	}
	r.run()
	r.waitFor("every entry delivered", time.Millisecond, func() bool { return r.store.allDone("acct") })

	got := map[[2]string][]string{}
	for _, s := range r.sender.sentTries() {
		q := [2]string{s.channel, s.card}
		got[q] = append(got[q], s.entry)
		if s.attempt != 1 {
			t.Errorf("%s tried as attempt %d", s.entry, s.attempt)
		}
	}
	for q, ids := range want {
		if !slices.Equal(got[q], ids) {
			t.Errorf("%v went out as %v, want %v", q, got[q], ids)
		}
	}
	if st := r.d.Stats(); st.Sent != 12 || st.Delivered != 12 || st.AcksRecorded != 12 || st.InFlight != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Results wait FlushAfter for others of their account and go as one
// RecordDeliveries; BatchMax of them go at once.
func TestAcksAreBatched(t *testing.T) {
	r := newRig(t, Options{BatchMax: 4})
	now := r.clock.Now()
	for n := range 5 {
		r.store.put("acct", "nc_a", "card_"+string(rune('a'+n)), 0, now)
	}
	r.run()
	for range 5 {
		r.started()
	}
	// Four results make a full batch, proposed without waiting.
	if got := r.recorded(); len(got) != 4 {
		t.Fatalf("the full batch held %d results", len(got))
	}
	r.waitFor("the fifth result waiting in its batch", 0, func() bool {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		return r.d.batches["acct"] != nil && len(r.d.batches["acct"].results) == 1
	})
	quiet()
	if n := len(r.store.recordCalls()); n != 1 {
		t.Fatalf("%d records before FlushAfter, want 1", n)
	}
	if got := r.flushed(); len(got) != 1 {
		t.Fatalf("the second batch held %d results", len(got))
	}
	if st := r.d.Stats(); st.AckBatches != 2 || st.AcksRecorded != 5 {
		t.Errorf("stats %+v", st)
	}
}

// An entry in flight is tried once however often its account is read
// meanwhile.
func TestAnEntryIsInFlightOnce(t *testing.T) {
	r := newRig(t, Options{})
	gate := r.sender.gate("nc_a")
	id := r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.run()
	if s := r.started(); s.entry != id {
		t.Fatalf("tried %v", s)
	}
	for range 5 {
		reads := r.store.readCount()
		r.d.Wake("acct")
		r.waitFor("the account read again", 0, func() bool { return r.store.readCount() > reads })
		r.clock.Advance(DefaultRetryEvery)
	}
	quiet()
	if tries := r.sender.sentTries(); len(tries) != 1 {
		t.Fatalf("tried %d times while in flight: %v", len(tries), tries)
	}
	close(gate)
	r.flushed()
	r.waitFor("delivered", DefaultFlushAfter, func() bool { return r.store.allDone("acct") })
	if tries := r.sender.sentTries(); len(tries) != 1 {
		t.Errorf("tried %d times: %v", len(tries), tries)
	}
}

// A receiver that does not answer holds PerChannel workers at most: the
// other channel's entries go out and are recorded meanwhile.
func TestASlowChannelDoesNotHoldBackAnother(t *testing.T) {
	r := newRig(t, Options{Workers: 10, PerChannel: 4})
	slow := r.sender.gate("nc_slow")
	now := r.clock.Now()
	for n := range 20 {
		r.store.put("acct", "nc_slow", "card_"+string(rune('a'+n)), 0, now)
	}
	for n := range 12 {
		r.store.put("acct", "nc_fast", "card_"+string(rune('a'+n)), 0, now)
	}
	r.run()
	r.waitFor("every entry of the fast channel delivered", time.Millisecond, func() bool {
		r.store.mu.Lock()
		defer r.store.mu.Unlock()
		for _, e := range r.store.outbox["acct"] {
			if e.channel == "nc_fast" && !e.done {
				return false
			}
		}
		return true
	})
	slowTries := 0
	for _, s := range r.sender.sentTries() {
		if s.channel == "nc_slow" {
			slowTries++
		}
	}
	if slowTries != 4 {
		t.Errorf("%d tries of the slow channel in flight, want PerChannel (4)", slowTries)
	}
	close(slow)
	r.waitFor("every entry delivered", time.Millisecond, func() bool { return r.store.allDone("acct") })
}

// An ack that fails is never proposed again: its entry is tried again
// (the same attempt, as the state still says) and that try is recorded.
// Each try is in exactly one Record.
func TestARefusedAckIsNotProposedAgain(t *testing.T) {
	r := newRig(t, Options{})
	refused := false
	r.store.refuse = func([]actors.DeliveryResult) error {
		if !refused {
			refused = true
			return errors.New("leadership lost")
		}
		return nil
	}
	id := r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.run()
	r.started()
	r.flushed() // refused
	r.clock.Advance(DefaultRetryEvery)
	r.started()
	r.flushed()
	r.waitFor("delivered", DefaultFlushAfter, func() bool { return r.store.allDone("acct") })
	quiet()
	tries, records := r.sender.sentTries(), r.store.recordCalls()
	if len(tries) != 2 || len(records) != 2 {
		t.Fatalf("%d tries and %d records, want 2 of each: %v %v", len(tries), len(records), tries, records)
	}
	for _, rec := range records {
		if len(rec) != 1 || rec[0].EntryID != id || rec[0].Attempt != 1 {
			t.Errorf("record %+v", rec)
		}
	}
	if st := r.d.Stats(); st.AckErrors != 1 || st.AcksRecorded != 1 || !strings.Contains(st.LastError, "leadership lost") {
		t.Errorf("stats %+v", st)
	}
}

// A node that stops leading while a try is in flight drops its ack and
// tries nothing more: the new leader sends again.
func TestAnAckRefusedForLeadershipIsDropped(t *testing.T) {
	r := newRig(t, Options{})
	gate := r.sender.gate("nc_a")
	r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.run()
	r.started()
	r.store.mu.Lock()
	r.store.serves, r.store.leading = false, 0
	r.store.mu.Unlock()
	close(gate)
	r.flushed()
	for range 5 {
		r.clock.Advance(DefaultRetryEvery)
		quiet()
	}
	if tries, records := r.sender.sentTries(), r.store.recordCalls(); len(tries) != 1 || len(records) != 1 {
		t.Errorf("%d tries and %d records after leadership moved, want 1 and 1", len(tries), len(records))
	}
	if st := r.d.Stats(); st.InFlight != 0 || st.AckErrors != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Wake reads the account at once, without waiting on any timer: the
// clock does not move.
func TestWakeOnEnqueue(t *testing.T) {
	r := newRig(t, Options{})
	r.store.put("acct", "nc_a", "card_0", 0, r.clock.Now())
	r.run()
	r.started()
	r.flushed()
	id := r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.d.Wake("acct")
	if s := r.started(); s.entry != id {
		t.Fatalf("tried %v, want %s", s, id)
	}
}

// The deliverer sleeps until the earliest NextAt its read named, then
// reads the account again; it does not poll it meanwhile.
func TestTheNextEntrysTimeWakesTheAccount(t *testing.T) {
	r := newRig(t, Options{RereadEvery: time.Hour})
	now := r.clock.Now()
	id := r.store.put("acct", "nc_a", "card_1", 0, now.Add(30*time.Second))
	r.run()
	r.waitFor("the first read", 0, func() bool { return r.store.readCount() == 1 })
	for range 29 {
		r.clock.Advance(time.Second)
		quiet()
	}
	if tries := r.sender.sentTries(); len(tries) != 0 {
		t.Fatalf("tried before its time: %v", tries)
	}
	if n := r.store.readCount(); n != 1 {
		t.Errorf("read %d times while nothing was due, want once", n)
	}
	r.clock.Advance(time.Second)
	if s := r.started(); s.entry != id {
		t.Fatalf("tried %v", s)
	}
}

// A failed try is recorded with its class, and the entry is tried again
// at the time the state schedules (attempt 2).
func TestAFailedTryIsTriedAgainAtItsTime(t *testing.T) {
	r := newRig(t, Options{RereadEvery: time.Hour})
	first := true
	r.sender.outcome = func(actors.DueDelivery) send.Outcome {
		if first {
			first = false
			return send.Outcome{Status: 500, Class: send.ClassAnswer, Detail: "the receiver answered 500 Internal Server Error", Latency: 20 * time.Millisecond}
		}
		return send.Outcome{Delivered: true, Status: 200}
	}
	r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.run()
	r.started()
	rec := r.flushed()
	if len(rec) != 1 || rec[0].Delivered || rec[0].Status != 500 || rec[0].Class != "answer" || rec[0].LatencyMs != 20 || rec[0].Attempt != 1 {
		t.Fatalf("recorded %+v", rec)
	}
	r.clock.Advance(30 * time.Second)
	if s := r.started(); s.attempt != 2 {
		t.Fatalf("tried again as %+v, want attempt 2", s)
	}
	if st := r.d.Stats(); st.Failed["answer"] != 1 || !strings.HasPrefix(st.LastError, "answer: ") {
		t.Errorf("stats %+v", st)
	}
}

// A node reads nothing while it leads nothing, and every account once
// when it comes to lead.
func TestLeadershipGainedReadsEveryAccount(t *testing.T) {
	r := newRig(t, Options{})
	r.store.leading, r.store.serves = 0, false
	now := r.clock.Now()
	r.store.put("acct1", "nc_a", "card_1", 0, now)
	r.store.put("acct2", "nc_a", "card_1", 0, now)
	r.run()
	r.clock.Advance(DefaultLeadershipEvery)
	quiet()
	if n := r.store.readCount(); n != 0 {
		t.Fatalf("read %d times while leading nothing", n)
	}
	r.store.mu.Lock()
	r.store.leading, r.store.serves = 1, true
	r.store.mu.Unlock()
	r.clock.Advance(DefaultLeadershipEvery)
	got := []string{r.started().account, r.started().account}
	slices.Sort(got)
	if !slices.Equal(got, []string{"acct1", "acct2"}) {
		t.Errorf("tried %v", got)
	}
}

// A node that loses its leadership and gains it back between two asks
// sees the same bits, but another leader may have changed its accounts
// meanwhile (the owner's "send again" through it): the count of
// leaderships gained says so, and every account is read again. Without
// it the entry waited for the minute's reread (the cluster test's
// notification held back by a leader with another key, sent again once
// this node led again 90 ms later, was not delivered in 30 s).
func TestLeadershipLostAndGainedBetweenAsksReadsEveryAccount(t *testing.T) {
	r := newRig(t, Options{})
	r.run()
	r.clock.Advance(DefaultLeadershipEvery)
	quiet()
	reads := r.store.readCount()
	// Between two asks: another leader's "send again" makes an entry due.
	r.store.put("acct1", "nc_a", "card_1", 0, r.clock.Now())
	r.store.mu.Lock()
	r.store.gained++
	r.store.mu.Unlock()
	r.clock.Advance(DefaultLeadershipEvery)
	if s := r.started(); s.account != "acct1" {
		t.Errorf("tried %+v", s)
	}
	if n := r.store.readCount(); n <= reads {
		t.Errorf("read %d times after leading again, %d before", n, reads)
	}
}

// What a try gave becomes a result RecordDeliveries accepts: latency and
// Retry-After in ms, within bounds; a class that is a word; a detail of
// one bounded line; no class when delivered.
func TestResultOf(t *testing.T) {
	start := time.Unix(1_800_000_000, 5)
	e := actors.DueDelivery{EntryID: "nd_x", Attempt: 3}
	r := resultOf(e, start, send.Outcome{Status: 503, Latency: 1500 * time.Microsecond, Class: "answer",
		Detail: "line one\nline\ttwo\u202e" + strings.Repeat("é", 400), RetryAfter: 90 * time.Second})
	if r.EntryID != "nd_x" || r.Attempt != 3 || r.At != start.UnixNano() || r.Status != 503 || r.LatencyMs != 1 || r.RetryAfterMs != 90_000 || r.Class != "answer" {
		t.Errorf("result %+v", r)
	}
	if len(r.Detail) > actors.DeliveryDetailBytesMax || !utf8.ValidString(r.Detail) || strings.ContainsAny(r.Detail, "\n\t\u202e") || !strings.HasPrefix(r.Detail, "line one line two ") {
		t.Errorf("detail %q", r.Detail)
	}
	if r := resultOf(e, start, send.Outcome{Delivered: true, Status: 200, Class: "ignored"}); r.Class != "" || !r.Delivered {
		t.Errorf("delivered %+v", r)
	}
	for class, want := range map[string]string{"": ClassOther, "no relay": ClassOther, strings.Repeat("x", 33): ClassOther, "key_mismatch": "key_mismatch"} {
		if r := resultOf(e, start, send.Outcome{Class: class}); r.Class != want {
			t.Errorf("class %q became %q, want %q", class, r.Class, want)
		}
	}
	if r := resultOf(e, start, send.Outcome{Status: 5000, Latency: 3 * time.Hour, RetryAfter: 48 * time.Hour, Class: "x"}); r.Status != 999 || r.LatencyMs != time.Hour.Milliseconds() || r.RetryAfterMs != 24*time.Hour.Milliseconds() {
		t.Errorf("bounds %+v", r)
	}
}

// An email channel on a node without a relay fails with no_relay; a kind
// this node does not know, with unknown_kind.
func TestChannelsWithoutARelay(t *testing.T) {
	c := &Channels{}
	out := c.Send(t.Context(), "acct", actors.DueDelivery{Attempt: 1, Channel: actors.NotifyChannelTarget{ID: "nc_m", Kind: actors.ChannelEmail, Target: "owner@example.com"}})
	if out.Delivered || out.Class != ClassNoRelay || !strings.Contains(out.Detail, "--smtp-relay") || strings.Contains(out.Detail, "owner@") {
		t.Errorf("email without a relay: %+v", out)
	}
	if c.SendsEmail() {
		t.Error("SendsEmail without a relay")
	}
	if out := c.Send(t.Context(), "acct", actors.DueDelivery{Channel: actors.NotifyChannelTarget{Kind: "pigeon"}}); out.Class != ClassUnknownKind {
		t.Errorf("unknown kind: %+v", out)
	}
	// Neither spends a budget, so neither waits for one.
	for _, kind := range []actors.ChannelKind{actors.ChannelEmail, "pigeon"} {
		if r := c.Room("acct", actors.NotifyChannelTarget{ID: "nc_m", Kind: kind}); r != send.Unbounded() {
			t.Errorf("the room of %s: %+v", kind, r)
		}
	}
}

// The schedule keeps each account once, at its earliest time.
func TestSchedule(t *testing.T) {
	var s schedule
	t0 := time.Unix(100, 0)
	s.add("a", t0.Add(3*time.Second))
	s.add("b", t0.Add(time.Second))
	if s.add("a", t0.Add(5*time.Second)) {
		t.Error("a later time replaced an earlier one")
	}
	if !s.add("a", t0.Add(2*time.Second)) {
		t.Error("an earlier time did not replace a later one")
	}
	if next, ok := s.next(); !ok || !next.Equal(t0.Add(time.Second)) {
		t.Errorf("next %v", next)
	}
	if got := s.due(t0.Add(2 * time.Second)); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("due %v", got)
	}
	if _, ok := s.next(); ok || len(s.at) != 0 {
		t.Error("the schedule is not empty")
	}
}

// A try this node's own budgets refused is no try: nothing is recorded,
// and the entry is tried again, as the same attempt, once the budget has
// room.
func TestATryOurBudgetsRefusedIsPutOff(t *testing.T) {
	r := newRig(t, Options{RereadEvery: time.Hour})
	limited := true
	r.sender.outcome = func(actors.DueDelivery) send.Outcome {
		if limited {
			limited = false
			return send.Outcome{Class: send.ClassRateLimited, RetryAfter: 2 * time.Second, Detail: "too many messages"}
		}
		return send.Outcome{Delivered: true, Status: 200}
	}
	r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.run()
	r.started()
	r.waitFor("the try put off", 0, func() bool { return r.d.Stats().HeldBack == 1 })
	r.clock.Advance(time.Second)
	quiet()
	if n := len(r.sender.sentTries()); n != 1 || len(r.store.recordCalls()) != 0 {
		t.Fatalf("%d tries and %d records before the budget had room", n, len(r.store.recordCalls()))
	}
	r.clock.Advance(time.Second)
	if s := r.started(); s.attempt != 1 {
		t.Errorf("tried again as attempt %d, want 1", s.attempt)
	}
	if rec := r.flushed(); len(rec) != 1 || !rec[0].Delivered || rec[0].Attempt != 1 {
		t.Errorf("recorded %+v", rec)
	}
}

// A try this node's setup refused (another notify key than the channel's,
// no SMTP relay) is no try either: nothing is recorded, so a misconfigured
// leader spends no attempt and wears out no channel; the entries are tried
// again a minute later (by then the operator, or another leader, may have
// fixed it), and the operator is told once a minute, not per try.
func TestATryThisNodesSetupRefusedIsPutOff(t *testing.T) {
	for _, class := range []string{send.ClassKeyMismatch, ClassNoRelay} {
		t.Run(class, func(t *testing.T) {
			var logged strings.Builder
			r := newRig(t, Options{RereadEvery: time.Hour, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			fixed := false
			r.sender.outcome = func(actors.DueDelivery) send.Outcome {
				if !fixed {
					return send.Outcome{Class: class, Detail: "this node is set up wrong"}
				}
				return send.Outcome{Delivered: true, Status: 200}
			}
			r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
			r.store.put("acct", "nc_a", "card_2", 0, r.clock.Now())
			r.run()
			r.started()
			r.started()
			r.waitFor("both refusals put off", 0, func() bool { return r.d.Stats().HeldBack == 2 })
			r.clock.Advance(59 * time.Second)
			quiet()
			if n := len(r.sender.sentTries()); n != 2 || len(r.store.recordCalls()) != 0 {
				t.Fatalf("%d tries and %d records within the minute", n, len(r.store.recordCalls()))
			}
			if n := strings.Count(logged.String(), "notifications held back"); n != 1 || !strings.Contains(logged.String(), "class="+class) {
				t.Errorf("the operator was told %d times of two refusals at once (want once):\n%s", n, logged.String())
			}
			fixed = true
			r.clock.Advance(time.Second)
			for range 2 {
				if s := r.started(); s.attempt != 1 {
					t.Errorf("tried again as attempt %d, want 1", s.attempt)
				}
			}
			// The clock moves until the batch's flush: its timer starts
			// only once a result is in, after the tries started.
			var recs []actors.DeliveryResult
			r.waitFor("both delivered and recorded", DefaultFlushAfter, func() bool {
				recs = slices.Concat(r.store.recordCalls()...)
				return len(recs) == 2
			})
			for _, rec := range recs {
				if !rec.Delivered || rec.Attempt != 1 {
					t.Errorf("recorded %+v, want only delivered tries, as attempt 1", rec)
				}
			}
		})
	}
}

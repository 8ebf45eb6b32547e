package deliver

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/addrwatch/addrwatch/notify/egress"
)

// roomy is a budget no test here runs out of.
var roomy = egress.Rate{PerSecond: 1000, Burst: 1000}

// budgetRig is a rig whose sender has budgets on the test's clock. Each
// result is recorded alone, at once (BatchMax 1): no flush timer shares
// the clock with the budgets' timers.
func budgetRig(t *testing.T, account, channel egress.Rate) *rig {
	r := newRig(t, Options{BatchMax: 1, RereadEvery: time.Hour, Metrics: NewMetrics(prometheus.NewRegistry())})
	r.sender.limits = egress.NewLimits(account, channel, r.clock.Now)
	return r
}

// triesOn counts the tries of account on channel ("" for any).
func (r *rig) triesOn(account, channel string) int {
	n := 0
	for _, s := range r.sender.sentTries() {
		if s.account == account && (channel == "" || s.channel == channel) {
			n++
		}
	}
	return n
}

// burst runs the deliverer and checks what its first reads started: the
// tries of each (account, channel) in want ("" for any channel), none
// refused, and waiting entries left for the budgets.
func (r *rig) burst(want map[[2]string]int, waiting int) {
	r.t.Helper()
	r.run()
	total := 0
	for _, n := range want {
		total += n
	}
	r.waitFor("the burst's tries recorded", 0, func() bool { return r.d.Stats().AcksRecorded == int64(total) })
	quiet()
	for q, n := range want {
		if got := r.triesOn(q[0], q[1]); got != n {
			r.t.Fatalf("%d tries of %v started at once, the budget allows %d", got, q, n)
		}
	}
	if st := r.d.Stats(); st.WaitingForBudget != waiting || st.HeldBack != 0 || r.sender.refusals() != 0 {
		r.t.Fatalf("after the burst: %d refused, stats %+v, want %d waiting for the budgets and none held back", r.sender.refusals(), st, waiting)
	}
	if gauge := testutil.ToFloat64(r.d.opts.Metrics.waiting); gauge != float64(waiting) {
		r.t.Fatalf("addrwatch_notify_waiting_for_budget is %v, want %d", gauge, waiting)
	}
}

// drain moves the clock on by step until every entry of the accounts is
// delivered, at most steps times, each time after the account was read;
// after each it checks that no channel's tries went past what its burst
// and rate allow.
func (r *rig) drain(step time.Duration, steps int, allowed func(elapsed time.Duration) map[[2]string]int) {
	r.t.Helper()
	for i := 1; ; i++ {
		done := true
		for _, a := range r.store.Accounts() {
			done = done && r.store.allDone(a)
		}
		if done {
			return
		}
		if i > steps {
			r.t.Fatalf("not delivered after %d steps of %s (stats %+v)", steps, step, r.d.Stats())
		}
		reads := r.store.readCount()
		r.clock.Advance(step)
		r.waitFor("the account read again", 0, func() bool { return r.store.readCount() > reads })
		quiet()
		for q, most := range allowed(time.Duration(i) * step) {
			if n := r.triesOn(q[0], q[1]); n > most {
				r.t.Fatalf("%d tries of %v %s into the drain, the budget allows %d", n, q, time.Duration(i)*step, most)
			}
		}
	}
}

// A burst of due entries over one account starts what its budget
// allows, and the rest at the budget's pace, one read a refill: none is
// started for the budget to refuse, and every try is attempt 1.
func TestABurstStartsWhatTheAccountsBudgetAllows(t *testing.T) {
	r := budgetRig(t, egress.Rate{PerSecond: 30, Burst: 5}, roomy)
	now := r.clock.Now()
	for n := range 35 {
		r.store.put("acct", "nc_"+fmt.Sprint(n%3), fmt.Sprint("card_", n), 0, now)
	}
	r.burst(map[[2]string]int{{"acct", ""}: 5}, 30)
	reads := r.store.readCount()
	// 30 a second: 3 more each 100 ms.
	r.drain(budgetWaitMin, 12, func(elapsed time.Duration) map[[2]string]int {
		return map[[2]string]int{{"acct", ""}: 5 + int(30*elapsed.Seconds()+1e-9)}
	})
	drainReads := r.store.readCount() - reads
	st := r.d.Stats()
	if r.sender.refusals() != 0 || st.HeldBack != 0 || st.Failed[string(egress.ClassRateLimited)] != 0 {
		t.Errorf("%d tries refused by the budget (stats %+v), want none", r.sender.refusals(), st)
	}
	if n := len(r.sender.sentTries()); n != 35 || st.Delivered != 35 || st.WaitingForBudget != 0 {
		t.Errorf("%d tries for 35 entries, stats %+v", n, st)
	}
	// Ten refills of three: the account is read once each (the acks of
	// the tries a read started do not read it again while it waits for
	// the budget), not once a try; the last three acks, with nothing
	// left waiting, read it as every ack does (each is a batch here).
	if drainReads > 10+3 {
		t.Errorf("the account was read %d times for 30 entries in 10 refills", drainReads)
	}
	for _, s := range r.sender.sentTries() {
		if s.attempt != 1 {
			t.Errorf("%s tried as attempt %d", s.entry, s.attempt)
		}
	}
}

// A channel's budget holds its own entries back, and no other
// channel's; each goes at its own pace.
func TestABurstStartsWhatEachChannelsBudgetAllows(t *testing.T) {
	r := budgetRig(t, roomy, egress.Rate{PerSecond: 10, Burst: 3})
	now := r.clock.Now()
	for n := range 10 {
		r.store.put("acct", "nc_a", fmt.Sprint("card_", n), 0, now)
	}
	for n := range 5 {
		r.store.put("acct", "nc_b", fmt.Sprint("card_", n), 0, now)
	}
	r.burst(map[[2]string]int{{"acct", "nc_a"}: 3, {"acct", "nc_b"}: 3}, 9)
	r.drain(budgetWaitMin, 9, func(elapsed time.Duration) map[[2]string]int {
		most := 3 + int(10*elapsed.Seconds()+1e-9)
		return map[[2]string]int{{"acct", "nc_a"}: most, {"acct", "nc_b"}: most}
	})
	if st := r.d.Stats(); r.sender.refusals() != 0 || st.HeldBack != 0 || st.Delivered != 15 || st.WaitingForBudget != 0 {
		t.Errorf("%d refused, stats %+v", r.sender.refusals(), st)
	}
}

// Accounts have budgets of their own: one that spent its budget holds
// back none of another's.
func TestAccountsBudgetsAreIndependent(t *testing.T) {
	r := budgetRig(t, egress.Rate{PerSecond: 10, Burst: 3}, roomy)
	now := r.clock.Now()
	for n := range 6 {
		r.store.put("acct1", "nc_1", fmt.Sprint("card_", n), 0, now)
		r.store.put("acct2", "nc_2", fmt.Sprint("card_", n), 0, now)
	}
	r.burst(map[[2]string]int{{"acct1", ""}: 3, {"acct2", ""}: 3}, 6)
	r.drain(budgetWaitMin, 5, func(elapsed time.Duration) map[[2]string]int {
		most := 3 + int(10*elapsed.Seconds()+1e-9)
		return map[[2]string]int{{"acct1", ""}: most, {"acct2", ""}: most}
	})
	if r.sender.refusals() != 0 {
		t.Errorf("%d tries refused", r.sender.refusals())
	}
}

// A try started within the budget but refused all the same, because
// another caller spent the budget first ("send a test"), is held back
// as before: not recorded, tried again as the same attempt once the
// budget has room.
func TestATryRefusedAfterItStartedIsHeldBack(t *testing.T) {
	r := budgetRig(t, egress.Rate{PerSecond: 1, Burst: 1}, roomy)
	gate := r.sender.gate("nc_a")
	id := r.store.put("acct", "nc_a", "card_1", 0, r.clock.Now())
	r.run()
	if s := r.started(); s.entry != id || s.attempt != 1 {
		t.Fatalf("tried %+v", s)
	}
	// "Send a test" spends the token the try was started for.
	if wait := r.sender.limits.Take("acct", "nc_test"); wait != 0 {
		t.Fatalf("the test's send refused: %s", wait)
	}
	close(gate)
	r.waitFor("the try held back", 0, func() bool { return r.d.Stats().HeldBack == 1 })
	if n := len(r.store.recordCalls()); n != 0 {
		t.Fatalf("%d records of a try the budget refused", n)
	}
	r.clock.Advance(time.Second)
	if s := r.started(); s.entry != id || s.attempt != 1 {
		t.Errorf("tried again as %+v, want attempt 1", s)
	}
	if rec := r.recorded(); len(rec) != 1 || !rec[0].Delivered || rec[0].Attempt != 1 {
		t.Errorf("recorded %+v", rec)
	}
}

package egress

import (
	"fmt"
	"testing"
	"time"
)

// clock is a hand-moved time for the rate limits.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLimitsPerEndpoint(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	l := NewLimits(Rate{PerSecond: 100, Burst: 100}, Rate{PerSecond: 2, Burst: 3}, clk.now)
	for i := range 3 {
		if wait := l.Take("acct", "ep1"); wait != 0 {
			t.Fatalf("send %d of a burst of 3 refused, wait %s", i+1, wait)
		}
	}
	wait := l.Take("acct", "ep1")
	if wait != 500*time.Millisecond {
		t.Fatalf("the 4th send at 2/s: wait %s, want 500ms", wait)
	}
	// Another endpoint of the same account has its own budget.
	if w := l.Take("acct", "ep2"); w != 0 {
		t.Fatalf("another endpoint refused: wait %s", w)
	}
	clk.advance(wait - time.Millisecond)
	if w := l.Take("acct", "ep1"); w == 0 {
		t.Fatal("a send let through before the wait it was told")
	}
	clk.advance(time.Millisecond)
	if w := l.Take("acct", "ep1"); w != 0 {
		t.Fatalf("a send refused after the wait it was told: %s", w)
	}
}

func TestLimitsPerAccount(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	l := NewLimits(Rate{PerSecond: 1, Burst: 2}, Rate{PerSecond: 100, Burst: 100}, clk.now)
	// One account spreading its sends over many endpoints still runs
	// out: that is what keeps it from flooding the node.
	for i := range 2 {
		if wait := l.Take("acct", fmt.Sprint("ep", i)); wait != 0 {
			t.Fatalf("send %d refused: %s", i, wait)
		}
	}
	if wait := l.Take("acct", "ep9"); wait != time.Second {
		t.Fatalf("the account's 3rd send at 1/s: wait %s, want 1s", wait)
	}
	if wait := l.Take("other", "ep9"); wait != 0 {
		t.Fatalf("another account refused: %s", wait)
	}
}

// TestLimitsRefusalSpendsNothing: a send refused for its endpoint leaves
// its account's budget as it was, and the other way round.
func TestLimitsRefusalSpendsNothing(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	l := NewLimits(Rate{PerSecond: 1, Burst: 2}, Rate{PerSecond: 1, Burst: 1}, clk.now)
	if l.Take("acct", "busy") != 0 {
		t.Fatal("first send refused")
	}
	for range 5 {
		if l.Take("acct", "busy") == 0 {
			t.Fatal("the busy endpoint let a second send through")
		}
	}
	if wait := l.Take("acct", "quiet"); wait != 0 {
		t.Fatalf("the refusals on the busy endpoint spent the account's budget: wait %s", wait)
	}
	// The account is now spent; its refusals must not spend the fresh
	// endpoint's token.
	for range 5 {
		if l.Take("acct", "fresh") == 0 {
			t.Fatal("a spent account let a send through")
		}
	}
	if wait := l.Take("other", "fresh"); wait != 0 {
		t.Fatalf("the spent account's refusals spent the endpoint's budget: wait %s", wait)
	}
}

// TestLimitsForgetIdleBuckets: the set of buckets does not grow with every
// key ever seen; a full bucket is dropped and a later send finds a fresh
// one, which is the same thing.
func TestLimitsForgetIdleBuckets(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	l := NewLimits(Rate{PerSecond: 10, Burst: 10}, Rate{PerSecond: 1, Burst: 1}, clk.now)
	for i := range 3 * limitersSweepMin {
		l.Take(fmt.Sprint("acct", i), fmt.Sprint("ep", i))
		clk.advance(10 * time.Millisecond)
	}
	if n := len(l.endpoint.byKey); n > limitersSweepMin+100 {
		t.Fatalf("%d endpoint buckets kept after %d keys, most of them idle", n, 3*limitersSweepMin)
	}
	// The newest key's bucket is spent and must not have been dropped.
	last := fmt.Sprint("ep", 3*limitersSweepMin-1)
	if l.Take("x", last) == 0 {
		t.Fatal("a spent bucket was forgotten")
	}
}

// TestLimitsRoom: Room says how many sends both budgets take now and when
// the next comes, spends nothing and makes no bucket; that many Takes go
// through, the next is refused, and after Next it goes through.
func TestLimitsRoom(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	l := NewLimits(Rate{PerSecond: 4, Burst: 6}, Rate{PerSecond: 2, Burst: 3}, clk.now)
	acct, ep := l.Room("acct", "ep1")
	if acct != (Room{Sends: 6, Next: 250 * time.Millisecond}) || ep != (Room{Sends: 3, Next: 500 * time.Millisecond}) {
		t.Fatalf("fresh budgets: %+v %+v", acct, ep)
	}
	if len(l.account.byKey) != 0 || len(l.endpoint.byKey) != 0 {
		t.Fatal("Room made buckets")
	}
	for i := range 3 {
		if wait := l.Take("acct", "ep1"); wait != 0 {
			t.Fatalf("send %d of the room said refused: %s", i+1, wait)
		}
	}
	acct, ep = l.Room("acct", "ep1")
	if acct != (Room{Sends: 3, Next: 250 * time.Millisecond}) || ep != (Room{Sends: 0, Next: 500 * time.Millisecond}) {
		t.Fatalf("after 3 sends: %+v %+v", acct, ep)
	}
	if l.Take("acct", "ep1") == 0 {
		t.Fatal("a send past the room let through")
	}
	clk.advance(300 * time.Millisecond)
	acct, ep = l.Room("acct", "ep1")
	// The account has 4.2 tokens: 4 sends, the fifth in 200 ms; the
	// endpoint 0.6: none, the first in 200 ms.
	if acct != (Room{Sends: 4, Next: 200 * time.Millisecond}) || ep != (Room{Sends: 0, Next: 200 * time.Millisecond}) {
		t.Fatalf("300 ms later: %+v %+v", acct, ep)
	}
	clk.advance(ep.Next)
	if _, ep := l.Room("acct", "ep1"); ep.Sends != 1 {
		t.Fatalf("after Next the endpoint has room for %d", ep.Sends)
	}
	if wait := l.Take("acct", "ep1"); wait != 0 {
		t.Fatalf("a send after Next refused: %s", wait)
	}
}

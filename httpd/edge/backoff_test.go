package edge

import (
	"fmt"
	"testing"
	"time"
)

func TestBackoffDoublesPastTheFreeAllowanceUpToItsMax(t *testing.T) {
	b := Backoff{Free: 3, First: time.Second, Max: 10 * time.Second}
	for n, want := range []time.Duration{0, 0, 0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		if got := b.delay(n); got != want {
			t.Errorf("delay(%d) = %s, want %s", n, got, want)
		}
	}
	if got := ClientBackoff.delay(1 << 30); got != 15*time.Minute {
		t.Errorf("client back-off after a billion failures %s, want its 15 min cap", got)
	}
}

func TestLedgerForgiveLeavesNoTrace(t *testing.T) {
	now := start
	l := newLedger[string](Backoff{Free: 1, First: time.Second, Max: time.Minute, Forget: time.Hour}, 8)
	l.fail("k", now)
	now = now.Add(time.Minute)
	ch, wait := l.admit("k", now)
	if wait != 0 {
		t.Fatalf("admit after one failure waits %s", wait)
	}
	// While charged, a second attempt sees two failures.
	if _, wait := l.admit("other", now); wait != 0 {
		t.Fatalf("another key waits %s", wait)
	}
	if wait := l.wait("k", now); wait != time.Second {
		t.Fatalf("wait while charged %s, want 1s", wait)
	}
	l.forgive("k", ch)
	if wait := l.wait("k", now); wait != 0 {
		t.Fatalf("wait after forgiving %s, want 0", wait)
	}
	if f, _ := l.keys.Peek("k"); f.count != 1 {
		t.Fatalf("forgiving left %d failures, want the 1 before", f.count)
	}
}

// The ledgers are bounded: past their size the least recently failed key
// goes, whatever an attacker sends.
func TestLedgerIsBounded(t *testing.T) {
	now := start
	l := newLedger[string](ClientBackoff, 16)
	for i := range 1000 {
		l.fail(fmt.Sprint(i), now)
	}
	if n := l.len(); n != 16 {
		t.Fatalf("ledger holds %d keys, want its bound 16", n)
	}
	if _, held := l.keys.Peek("0"); held {
		t.Fatal("the oldest key survived")
	}
	if _, held := l.keys.Peek("999"); !held {
		t.Fatal("the newest key was dropped")
	}
}

// Attempts read the clock before they take the ledger's lock, so one can
// find a failure recorded at a later time than its own now. Within the
// free allowance that must not make it wait: a correct sign-in among
// several at once on one account was refused with 429 under load.
func TestLedgerAdmitsWithinTheAllowanceWhateverTheClockOrder(t *testing.T) {
	l := newLedger[string](AccountBackoff, 8)
	later := start.Add(time.Millisecond)
	if _, wait := l.admit("k", later); wait != 0 {
		t.Fatalf("first attempt waits %s", wait)
	}
	for i := range AccountBackoff.Free { // Free failures, and the attempt after them, wait for nothing
		if _, wait := l.admit("k", start); wait != 0 {
			t.Fatalf("attempt %d, its clock read before the first's was recorded, waits %s", i+2, wait)
		}
	}
	if _, wait := l.admit("k", start); wait == 0 {
		t.Fatalf("an attempt after %d failures and one more is admitted at once", AccountBackoff.Free)
	}
}

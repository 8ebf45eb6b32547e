package edge

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// The back-off of owner credentials (owner.go says who earns it): failures
// counted by key in a bounded ledger, each past a free allowance doubling
// the wait before the next attempt.

// The policies of the owner credential ledgers (owner.go).
var (
	// ClientBackoff holds one client's password failures, and one
	// client's bearer failures on one account.
	ClientBackoff = Backoff{Free: 10, First: time.Second, Max: 15 * time.Minute, Forget: time.Hour}
	// AccountBackoff holds the password failures on one account.
	AccountBackoff = Backoff{Free: 10, First: time.Second, Max: 2 * time.Second, Forget: 15 * time.Minute}
	// LoginBackoff holds the sign-in failures under one login.
	LoginBackoff = AccountBackoff
)

// failureKeysMax bounds each ledger: past it the least recently failed
// key is dropped. A record is at most about 400 bytes with its key (an IP,
// the SHA-256 of an account id or of a login, or an IP and the account id
// of a bearer secret, which is at most the longest bearer secret), so the
// four ledgers stay under about 70 MB together.
const failureKeysMax = 65_536

// Backoff is one ledger's policy.
type Backoff struct {
	Free   int           // failures allowed before the first back-off
	First  time.Duration // the first back-off; each further failure doubles it
	Max    time.Duration // the longest back-off
	Forget time.Duration // a key with no failure for this long starts over
}

// delay is the back-off earned by n failures.
func (b Backoff) delay(n int) time.Duration {
	d := time.Duration(0)
	for past := n - b.Free; past > 0 && d < b.Max; past-- {
		d = max(b.First, 2*d)
	}
	return min(d, b.Max)
}

// failures is one key's record: how many, and when the last one was.
type failures struct {
	count int
	last  time.Time
}

// ledger counts recent failures by key, bounded by an LRU.
type ledger[K comparable] struct {
	policy Backoff
	mu     sync.Mutex
	keys   *simplelru.LRU[K, failures]
}

func newLedger[K comparable](policy Backoff, size int) *ledger[K] {
	keys, err := simplelru.NewLRU[K, failures](size, nil)
	if err != nil {
		panic("edge: ledger size must be positive")
	}
	return &ledger[K]{policy: policy, keys: keys}
}

// record returns key's live record; a forgotten one is dropped. The caller
// holds mu.
func (l *ledger[K]) record(key K, now time.Time) failures {
	f, found := l.keys.Peek(key)
	if found && now.Sub(f.last) >= l.policy.Forget {
		l.keys.Remove(key)
		return failures{}
	}
	return f
}

// wait is how long key must wait before its next attempt (zero: now).
func (l *ledger[K]) wait(key K, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waitLocked(l.record(key, now), now)
}

func (l *ledger[K]) waitLocked(f failures, now time.Time) time.Duration {
	// Within the free allowance there is no wait, whatever the clock: the
	// callers read now before they take mu, so a concurrent attempt that
	// read the clock later may have recorded a last failure after this
	// now, and last − now would then refuse an attempt the allowance
	// admits (a correct sign-in among eight at once on one account was
	// refused with 429 under load).
	d := l.policy.delay(f.count)
	if f.count == 0 || d == 0 {
		return 0
	}
	return max(0, f.last.Add(d).Sub(now))
}

// fail records a failure of key at now.
func (l *ledger[K]) fail(key K, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.record(key, now)
	l.keys.Add(key, failures{count: f.count + 1, last: now})
}

// charge is a failure recorded in advance, which forgive takes back.
type charge struct {
	at, before time.Time // when it was made, and the last failure before it
}

// admit charges an attempt of key at now as a failure, or returns how long
// key must still wait (charging nothing).
func (l *ledger[K]) admit(key K, now time.Time) (charge, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.record(key, now)
	if wait := l.waitLocked(f, now); wait > 0 {
		return charge{}, wait
	}
	l.keys.Add(key, failures{count: f.count + 1, last: now})
	return charge{at: now, before: f.last}, 0
}

// forgive takes back a charge whose attempt succeeded (or was never
// checked). When no failure came after it, the record is as if the attempt
// had not been made.
func (l *ledger[K]) forgive(key K, c charge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, found := l.keys.Peek(key)
	if !found || f.count == 0 {
		return // dropped meanwhile: nothing to take back
	}
	f.count--
	if f.last.Equal(c.at) {
		f.last = c.before
	}
	if f.count == 0 {
		l.keys.Remove(key)
		return
	}
	l.keys.Add(key, f)
}

// len returns the number of keys held.
func (l *ledger[K]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keys.Len()
}

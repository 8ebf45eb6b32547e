package egress

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a token bucket: Burst sends at once, then PerSecond on average.
type Rate struct {
	PerSecond float64
	Burst     int
}

// The default budgets. One block can bring an account dozens of events at
// once, hence the bursts; a receiver that gets more than a few requests a
// second from one endpoint is being flooded, whatever the cause.
var (
	AccountRateDefault  = Rate{PerSecond: 20, Burst: 200}
	EndpointRateDefault = Rate{PerSecond: 5, Burst: 50}
)

// limitersSweepMin is how many limiters a set holds before it first drops
// the idle ones; it sweeps again each time it has doubled since.
const limitersSweepMin = 1024

// Limits holds a token bucket per account and one per endpoint. A send
// takes a token from both, or from neither: a send refused for its
// endpoint must not spend its account's budget, nor the other way round.
type Limits struct {
	mu       sync.Mutex
	account  limiterSet
	endpoint limiterSet
	now      func() time.Time
}

// NewLimits makes the limits; now is the clock (time.Now when nil).
func NewLimits(account, endpoint Rate, now func() time.Time) *Limits {
	if now == nil {
		now = time.Now
	}
	return &Limits{account: newLimiterSet(account), endpoint: newLimiterSet(endpoint), now: now}
}

// Take spends one send of account's and of endpoint's budgets and returns
// 0, or spends nothing and returns how long until both would have one.
func (l *Limits) Take(account, endpoint string) (retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	a := l.account.get(account, now)
	e := l.endpoint.get(endpoint, now)
	wait := max(untilToken(a, now), untilToken(e, now))
	if wait > 0 {
		return wait
	}
	// Both hold a token and the lock keeps it so: neither AllowN fails.
	a.AllowN(now, 1)
	e.AllowN(now, 1)
	return 0
}

// untilToken is how long until lim holds a whole token, 0 when it does.
func untilToken(lim *rate.Limiter, now time.Time) time.Duration {
	return untilTokens(lim, now, 1)
}

// untilTokens is how long until lim holds n tokens (when nothing is
// spent meanwhile), 0 when it does.
func untilTokens(lim *rate.Limiter, now time.Time, n float64) time.Duration {
	missing := n - lim.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	// Rounded up to the millisecond, so that a caller who waits exactly
	// this long finds the token there.
	seconds := missing / float64(lim.Limit())
	return time.Duration(math.Ceil(seconds*1000)) * time.Millisecond
}

// Room is what one budget allows now, before anyone spends it.
type Room struct {
	// Sends is how many sends it would take now.
	Sends int
	// Next is how long until it would take one more than Sends, once
	// they are spent and if nothing else is: when a caller who used all
	// of them finds room again.
	Next time.Duration
}

// Room says what account's and endpoint's budgets allow now, spending
// nothing: a caller with many sends to make starts as many as both
// allow, and waits Next for the rest, rather than being refused by Take
// again and again. Take still decides each send (another caller may
// spend the same budgets meanwhile).
func (l *Limits) Room(account, endpoint string) (acct, ep Room) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	return l.account.room(account, now), l.endpoint.room(endpoint, now)
}

// limiterSet is the buckets of one kind, by key. A bucket that is full
// again is dropped at the next sweep: a new one starts full, so dropping
// it changes nothing, and the set stays as large as the keys active in
// the last few seconds rather than all keys ever seen.
type limiterSet struct {
	rate    Rate
	byKey   map[string]*rate.Limiter
	sweepAt int
}

func newLimiterSet(r Rate) limiterSet {
	return limiterSet{rate: r, byKey: map[string]*rate.Limiter{}, sweepAt: limitersSweepMin}
}

// room is the Room of key's bucket; one not made yet is full (it is
// not made here: asking spends nothing, and keeps nothing).
func (s *limiterSet) room(key string, now time.Time) Room {
	lim, ok := s.byKey[key]
	if !ok {
		return Room{Sends: s.rate.Burst, Next: perToken(s.rate.PerSecond)}
	}
	// Whole tokens only: Take refuses a send short of one by a rounding
	// error.
	n := max(int(math.Floor(lim.TokensAt(now))), 0)
	if n >= s.rate.Burst {
		return Room{Sends: s.rate.Burst, Next: perToken(s.rate.PerSecond)}
	}
	return Room{Sends: n, Next: untilTokens(lim, now, float64(n+1))}
}

// perToken is the time one token takes to come back at perSecond,
// rounded up to the millisecond.
func perToken(perSecond float64) time.Duration {
	return time.Duration(math.Ceil(1000/perSecond)) * time.Millisecond
}

func (s *limiterSet) get(key string, now time.Time) *rate.Limiter {
	if lim, ok := s.byKey[key]; ok {
		return lim
	}
	if len(s.byKey) >= s.sweepAt {
		for k, lim := range s.byKey {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(s.byKey, k)
			}
		}
		s.sweepAt = max(limitersSweepMin, 2*len(s.byKey))
	}
	lim := rate.NewLimiter(rate.Limit(s.rate.PerSecond), s.rate.Burst)
	s.byKey[key] = lim
	return lim
}

package main

import (
	"context"
	"fmt"
	"time"
)

// How often bench asks an account's record while it waits for a change
// to show. Every read costs the server a GET /owner/v1/watched of the
// account's hundred-odd addresses, which over a wait of seconds at a
// fixed 25 ms added a quarter to the CPU a block costs; so the interval
// grows with the wait, and a latency is read to within a twentieth of
// itself (at least 25 ms) for a few dozen reads a wait.
const (
	watchPollIntervalMin = 25 * time.Millisecond
	watchPollShare       = 20
)

// pollInterval is how long to wait before the next read of a wait that
// began waited ago.
func pollInterval(waited time.Duration) time.Duration {
	return max(watchPollIntervalMin, waited/watchPollShare)
}

// recordedTx is one transaction of an account's record.
type recordedTx struct {
	State     string `json:"state"`
	BlockHash string `json:"block_hash"`
}

// watchedRecord is what GET /owner/v1/watched shows of one account:
// which addresses the follower observed, and their transactions by
// address and txid.
type watchedRecord struct {
	observed map[string]bool
	txs      map[string]map[string]recordedTx
}

// readWatched reads a's record through the owner API.
func readWatched(c *client, public string, a *watchAccount) (watchedRecord, error) {
	var v struct {
		Addresses []struct {
			Address      string `json:"address"`
			Observed     bool   `json:"observed"`
			Transactions []struct {
				TxID string `json:"txid"`
				recordedTx
			} `json:"transactions"`
		} `json:"addresses"`
	}
	if err := c.call("GET", public+"/owner/v1/watched", a.ownerSecret, nil, 200, &v); err != nil {
		return watchedRecord{}, err
	}
	r := watchedRecord{observed: map[string]bool{}, txs: map[string]map[string]recordedTx{}}
	for _, w := range v.Addresses {
		r.observed[w.Address] = w.Observed
		r.txs[w.Address] = map[string]recordedTx{}
		for _, t := range w.Transactions {
			r.txs[w.Address][t.TxID] = t.recordedTx
		}
	}
	return r, nil
}

// observedAll reports whether the record shows every one of addresses
// observed.
func observedAll(addresses []string) func(watchedRecord) bool {
	return func(r watchedRecord) bool {
		for _, a := range addresses {
			if !r.observed[a] {
				return false
			}
		}
		return true
	}
}

// showsAll reports whether the record holds every one of pays in state
// (and, when block is set, in that block).
func showsAll(pays []payment, state, block string) func(watchedRecord) bool {
	return func(r watchedRecord) bool { return len(r.showing(pays, state, block)) == len(pays) }
}

// showing is those of pays the record holds in state (and, when block is
// set, in that block).
func (r watchedRecord) showing(pays []payment, state, block string) []payment {
	var out []payment
	for _, p := range pays {
		t, ok := r.txs[p.address][p.txid]
		if ok && t.State == state && (block == "" || t.BlockHash == block) {
			out = append(out, p)
		}
	}
	return out
}

// readErrorsMax is how long reads of a record may fail in a row before
// a wait gives up: long enough for a cluster to elect a leader after a
// kill (reads answer 503 meanwhile), short enough that a dead server
// fails the run soon.
const readErrorsMax = time.Minute

// waitRecord reads a's record, through a node public names, until done
// says it shows what is awaited, and returns that record and when the
// answer that showed it arrived: the moment it was readable, give or
// take pollInterval.
func waitRecord(ctx context.Context, c *client, public func() string, a *watchAccount, limit time.Duration, what string, done func(watchedRecord) bool) (time.Time, watchedRecord, error) {
	start := time.Now()
	deadline := start.Add(limit)
	var failing time.Time // since when reads fail, zero while they do not
	for {
		r, err := readWatched(c, public(), a)
		switch {
		case err != nil && failing.IsZero():
			failing = time.Now()
		case err != nil && time.Since(failing) > readErrorsMax:
			return time.Time{}, r, err
		case err != nil:
		case done(r):
			return time.Now(), r, nil
		default:
			failing = time.Time{}
		}
		if time.Now().After(deadline) {
			return time.Time{}, r, fmt.Errorf("account %s never showed %s within %s (last read: %v)", a.id, what, limit, err)
		}
		if err := sleepCtx(ctx, pollInterval(time.Since(start))); err != nil {
			return time.Time{}, r, err
		}
	}
}

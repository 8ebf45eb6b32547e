package balances

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// readersMax bounds the addresses asked at once by one Read: an account
// holds at most 110 cards, and the upstream client bounds its own
// concurrency besides.
const readersMax = 8

// Result is one address's balance, or why it is unknown.
type Result struct {
	Balance chain.Balance
	Err     error
}

// Read asks src for the balance of each address, several at once, on
// behalf of account (chain.WithAccount: the upstream's failures for this
// account's addresses do not refuse another account's), and returns the
// results in the order of addresses. An address src fails for has Err
// set; the others are not held back or failed by it. A nil src knows no
// balance: every result is an error.
func Read(ctx context.Context, src Source, account string, addresses []string) []Result {
	results := make([]Result, len(addresses))
	if src == nil {
		for i := range results {
			results[i].Err = errNoSource
		}
		return results
	}
	ctx = chain.WithAccount(ctx, account)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(readersMax, len(addresses)) {
		wg.Go(func() {
			for i := range next {
				results[i].Balance, results[i].Err = src.Balance(ctx, addresses[i])
			}
		})
	}
	for i := range addresses {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// errNoSource is the result of every address when there is no source.
var errNoSource = errors.New("balances: no balance source")

// Summarize is the views of results, in order, and their total: a known
// balance with its figures, an unknown one with none and degraded set,
// left out of the total, which then says it is incomplete.
func Summarize(results []Result) ([]views.Balance, views.BalanceTotal) {
	out := make([]views.Balance, len(results))
	var sum chain.BalanceSum
	complete := true
	for i, r := range results {
		if r.Err != nil || !sum.Add(r.Balance) {
			out[i], complete = views.Balance{Degraded: true}, false
			continue
		}
		out[i] = view(r.Balance)
	}
	total := views.BalanceTotal{ConfirmedSat: sum.ConfirmedSat, UnconfirmedSat: sum.UnconfirmedSat, ReceivedSat: sum.ReceivedSat, SentSat: sum.SentSat,
		TxCount: sum.TxCount, UnconfirmedTxCount: sum.UnconfirmedTxCount, LastTxAt: timeOf(sum.LastTxAt), CardCount: sum.Cards, Complete: complete}
	return out, total
}

func view(b chain.Balance) views.Balance {
	return views.Balance{ConfirmedSat: &b.ConfirmedSat, UnconfirmedSat: &b.UnconfirmedSat, ReceivedSat: &b.ReceivedSat, SentSat: &b.SentSat,
		TxCount: &b.TxCount, UnconfirmedTxCount: &b.UnconfirmedTxCount, LastTxAt: timeOf(b.LastTxAt)}
}

// timeOf is t in RFC 3339 UTC, or nil for the zero time.
func timeOf(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

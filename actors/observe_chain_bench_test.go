package actors

import (
	"fmt"
	"testing"
)

// BenchmarkDeepeningQuery is what the follower's read at a new tip costs
// an account at its bound: 110 watched addresses (10 Account cards and
// ten bitcoin Spaces of ten cards), each recording watchedTxsMax
// confirmed transactions, every one deep but the newest.
func BenchmarkDeepeningQuery(b *testing.B) {
	a := &Account{}
	for i := range 110 {
		address := fmt.Sprintf("bc1q%039d", i)
		if i < 10 {
			a.Portfolio = append(a.Portfolio, &Card{ID: fmt.Sprint("c", i), Address: address})
		} else {
			if (i-10)%10 == 0 {
				a.Spaces = append(a.Spaces, &Space{ID: fmt.Sprint("s", i), Type: SpaceBitcoin})
			}
			s := a.Spaces[len(a.Spaces)-1]
			s.Cards = append(s.Cards, &Card{ID: fmt.Sprint("b", i), Address: address})
		}
		w := &WatchedAddress{Address: address, TipHeight: 1000, ChainEvents: true}
		for j := range watchedTxsMax {
			t := &WatchedTx{TxObservation: TxObservation{TxID: fmt.Sprintf("%064d", j), State: TxConfirmed, Height: int64(900 + j), BlockHash: fmt.Sprintf("%064d", j)}}
			if j < watchedTxsMax-1 {
				t.DeepIn = t.BlockHash
			}
			w.Txs = append(w.Txs, t)
		}
		a.Watched = append(a.Watched, w)
	}
	b.ReportAllocs()
	for b.Loop() {
		targets, err := DeepeningQuery{}.answer(a, Principal{Kind: PrincipalSystem}, LevelWrite, 0)
		if err != nil || len(targets) != 110 {
			b.Fatal(len(targets), err)
		}
	}
}

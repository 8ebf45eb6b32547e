package chain

import (
	"errors"
	"fmt"
	"time"
)

// Balance is what an address holds and has moved, in satoshis: the figures
// a card's balance shows. BalanceOf computes it from the source's counters
// (AddressStats) and the time of the newest confirmed transaction; the
// chain follower can make the same value from the observations it records.
//
// Every figure is bounded (BalanceOf refuses counters outside the bounds),
// so a sum of up to BalanceSumCardsMax balances cannot overflow an int64.
type Balance struct {
	// ConfirmedSat is the balance on the chain: funded minus spent
	// outputs in blocks; 0 to SupplySatMax.
	ConfirmedSat int64
	// UnconfirmedSat is what the mempool changes of it: negative when
	// unconfirmed transactions spend more than they pay in. Confirmed
	// plus unconfirmed is 0 to SupplySatMax.
	UnconfirmedSat int64
	// ReceivedSat and SentSat are the satoshis ever paid to and spent
	// from the address, confirmed and unconfirmed: ReceivedSat - SentSat
	// is ConfirmedSat + UnconfirmedSat. Each is 0 to LifetimeSatMax.
	ReceivedSat int64
	SentSat     int64
	// TxCount is the transactions touching the address, confirmed and
	// unconfirmed; UnconfirmedTxCount is those in the mempool.
	TxCount            int64
	UnconfirmedTxCount int64
	// LastTxAt is the block time of the newest confirmed transaction, in
	// UTC; zero when there is none. An unconfirmed transaction has no time
	// yet (UnconfirmedTxCount says it is there).
	LastTxAt time.Time
}

const (
	// SupplySatMax is every bitcoin there will ever be, 21 million BTC,
	// in satoshis: no balance can hold more.
	SupplySatMax = satoshisMax
	// LifetimeSatMax bounds an address's lifetime counters (satoshis
	// received or sent, transactions): 2^53, the largest integer a JSON
	// number carries exactly to a float64 decoder (a JavaScript client),
	// about 90 million BTC, over four times the supply. Coins may pass
	// through one address many times, so the supply does not bound these.
	LifetimeSatMax = 1 << 53
	// BalanceSumCardsMax is how many balances a sum may add without any
	// chance of overflow: 1000 x 2^53 < 2^63. An account holds at most a
	// ninth of that many cards.
	BalanceSumCardsMax = 1000
)

// ErrBalanceOutOfRange: the source's counters describe no possible
// balance (a negative or larger-than-supply balance, a counter past
// LifetimeSatMax). The balance is unknown rather than wrong.
var ErrBalanceOutOfRange = errors.New("chain: the address's counters are out of range")

// BalanceOf is the balance of an address whose counters are stats and
// whose newest confirmed transaction has block time lastTx (zero: none).
func BalanceOf(stats AddressStats, lastTx time.Time) (Balance, error) {
	for _, c := range []int64{stats.Chain.FundedTxoSum, stats.Chain.SpentTxoSum, stats.Chain.TxCount,
		stats.Mempool.FundedTxoSum, stats.Mempool.SpentTxoSum, stats.Mempool.TxCount} {
		if c < 0 || c > LifetimeSatMax {
			return Balance{}, fmt.Errorf("%w: counter %d", ErrBalanceOutOfRange, c)
		}
	}
	// Each counter is at most 2^53, so no sum or difference below can
	// overflow.
	b := Balance{
		ConfirmedSat:       stats.Chain.FundedTxoSum - stats.Chain.SpentTxoSum,
		UnconfirmedSat:     stats.Mempool.FundedTxoSum - stats.Mempool.SpentTxoSum,
		ReceivedSat:        stats.Chain.FundedTxoSum + stats.Mempool.FundedTxoSum,
		SentSat:            stats.Chain.SpentTxoSum + stats.Mempool.SpentTxoSum,
		TxCount:            stats.Chain.TxCount + stats.Mempool.TxCount,
		UnconfirmedTxCount: stats.Mempool.TxCount,
	}
	if err := b.check(); err != nil {
		return Balance{}, err
	}
	if stats.Chain.TxCount > 0 && !lastTx.IsZero() {
		b.LastTxAt = lastTx.UTC()
	}
	return b, nil
}

// check reports a balance outside the bounds the fields promise.
func (b Balance) check() error {
	switch {
	case b.ConfirmedSat < 0 || b.ConfirmedSat > SupplySatMax:
		return fmt.Errorf("%w: confirmed balance %d", ErrBalanceOutOfRange, b.ConfirmedSat)
	case b.UnconfirmedSat < -SupplySatMax || b.UnconfirmedSat > SupplySatMax:
		return fmt.Errorf("%w: unconfirmed balance %d", ErrBalanceOutOfRange, b.UnconfirmedSat)
	case b.ConfirmedSat+b.UnconfirmedSat < 0 || b.ConfirmedSat+b.UnconfirmedSat > SupplySatMax:
		return fmt.Errorf("%w: balance with the mempool %d", ErrBalanceOutOfRange, b.ConfirmedSat+b.UnconfirmedSat)
	case b.ReceivedSat < 0 || b.ReceivedSat > LifetimeSatMax || b.SentSat < 0 || b.SentSat > LifetimeSatMax:
		return fmt.Errorf("%w: %d received, %d sent", ErrBalanceOutOfRange, b.ReceivedSat, b.SentSat)
	case b.ReceivedSat-b.SentSat != b.ConfirmedSat+b.UnconfirmedSat:
		return fmt.Errorf("%w: %d received less %d sent is not the balance %d", ErrBalanceOutOfRange, b.ReceivedSat, b.SentSat, b.ConfirmedSat+b.UnconfirmedSat)
	case b.TxCount < 0 || b.TxCount > LifetimeSatMax || b.UnconfirmedTxCount < 0 || b.UnconfirmedTxCount > b.TxCount:
		return fmt.Errorf("%w: %d transactions, %d unconfirmed", ErrBalanceOutOfRange, b.TxCount, b.UnconfirmedTxCount)
	}
	return nil
}

// BalanceSum is the sum of several balances (a Space's cards, the
// Portfolio's): each figure added up, LastTxAt the latest. TxCount counts
// a transaction between two of the cards once for each.
type BalanceSum struct {
	Balance
	// Cards is how many balances were added.
	Cards int
}

// Add adds b to the sum. It refuses (false, the sum unchanged) a balance
// outside the bounds of Balance's fields or past BalanceSumCardsMax, so a
// sum never overflows, whoever made b.
func (s *BalanceSum) Add(b Balance) bool {
	if s.Cards >= BalanceSumCardsMax || b.check() != nil {
		return false
	}
	s.Cards++
	s.ConfirmedSat += b.ConfirmedSat
	s.UnconfirmedSat += b.UnconfirmedSat
	s.ReceivedSat += b.ReceivedSat
	s.SentSat += b.SentSat
	s.TxCount += b.TxCount
	s.UnconfirmedTxCount += b.UnconfirmedTxCount
	if b.LastTxAt.After(s.LastTxAt) {
		s.LastTxAt = b.LastTxAt
	}
	return true
}

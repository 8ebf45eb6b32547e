package balances

import (
	"context"
	"errors"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// Recorded is what the chain follower recorded of an address in an
// account: its totals as the source gave them at the tip it was observed
// at, and the block time of its newest confirmed transaction (zero when
// none). recorded is false when the follower has observed nothing of it
// yet.
type Recorded interface {
	Recorded(ctx context.Context, account, address string) (stats chain.AddressStats, newest time.Time, recorded bool, err error)
}

// Observed is a Source over what the chain follower recorded in each
// account's replicated state, so that a page view asks no explorer and
// every node answers alike. An address the follower has not observed yet
// (a card just added) is read from fallback until it has; nil fallback
// leaves it unknown. The account is the one Read names (chain.WithAccount).
func Observed(recorded Recorded, fallback Source) Source {
	return observed{recorded, fallback}
}

type observed struct {
	recorded Recorded
	fallback Source
}

// errNotObserved is the balance of an address the follower has not
// observed yet, without a fallback.
var errNotObserved = errors.New("the chain follower has not observed this address yet")

func (o observed) Balance(ctx context.Context, address string) (chain.Balance, error) {
	stats, newest, recorded, err := o.recorded.Recorded(ctx, chain.AccountOf(ctx), address)
	switch {
	case err != nil:
		return chain.Balance{}, err
	case recorded:
		return chain.BalanceOf(stats, newest)
	case o.fallback != nil:
		return o.fallback.Balance(ctx, address)
	}
	return chain.Balance{}, errNotObserved
}

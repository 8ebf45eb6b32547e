package chain

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
)

// Network is the Bitcoin network whose addresses cards hold and whose
// chain the source follows (--network). It is fixed when a data dir is
// created and recorded in each account, so that every replica validates
// an address the same way.
type Network string

// The networks --network takes.
const (
	Mainnet Network = "mainnet"
	Testnet Network = "testnet"
	Signet  Network = "signet"
	Regtest Network = "regtest"
)

// Networks lists every Network, mainnet first.
func Networks() []Network { return []Network{Mainnet, Testnet, Signet, Regtest} }

// ParseNetwork reads a --network value.
func ParseNetwork(s string) (Network, error) {
	for _, n := range Networks() {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("%w: the network must be mainnet, testnet, signet or regtest, not %q", ErrInvalidArgument, s)
}

// Params are btcd's parameters of the network: its address prefixes and
// its genesis block.
func (n Network) Params() *chaincfg.Params {
	switch n {
	case Testnet:
		return &chaincfg.TestNet3Params
	case Signet:
		return &chaincfg.SigNetParams
	case Regtest:
		return &chaincfg.RegressionNetParams
	}
	return &chaincfg.MainNetParams
}

// OrMainnet is n, or Mainnet for the empty Network of an account made
// before networks were recorded.
func (n Network) OrMainnet() Network {
	if n == "" {
		return Mainnet
	}
	return n
}

// ErrWrongNetwork says a source's chain is not the one --network names.
var ErrWrongNetwork = errors.New("the chain source is on another network")

// CheckNetwork asks src for its genesis block and refuses a source whose
// chain starts with another than n's: a node on testnet would otherwise
// show a mainnet address as empty, and the follower record facts of
// another chain.
func CheckNetwork(ctx context.Context, src Source, n Network) error {
	hash, err := src.BlockHash(ctx, 0)
	if err != nil {
		return fmt.Errorf("asking the chain source for its genesis block: %w", err)
	}
	if want := n.Params().GenesisHash.String(); hash != want {
		return fmt.Errorf("%w: its genesis block is %s, %s's is %s", ErrWrongNetwork, hash, n, want)
	}
	return nil
}

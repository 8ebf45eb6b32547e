package btcdsource

import (
	"context"
	"fmt"
	"slices"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcutil"
)

// addressBytesMax bounds an address asked about.
const addressBytesMax = 128

// AddressStats is the address's lifetime counters, confirmed and in the
// mempool, summed over its whole history as btcd lists it (btcd keeps
// no such counters): one request when its index is held, more the first
// time (DESIGN.md).
func (s *Source) AddressStats(ctx context.Context, addr string) (chain.AddressStats, error) {
	addr, err := s.address(addr)
	if err != nil {
		return chain.AddressStats{}, err
	}
	ix, err := s.fresh(ctx, "address", addr)
	if err != nil {
		return chain.AddressStats{}, err
	}
	defer ix.release()
	return chain.AddressStats{Address: addr, Chain: ix.chainStats, Mempool: ix.mempoolStats}, nil
}

// MempoolTxs is the address's unconfirmed transactions, newest first as
// far as btcd tells (sortNewestFirst), at most 50 as Esplora sends.
func (s *Source) MempoolTxs(ctx context.Context, addr string) ([]chain.Tx, error) {
	addr, err := s.address(addr)
	if err != nil {
		return nil, err
	}
	ix, err := s.fresh(ctx, "mempool txs", addr)
	if err != nil {
		return nil, err
	}
	defer ix.release()
	return slices.Clone(ix.mempool), nil
}

// address checks that addr is an address of the source's network in the
// form btcd writes it (the canonical form chain.ValidateBitcoinAddressOn
// gives), which answers are compared with.
func (s *Source) address(addr string) (string, error) {
	if addr == "" || len(addr) > addressBytesMax {
		return "", fmt.Errorf("%w: address must be 1 to %d bytes", chain.ErrInvalidArgument, addressBytesMax)
	}
	a, err := btcutil.DecodeAddress(addr, s.params)
	if err != nil || !a.IsForNet(s.params) {
		return "", fmt.Errorf("%w: not an address of %s", chain.ErrInvalidArgument, s.params.Name)
	}
	if _, isKey := a.(*btcutil.AddressPubKey); isKey || a.EncodeAddress() != addr {
		return "", fmt.Errorf("%w: the address is not in its canonical form", chain.ErrInvalidArgument)
	}
	return addr, nil
}

package main

import (
	"context"
	"errors"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/watch"
)

// followerStore is the chain follower's view of this node's accounts: the
// ones it leads, read with the system's credential, and its proposals,
// made with the leader's clock as every command is.
type followerStore struct {
	accounts accountStore
	ids      func() []string
	leading  func() bool
	now      func() time.Time
	// wake tells the deliverer an account enqueued notifications; nil
	// tells nobody.
	wake func(account string)
}

func (s followerStore) Leading() bool { return s.leading() }

// Watched reads every account this node leads; an account it does not
// lead (another group's leader has it, or leadership just moved) or one
// deleted since its ID was listed is skipped.
func (s followerStore) Watched(ctx context.Context, recordsOf func(string) bool) ([]watch.Target, error) {
	return s.targets(ctx, actors.WatchTargetsQuery{RecordsOf: recordsOf})
}

// Deepening reads the addresses a tip may deepen, of every account this
// node leads, as Watched does.
func (s followerStore) Deepening(ctx context.Context) ([]watch.Target, error) {
	return s.targets(ctx, actors.DeepeningQuery{})
}

func (s followerStore) targets(ctx context.Context, q actors.QueryOf[[]actors.WatchTarget]) ([]watch.Target, error) {
	var out []watch.Target
	for _, id := range s.ids() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cred := actors.Credential{Kind: actors.CredentialSystem, AccountID: id, Now: s.now().UnixNano()}
		targets, err := actors.Answer[[]actors.WatchTarget](s.accounts.Query(ctx, cred, q))
		if err != nil {
			continue
		}
		for _, t := range targets {
			out = append(out, watch.Target{Account: id, Address: t.Address, Recorded: t.Recorded, DeepFrom: t.DeepFrom, DeepAt: t.DeepAt})
		}
	}
	return out, nil
}

// Observe proposes what the follower saw of one address to the account:
// as ObserveChain, which derives chain events, once every voter applies
// it (feature version 5). Until then the leader refuses that kind before
// the log (clustererr.ErrFeatureNotAdmitted) and the facts go as the
// ObserveAddress they carry, which every voter of version 4 records
// alike; a tip-only observation, which records nothing but what deepens,
// is left out.
func (s followerStore) Observe(ctx context.Context, account string, obs *actors.ObserveChain) error {
	cmd := &actors.Command{Account: account, At: s.now().UnixNano(), Principal: actors.Principal{Kind: actors.PrincipalSystem}, Payload: obs}
	res, err := s.accounts.Propose(ctx, cmd)
	if v, isView := res.Body.(actors.ObservedView); err == nil && isView && v.Enqueued > 0 && s.wake != nil {
		// The deliverer on this node, the leader, sends them now rather
		// than at its next look at the account.
		s.wake(account)
	}
	if errors.Is(err, clustererr.ErrFeatureNotAdmitted) {
		if obs.TipOnly {
			return nil
		}
		cmd.Payload = &obs.ObserveAddress
		_, err = s.accounts.Propose(ctx, cmd)
	}
	var refusal *actors.Error
	if errors.As(err, &refusal) && refusal.Code == actors.CodeNotFound {
		return nil // the card went between the read and the proposal
	}
	return err
}

// Recorded is what the follower recorded of address in account, for the
// balances the site and the History summary show (balances.Observed).
func (s followerStore) Recorded(ctx context.Context, account, address string) (chain.AddressStats, time.Time, bool, error) {
	cred := actors.Credential{Kind: actors.CredentialSystem, AccountID: account, Now: s.now().UnixNano()}
	v, err := actors.Answer[actors.AddressRecordView](s.accounts.Query(ctx, cred, actors.AddressRecordQuery{Address: address}))
	if err != nil || !v.Observed {
		return chain.AddressStats{}, time.Time{}, false, err
	}
	stats := chain.AddressStats{Address: address,
		Chain:   chain.TxoStats{TxCount: v.Confirmed.TxCount, FundedTxoSum: v.Confirmed.FundedSat, SpentTxoSum: v.Confirmed.SpentSat},
		Mempool: chain.TxoStats{TxCount: v.Mempool.TxCount, FundedTxoSum: v.Mempool.FundedSat, SpentTxoSum: v.Mempool.SpentSat}}
	var newest time.Time
	if v.LastConfirmedAt > 0 {
		newest = time.Unix(v.LastConfirmedAt, 0)
	}
	return stats, newest, true, nil
}

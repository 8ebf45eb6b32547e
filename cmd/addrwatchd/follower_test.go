package main

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// gatedProposals is an accountStore whose leader admits feature versions
// up to admitted, as cluster/versions.go's gate does, and records what
// entered the log.
type gatedProposals struct {
	accountStore
	admitted actors.FeatureVersion
	logged   []actors.Payload
}

func (g *gatedProposals) Propose(_ context.Context, cmd *actors.Command) (actors.Result, error) {
	if want := cmd.Payload.Kind().FeatureVersion(); want > g.admitted {
		return actors.Result{}, &clustererr.VersionError{Want: uint32(want), Behind: []string{"n2 (version 4)"}}
	}
	g.logged = append(g.logged, cmd.Payload)
	return actors.Result{}, nil
}

// The follower's facts go as ObserveChain once every voter applies it,
// and as the ObserveAddress they carry while one does not (a rolling
// upgrade): never both, never neither; a tip-only observation, which has
// nothing to record without events, then goes nowhere.
func TestTheFollowerProposesObserveChainOnceAdmitted(t *testing.T) {
	obs := &actors.ObserveChain{ObserveAddress: actors.ObserveAddress{Address: "bcrt1qexample", TipHeight: 7, TipHash: "tip",
		Txs: []actors.TxObservation{{TxID: "tx", State: actors.TxMempool, ReceivedSat: 5}}}}
	tipOnly := &actors.ObserveChain{ObserveAddress: actors.ObserveAddress{Address: "bcrt1qexample", TipHeight: 8, TipHash: "tip"}, TipOnly: true}
	for _, tc := range []struct {
		admitted actors.FeatureVersion
		want     []actors.Payload
	}{
		{5, []actors.Payload{obs, tipOnly}},
		{4, []actors.Payload{&obs.ObserveAddress}},
	} {
		g := &gatedProposals{admitted: tc.admitted}
		s := followerStore{accounts: g, now: time.Now}
		for _, o := range []*actors.ObserveChain{obs, tipOnly} {
			if err := s.Observe(context.Background(), "acct", o); err != nil {
				t.Fatalf("admitting version %d: %v", tc.admitted, err)
			}
		}
		if !reflect.DeepEqual(g.logged, tc.want) {
			t.Errorf("admitting version %d, the log holds %#v, want %#v", tc.admitted, g.logged, tc.want)
		}
	}
}

// answering is an accountStore whose proposals apply with body.
type answering struct {
	accountStore
	body any
}

func (a answering) Propose(context.Context, *actors.Command) (actors.Result, error) {
	return actors.Result{Status: 200, Body: a.body}, nil
}

// An observation that enqueued notifications wakes the deliverer for its
// account at once; one that enqueued none does not.
func TestAnObservationThatEnqueuedWakesTheDeliverer(t *testing.T) {
	obs := &actors.ObserveChain{ObserveAddress: actors.ObserveAddress{Address: "bcrt1qexample", TipHeight: 7, TipHash: "tip"}}
	for _, tc := range []struct {
		view actors.ObservedView
		want []string
	}{
		{actors.ObservedView{New: 1, Events: 1, Enqueued: 2}, []string{"acct"}},
		{actors.ObservedView{New: 1, Events: 1}, nil},
	} {
		var woken []string
		s := followerStore{accounts: answering{body: tc.view}, now: time.Now, wake: func(a string) { woken = append(woken, a) }}
		if err := s.Observe(context.Background(), "acct", obs); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(woken, tc.want) {
			t.Errorf("%+v woke %v, want %v", tc.view, woken, tc.want)
		}
	}
}

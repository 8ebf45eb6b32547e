package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// The embedded sim tells the follower of each new block, so a node
// started with the defaults reads its watched addresses once a block, not
// every few seconds (watch.Follower.Run).
func TestTheDefaultChainSourceNotifies(t *testing.T) {
	cfg, err := parseConfig(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	src, closeSource, err := openChain(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer closeSource()
	if _, notifies := src.(chain.Notifier); !notifies {
		t.Fatalf("the default source (%T) does not notify", src)
	}
}

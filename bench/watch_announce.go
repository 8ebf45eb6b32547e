package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
)

// announceWait bounds how long a block's websocket announcement is
// awaited after Mine returned its hash; it comes within milliseconds.
const announceWait = time.Second

// announcements notes when btcd announces each new block to a websocket
// client of bench's own (notifyblocks), as it would to any listener. A
// block's latency is timed from the first sign of it: this announcement,
// or Mine returning its hash if that came first.
type announcements struct {
	client *rpcclient.Client
	mu     sync.Mutex
	at     map[string]time.Time // by block hash
}

// listenBlocks connects to the node's websocket and asks it for blocks.
func listenBlocks(rpc regtest.RPC) (*announcements, error) {
	a := &announcements{at: map[string]time.Time{}}
	handlers := &rpcclient.NotificationHandlers{
		OnFilteredBlockConnected: func(_ int32, header *wire.BlockHeader, _ []*btcutil.Tx) {
			now := time.Now()
			a.mu.Lock()
			a.at[header.BlockHash().String()] = now
			a.mu.Unlock()
		},
	}
	conn := &rpcclient.ConnConfig{Host: rpc.Host, Endpoint: "ws", User: rpc.User, Pass: rpc.Password, Certificates: rpc.Cert}
	c, err := rpcclient.New(conn, handlers)
	if err != nil {
		return nil, fmt.Errorf("btcd's websocket: %w", err)
	}
	if err := c.NotifyBlocks(); err != nil {
		c.Shutdown()
		return nil, fmt.Errorf("btcd's block notifications: %w", err)
	}
	a.client = c
	return a, nil
}

// announced is when bench first knew of block hash: its announcement, or
// mined (when Mine returned it) if that was earlier or no announcement
// came within announceWait.
func (a *announcements) announced(hash string, mined time.Time) time.Time {
	for deadline := time.Now().Add(announceWait); ; {
		a.mu.Lock()
		at, ok := a.at[hash]
		a.mu.Unlock()
		if ok {
			if at.Before(mined) {
				return at
			}
			return mined
		}
		if time.Now().After(deadline) {
			return mined
		}
		time.Sleep(time.Millisecond)
	}
}

func (a *announcements) close() {
	a.client.Shutdown()
	a.client.WaitForShutdown()
}

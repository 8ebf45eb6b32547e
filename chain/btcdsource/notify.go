package btcdsource

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/wire"
)

// Notify and Watch make the source a chain.Notifier over btcd's
// websocket notifications: notifyblocks for every block connected or
// disconnected, and loadtxfilter with the watched addresses and their
// unspent outputs (filter.go) for the transactions that touch them, in
// the mempool (relevanttxaccepted) and in each block
// (filteredblockconnected). So the follower reads only the addresses a
// block or a transaction touched. DESIGN.md has the whole story.

const (
	opNotify = "notify"
	// watchAddressesMax bounds the addresses Watch takes.
	watchAddressesMax = 100_000
	// watchOutpointsMax bounds the unspent outputs the filter holds
	// (about 100 bytes each here, as much again in btcd).
	watchOutpointsMax = 200_000
	// filterItemsPerRequest bounds the addresses and outpoints of one
	// loadtxfilter (about 100 bytes each): a larger filter is sent in
	// several, the first replacing btcd's, the others adding to it.
	filterItemsPerRequest = 5_000
	// pendingAddressesMax bounds the addresses named by the changes the
	// follower has not taken yet (chain.PendingChange), past which they
	// are All.
	pendingAddressesMax = 10_000
)

var _ chain.Notifier = (*Source)(nil)

// notifier is the source's side of btcd's notifications: the filter it
// asks btcd to hold, and the one connection they come by.
type notifier struct {
	src      *Source
	endpoint *wsEndpoint
	// messageBytesMax bounds a message from btcd: wsMessageBytesMax, less
	// in tests.
	messageBytesMax int64
	filter          *filterSet
	// sending is held while btcd is sent a filter or an addition to it
	// and while it answers, so that what btcd holds is what the
	// requests say in the order their snapshots were taken.
	sending ctxLock

	held heldConn
}

func newNotifier(s *Source, endpoint *wsEndpoint) *notifier {
	return &notifier{
		src: s, endpoint: endpoint,
		messageBytesMax: wsMessageBytesMax,
		filter:          newFilterSet(s.params, watchOutpointsMax),
		sending:         make(ctxLock, 1),
	}
}

// Notify connects to btcd's websocket notifications and sends a Change
// for every block connected (its tip, and the watched addresses its
// transactions pay or spend from), for every mempool transaction that
// pays or spends from a watched address (those addresses), and for every
// block disconnected (All, at its parent). The channel is closed when
// the connection ends (btcd dropped it, it went silent, a message broke
// a bound, or ctx ended), and what was pending with it: the follower
// then calls Notify again and sweeps everything. A Notify ends the
// connection an earlier one made.
func (s *Source) Notify(ctx context.Context) (<-chan chain.Change, error) {
	n := s.notify
	conn, err := n.endpoint.dial(ctx, opNotify, n.messageBytesMax)
	if err != nil {
		return nil, err
	}
	old, ok := n.held.replace(conn)
	if !ok {
		return nil, &chain.UpstreamError{Op: opNotify, Err: errClosed}
	}
	if old != nil {
		old.close(errors.New("a newer Notify took over"))
	}
	pending := chain.NewPendingChange(pendingAddressesMax)
	out := make(chan chain.Change)
	go conn.read(func(method string, params []json.RawMessage) error {
		return n.note(pending, method, params)
	})
	go conn.keepAlive()
	go deliver(pending, out, conn.done)
	go func() {
		select {
		case <-ctx.Done():
			conn.close(ctx.Err())
		case <-conn.done:
		}
	}()
	if err := conn.call(ctx, opNotify, btcjson.NewNotifyBlocksCmd(), nil); err != nil {
		conn.close(err)
		return nil, err
	}
	if err := n.reload(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// Watch makes addresses (those of the source's network, in canonical
// form; others can match nothing) the ones Notify names, and loads them
// into btcd's filter with the unspent outputs known of each. An address
// not watched before has its index read afresh next time, so that the
// read learns every output it holds; the follower reads it right after.
func (s *Source) Watch(ctx context.Context, addresses []string) error {
	set := make([]string, 0, len(addresses))
	seen := make(map[string]bool, len(addresses))
	for _, a := range addresses {
		if canonical, err := s.address(a); err == nil && !seen[canonical] {
			seen[canonical] = true
			set = append(set, canonical)
		}
	}
	if len(set) > watchAddressesMax {
		return fmt.Errorf("%w: btcdsource: %d addresses to watch, more than %d", chain.ErrInvalidArgument, len(set), watchAddressesMax)
	}
	for _, a := range s.notify.filter.set(set) {
		s.indexes.forget(a)
	}
	return s.notify.reload(ctx)
}

// reload replaces btcd's filter with the whole filterSet. Without a live
// connection there is nothing to do: the next Notify loads it. A failure
// ends the connection, since btcd's filter is then unknown.
func (n *notifier) reload(ctx context.Context) error {
	if err := n.sending.acquire(ctx, opNotify); err != nil {
		return err
	}
	defer n.sending.release()
	conn, _ := n.held.current()
	if conn == nil {
		return nil
	}
	addresses, outpoints := n.filter.snapshot()
	if err := sendFilter(ctx, conn, true, addresses, outpoints); err != nil {
		conn.close(err)
		return err
	}
	return nil
}

// flush sends btcd the outpoints learned since it was last sent the
// filter, so that once a read of a watched address returns, btcd matches
// the spends of every output the read found. A failure ends the
// connection (the follower then sweeps everything); a caller that gives
// up while waiting its turn leaves them pending for the next flush.
func (n *notifier) flush(ctx context.Context) {
	if !n.filter.hasPending() || n.sending.acquire(ctx, opNotify) != nil {
		return
	}
	defer n.sending.release()
	conn, _ := n.held.current()
	if conn == nil {
		return
	}
	outpoints := n.filter.takePending()
	if len(outpoints) == 0 {
		return // a reload sent them meanwhile
	}
	// Once taken the outpoints must reach btcd, whether or not the
	// caller waits: the request's own timeout bounds it.
	if err := sendFilter(context.WithoutCancel(ctx), conn, false, nil, outpoints); err != nil {
		conn.close(err)
	}
}

// sendFilter sends addresses and outpoints in loadtxfilter requests of
// filterItemsPerRequest at most, the first replacing btcd's filter when
// reload, the others adding to it. A reload sends one request even when
// both are empty, which empties btcd's filter.
func sendFilter(ctx context.Context, conn *wsConn, reload bool, addresses []string, outpoints []btcjson.OutPoint) error {
	for first := true; first || len(addresses)+len(outpoints) > 0; first = false {
		na := min(len(addresses), filterItemsPerRequest)
		no := min(len(outpoints), filterItemsPerRequest-na)
		cmd := btcjson.NewLoadTxFilterCmd(reload && first, append([]string{}, addresses[:na]...), append([]btcjson.OutPoint{}, outpoints[:no]...))
		addresses, outpoints = addresses[na:], outpoints[no:]
		if err := conn.call(ctx, opNotify, cmd, nil); err != nil {
			return err
		}
	}
	return nil
}

// deliver sends what is pending on out, one merged change at a time,
// until done is closed; then it closes out, and what is pending is
// dropped (the follower sweeps everything when it notifies again).
// btcd never waits for its client: it queues notifications without
// bound, so the connection is read as fast as btcd writes, and what the
// follower has not taken waits here, merged.
func deliver(pending *chain.PendingChange, out chan<- chain.Change, done <-chan struct{}) {
	defer close(out)
	for {
		select {
		case <-done:
			return
		case <-pending.Ready():
		}
		c, ok := pending.Take()
		if !ok {
			continue
		}
		select {
		case <-done:
			return
		case out <- c:
		}
	}
}

// note turns one of btcd's notifications into a change for the follower.
// It runs on the connection's reading goroutine, so it never waits: the
// change is merged into what is pending. A notification that does not
// decode ends the connection.
func (n *notifier) note(q *chain.PendingChange, method string, params []json.RawMessage) error {
	switch method {
	case btcjson.FilteredBlockConnectedNtfnMethod:
		var height int32
		var header string
		var txHexes []string
		if err := unmarshalParams(params, &height, &header, &txHexes); err != nil {
			return err
		}
		h, err := decodeHeader(header)
		if err != nil || height < 0 {
			return malformed(opNotify, "a block connected that does not decode")
		}
		txs := make([]*wire.MsgTx, len(txHexes))
		for i, raw := range txHexes {
			if txs[i], err = decodeRawTx(opNotify, raw); err != nil {
				return err
			}
		}
		tip := chain.BlockRef{Height: int64(height), Hash: h.BlockHash().String()}
		n.src.heights.Add(tip.Hash, tip.Height)
		q.Add(chain.Change{Tip: tip, Addresses: n.filter.touched(txs, true)})
	case btcjson.FilteredBlockDisconnectedNtfnMethod:
		var height int32
		var header string
		if err := unmarshalParams(params, &height, &header); err != nil {
			return err
		}
		h, err := decodeHeader(header)
		if err != nil || height < 1 {
			return malformed(opNotify, "a block disconnected that does not decode")
		}
		// Which addresses the block's transactions touched is not said:
		// every one may have changed.
		q.Add(chain.Change{All: true, Tip: chain.BlockRef{Height: int64(height) - 1, Hash: h.PrevBlock.String()}})
	case btcjson.RelevantTxAcceptedNtfnMethod:
		var raw string
		if err := unmarshalParams(params, &raw); err != nil {
			return err
		}
		tx, err := decodeRawTx(opNotify, raw)
		if err != nil {
			return err
		}
		// None named: the filter btcd matched was one Watch has since
		// replaced, for an address no longer watched.
		if touched := n.filter.touched([]*wire.MsgTx{tx}, false); len(touched) > 0 {
			q.Add(chain.Change{Addresses: touched})
		}
	}
	// Anything else (blockconnected and blockdisconnected, which come
	// with the filtered ones) says nothing more.
	return nil
}

// unmarshalParams decodes a notification's parameters into into, in
// order.
func unmarshalParams(params []json.RawMessage, into ...any) error {
	if len(params) < len(into) {
		return malformed(opNotify, "a notification with %d parameters, not %d", len(params), len(into))
	}
	for i, v := range into {
		if err := json.Unmarshal(params[i], v); err != nil {
			return malformed(opNotify, "a notification's parameter %d: %v", i, err)
		}
	}
	return nil
}

func decodeHeader(rawHex string) (*wire.BlockHeader, error) {
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		return nil, err
	}
	var h wire.BlockHeader
	if err := h.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return &h, nil
}

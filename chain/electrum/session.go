package electrum

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// protocolVersion is the Electrum protocol version the source speaks:
// the one electrs, Fulcrum and ElectrumX all serve, whose
// get_history answers a list (1.5 changed it).
const protocolVersion = "1.4"

// clientName is how the source names itself in server.version.
const clientName = "addrwatch"

// session is one connection after its handshake: what the server said
// of itself, and the newest tip it told.
type session struct {
	*conn
	genesis string // server.features' genesis_hash
	// wrongNetwork is set when genesis is not the network's: every
	// call but BlockHash(0) fails.
	wrongNetwork error

	mu  sync.Mutex
	tip header // the newest tip told: the handshake's, then notifications'
}

// newestTip is the newest tip the server told on this connection.
func (ss *session) newestTip() header {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.tip
}

// sawTip keeps h, a tip an answer told, unless the tip known is higher:
// answers to concurrent calls come back in any order.
func (ss *session) sawTip(h header) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if h.height >= ss.tip.height {
		ss.tip = h
	}
}

// toldTip keeps h, a tip a notification told: notifications come in the
// server's order, a lower tip after a reorganisation included. It
// returns the tip known before.
func (ss *session) toldTip(h header) header {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	before := ss.tip
	ss.tip = h
	return before
}

// session is the live connection, made (with its handshake) when there
// is none. Calls that waited while another made one that failed fail
// with that attempt's error rather than trying again at once.
func (s *Source) session(ctx context.Context) (*session, error) {
	s.mu.Lock()
	gen, cur, closed := s.dialGen, s.cur, s.closed
	s.mu.Unlock()
	if !closed && cur != nil && cur.alive() {
		return cur, nil
	}
	select {
	case s.dialLock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.dialLock }()

	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, errClosed
	case s.cur != nil && s.cur.alive():
		cur := s.cur
		s.mu.Unlock()
		return cur, nil
	case s.dialGen != gen && s.dialErr != nil:
		err := s.dialErr
		s.mu.Unlock()
		return nil, err
	}
	s.dialGen++
	s.mu.Unlock()

	ss, err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialErr = err
	if err != nil {
		return nil, err
	}
	if s.closed {
		ss.close(errClosed)
		return nil, errClosed
	}
	s.cur = ss
	s.watch.sessionStarted(ss)
	go s.ended(ss)
	go s.keepAlive(ss)
	return ss, nil
}

// connect dials the server (through the proxy, over TLS when the spec
// says) and makes the handshake: server.version, server.features and
// blockchain.headers.subscribe, which also subscribes the connection to
// new tips.
func (s *Source) connect(ctx context.Context) (*session, error) {
	dctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	nc, err := s.dial(dctx, "tcp", s.spec.Address)
	if err != nil {
		return nil, s.dialCause(ctx, dctx, err)
	}
	if s.tls != nil {
		tc := tls.Client(nc, s.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			_ = nc.Close()
			return nil, s.dialCause(ctx, dctx, err)
		}
		nc = tc
	}
	ss := &session{}
	ss.conn = newConn(nc, s.opts.Timeout, s.lineMax, func(m message) { s.notified(ss, m) })
	if err := s.handshake(ctx, ss); err != nil {
		ss.close(err)
		return nil, err
	}
	return ss, nil
}

// dialCause names why a connection was not made, without the address
// (the operator's own, but a proxy's error may carry more).
func (s *Source) dialCause(ctx, dctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case dctx.Err() != nil:
		return timeoutError{s.opts.Timeout}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		err = opErr.Err
	}
	return fmt.Errorf("electrum: connecting to the server: %w", err)
}

// features is the part of server.features the source reads.
type features struct {
	GenesisHash  string `json:"genesis_hash"`
	HashFunction string `json:"hash_function"`
}

func (s *Source) handshake(ctx context.Context, ss *session) error {
	var version []string
	if err := decodeCall(ctx, ss.conn, "server.version", []any{clientName, protocolVersion}, &version); err != nil {
		return err
	}
	if len(version) != 2 || version[1] != protocolVersion {
		return unusablef("the server does not speak protocol %s", protocolVersion)
	}
	var f features
	if err := decodeCall(ctx, ss.conn, "server.features", nil, &f); err != nil {
		return err
	}
	genesis, ok := chain.CanonicalTxID(f.GenesisHash)
	if !ok {
		return unusablef("server.features names no genesis block")
	}
	if f.HashFunction != "" && f.HashFunction != "sha256" {
		return unusablef("the server hashes scripts with %q, not sha256", truncate(f.HashFunction, 16))
	}
	ss.genesis = genesis
	if want := s.params.GenesisHash.String(); genesis != want {
		ss.wrongNetwork = fmt.Errorf("%w: the Electrum server's genesis block is %s, %s's is %s",
			chain.ErrWrongNetwork, genesis, s.opts.Network.OrMainnet(), want)
	}
	var tip wireTip
	if err := decodeCall(ctx, ss.conn, "blockchain.headers.subscribe", nil, &tip); err != nil {
		return err
	}
	h, err := tip.header()
	if err != nil {
		return err
	}
	ss.sawTip(h)
	s.headers.sawTip(h)
	return nil
}

// decodeCall is one call on c whose result is decoded into out (nil:
// not decoded).
func decodeCall(ctx context.Context, c *conn, method string, params []any, out any) error {
	raw, err := c.call(ctx, method, params)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return unusablef("%s answered a result that does not decode", method)
	}
	return nil
}

// ended waits for ss's end, then ends the notifications it carried.
func (s *Source) ended(ss *session) {
	<-ss.done
	s.watch.sessionEnded(ss)
}

// keepAlive pings the server (server.ping) whenever the connection went
// pingEvery without a request, until it ends: servers drop a session
// idle for long (ElectrumX after ten minutes), and a follower told of
// changes may ask nothing for longer, only listen. A ping that fails
// ends the connection as any request would.
func (s *Source) keepAlive(ss *session) {
	tick := time.NewTicker(s.pingEvery / 2)
	defer tick.Stop()
	for {
		select {
		case <-ss.done:
			return
		case <-tick.C:
		}
		if time.Since(time.Unix(0, ss.lastSent.Load())) < s.pingEvery {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
		_ = decodeCall(ctx, ss.conn, "server.ping", nil, nil)
		cancel()
	}
}

// call asks method on the live connection and decodes its result into
// out (nil: ignored). A connection lost under the request is made again
// and the request asked once more (every request the source makes only
// reads), whatever ended it: a line another request's answer broke ends
// every request in flight. A server on another network fails it.
func (s *Source) call(ctx context.Context, method string, params []any, out any) error {
	for attempt := 1; ; attempt++ {
		ss, err := s.session(ctx)
		if err != nil {
			return err
		}
		if ss.wrongNetwork != nil {
			return ss.wrongNetwork
		}
		err = decodeCall(ctx, ss.conn, method, params, out)
		var lost connLostError
		if attempt == 1 && errors.As(err, &lost) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

package electrum

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/addrwatch/addrwatch/chain"
)

// Notify sends a chain.Change for every new tip the server tells
// (blockchain.headers.subscribe, to which every connection subscribes)
// and for every change of a watched address's status
// (blockchain.scripthash.subscribe), until ctx ends or the connection is
// lost, when the channel is closed; the follower then calls Notify
// again, which connects again. A tip that does not follow the one before
// (a reorganisation, or blocks the server did not tell one by one) says
// All. Changes not yet taken from the channel are merged, never dropped
// or waited for.
func (s *Source) Notify(ctx context.Context) (<-chan chain.Change, error) {
	ss, err := s.session(ctx)
	if err != nil {
		return nil, upstream("notify", err)
	}
	l := newListener(ctx, ss)
	if !s.watch.listen(l) { // the connection ended already
		l.end()
	} else if err := s.subscribe(ctx, ss); err != nil { // listening first: no change is missed
		s.watch.unlisten(l)
		return nil, upstream("notify", err)
	}
	go l.run(s.watch.unlisten)
	return l.out, nil
}

// Watch makes addresses the watched ones, whose changes Notify names,
// and subscribes to those the connection is not subscribed to yet: one
// blockchain.scripthash.subscribe each (a connection made again
// subscribes to them all again). At most WatchMax addresses.
func (s *Source) Watch(ctx context.Context, addresses []string) error {
	if len(addresses) > s.opts.WatchMax {
		return fmt.Errorf("%w: %d addresses to watch, more than the Electrum source subscribes to (%d)", chain.ErrInvalidArgument, len(addresses), s.opts.WatchMax)
	}
	targets := make([]target, 0, len(addresses))
	for _, a := range addresses {
		t, err := s.targetOf(a)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	s.watch.setWatched(targets)
	ss, err := s.session(ctx)
	if err != nil {
		return upstream("watch", err)
	}
	return upstream("watch", s.subscribe(ctx, ss))
}

// subscribe subscribes ss to the watched addresses it is not subscribed
// to, and takes in their statuses.
func (s *Source) subscribe(ctx context.Context, ss *session) error {
	todo := s.watch.unsubscribed(ss)
	return forEach(ctx, len(todo), func(ctx context.Context, i int) error {
		var status *string
		if err := decodeCall(ctx, ss.conn, "blockchain.scripthash.subscribe", []any{todo[i]}, &status); err != nil {
			return err
		}
		s.watch.subscribed(ss, todo[i], deref(status))
		return nil
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// notified takes in a notification of ss, on its reader: nothing here
// waits.
func (s *Source) notified(ss *session, m message) {
	switch m.method {
	case "blockchain.headers.subscribe":
		var params []wireTip
		if json.Unmarshal(m.params, &params) != nil || len(params) != 1 {
			s.watch.tell(ss, chain.Change{All: true})
			return
		}
		h, err := params[0].header()
		if err != nil {
			s.watch.tell(ss, chain.Change{All: true})
			return
		}
		before := ss.toldTip(h)
		if h.hash == before.hash {
			return
		}
		s.headers.sawTip(h)
		follows := h.height == before.height+1 && h.prev == before.hash
		s.watch.tell(ss, chain.Change{Tip: h.ref(), All: !follows})
	case "blockchain.scripthash.subscribe":
		var params []*string
		if json.Unmarshal(m.params, &params) != nil || len(params) != 2 || params[0] == nil {
			s.watch.tell(ss, chain.Change{All: true})
			return
		}
		if addr, watched := s.watch.statusChanged(ss, *params[0], deref(params[1])); watched {
			s.watch.tell(ss, chain.Change{Addresses: []string{addr}})
		}
	}
}

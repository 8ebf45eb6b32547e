package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// Proposals to the meta group from a node that does not lead it, and one
// question for a data group's leader: its commit index. A
// login's reservation is made by whichever node serves the account's
// request, which seldom leads the meta group too, so it sends the command
// to the meta leader over a node connection (mutual TLS like every other):
// one command and one answer per connection, in JSON. Only the logins'
// ops are taken this way; moves begin on the meta leader itself.

const (
	// metaRPCTimeout bounds one proposal over a node connection.
	metaRPCTimeout = 10 * time.Second
	// metaRPCBytesMax bounds a proposal's or an answer's JSON.
	metaRPCBytesMax = 64 << 10
	// metaLeaderWait bounds the wait for a meta leader to send to.
	metaLeaderWait = 5 * time.Second
)

// metaAnswer is the meta leader's answer to one proposal.
type metaAnswer struct {
	NotLeader bool              `json:"not_leader,omitempty"`
	Index     uint64            `json:"index,omitempty"` // commit_index: the group leader's commit index
	Code      string            `json:"code,omitempty"`  // a membership change's error (memberCodes)
	Error     string            `json:"error,omitempty"`
	Held      *loginReservation `json:"held,omitempty"`
	Reserved  *loginReserved    `json:"reserved,omitempty"`
}

// viaRPC reports whether a node may send op to the meta leader.
func viaRPC(op string) bool {
	switch op {
	case "reserve_login", "release_login", "settle_logins":
		return true
	}
	return false
}

// proposeMeta commits c through the meta group, here when this node leads
// it and otherwise through its leader, and returns the answer.
func (g *Groups) proposeMeta(ctx context.Context, c metaCommand) (any, error) {
	var v any
	err := untilLeader(ctx, func() (err error) {
		v, err = g.proposeMetaOnce(ctx, c)
		return err
	})
	return v, err
}

// untilLeader runs try again while it answers ErrNotLeader (an election,
// a leader not known yet), for up to metaLeaderWait or ctx's end.
func untilLeader(ctx context.Context, try func() error) error {
	deadline := time.Now().Add(metaLeaderWait)
	for {
		err := try()
		if !errors.Is(err, ErrNotLeader) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (g *Groups) proposeMetaOnce(ctx context.Context, c metaCommand) (any, error) {
	leads, addr, known := g.MetaLeader()
	if leads {
		return g.meta.apply(c)
	}
	if !known {
		return nil, ErrNotLeader
	}
	g.metaRPCs.Add(1)
	a, err := g.askNode(addr, c)
	var notSent *notSentError
	if errors.As(err, &notSent) {
		return nil, ErrNotLeader // nothing was sent: ask the next leader
	}
	if err != nil {
		return nil, err
	}
	switch {
	case a.NotLeader:
		return nil, ErrNotLeader
	case a.Held != nil:
		return nil, loginHeld{*a.Held}
	case a.Error != "":
		return nil, errors.New(a.Error)
	case a.Reserved != nil:
		return *a.Reserved, nil
	}
	return nil, nil
}

// commitIndex is the commit index of group id's leader: asked of it over
// a node connection unless this node leads the group. Every write that
// group acknowledged before the call is at or below it.
func (g *Groups) commitIndex(id int) (uint64, error) {
	n := g.nodes[id]
	if n.serving() {
		return n.raft.CommitIndex(), nil
	}
	addr, known := n.Leader()
	if !known {
		return 0, ErrNotLeader
	}
	a, err := g.askNode(addr, metaCommand{Op: "commit_index", Group: id})
	if err != nil {
		return 0, err
	}
	if a.NotLeader {
		return 0, ErrNotLeader
	}
	return a.Index, nil
}

// loginHolder asks the meta group's leader who holds the folded login.
func (g *Groups) loginHolder(folded string) (loginReservation, bool, error) {
	deadline := time.Now().Add(metaLeaderWait)
	for {
		leads, addr, known := g.MetaLeader()
		if leads {
			held, found := g.meta.fsm.logins.holder(folded)
			return held, found, nil
		}
		if known {
			a, err := g.askNode(addr, metaCommand{Op: "login_holder", Login: folded})
			if err == nil && !a.NotLeader {
				if a.Held == nil {
					return loginReservation{}, false, nil
				}
				return *a.Held, true, nil
			}
		}
		if time.Now().After(deadline) {
			return loginReservation{}, false, ErrNotLeader
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// askNode sends c to the node at addr over a node connection and returns
// its answer. A *notSentError means the connection could not be opened.
func (g *Groups) askNode(addr string, c metaCommand) (metaAnswer, error) {
	conn, err := g.conns.dialer.open(addr, streamMeta, metaRPCTimeout)
	if err != nil {
		return metaAnswer{}, &notSentError{err}
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(metaRPCTimeout))
	if err := json.NewEncoder(conn).Encode(c); err != nil {
		return metaAnswer{}, err
	}
	var a metaAnswer
	err = json.NewDecoder(io.LimitReader(conn, metaRPCBytesMax)).Decode(&a)
	return a, err
}

// serveMeta answers the proposals other nodes send this one.
func (g *Groups) serveMeta(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go g.answerMeta(conn)
	}
}

func (g *Groups) answerMeta(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(metaRPCTimeout))
	var c metaCommand
	if err := json.NewDecoder(io.LimitReader(conn, metaRPCBytesMax)).Decode(&c); err != nil {
		return
	}
	var a metaAnswer
	switch {
	case c.Op == "add_member" || c.Op == "remove_member":
		if c.Group < 0 || c.Group >= len(g.nodes) || !g.nodes[c.Group].serving() {
			a.NotLeader = true
		} else if err := g.changeMember(c); errors.Is(err, ErrNotLeader) {
			a.NotLeader = true
		} else if err != nil {
			a.Error, a.Code = err.Error(), memberCode(err)
		}
	case c.Op == "login_holder":
		if g.meta.raft.State() != raft.Leader {
			a.NotLeader = true
		} else if held, found := g.meta.fsm.logins.holder(c.Login); found {
			a.Held = &held
		}
	case c.Op == "commit_index":
		if c.Group < 0 || c.Group >= len(g.nodes) || !g.nodes[c.Group].serving() {
			a.NotLeader = true
		} else {
			a.Index = g.nodes[c.Group].raft.CommitIndex()
		}
	case !viaRPC(c.Op):
		a.Error = "cluster: " + c.Op + " is not proposed over a node connection"
	case g.meta.raft.State() != raft.Leader:
		a.NotLeader = true
	default:
		v, err := g.meta.apply(c)
		var held loginHeld
		switch {
		case errors.Is(err, ErrNotLeader):
			a.NotLeader = true
		case errors.As(err, &held):
			a.Held = &held.loginReservation
		case err != nil:
			a.Error = err.Error()
		}
		if r, isReserved := v.(loginReserved); isReserved {
			a.Reserved = &r
		}
	}
	json.NewEncoder(conn).Encode(a)
}

// notSentError is a node connection that could not be opened: nothing
// was sent.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

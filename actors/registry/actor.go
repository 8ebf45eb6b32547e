package registry

import (
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/addrwatch/addrwatch/actors"
)

// accountActor owns one account's state. Its mailbox is the account's
// serialization point: commands (in log order) and queries run one at a
// time, so the state needs no lock.
type accountActor struct {
	state *actors.Account
	// rendered keeps the account's rendered read answers until it next
	// applies anything (actors/rendered.go); the registry reads it too.
	rendered *actors.RenderCache
	// reportPanic logs a panic the rules recovered from (SafeApply,
	// SafeQuery); the actor answers it as an internal error.
	reportPanic func(recovered any)
}

// applyMsg carries one account's share of a log batch, in log order. The
// actor fills results and signals done; the sender waits without a timeout,
// because apply must finish for the replica to stay correct.
type applyMsg struct {
	cmds    []*actors.Command
	results []actors.Result
	gone    bool   // after the commands the account does not exist (never created, or deleted)
	login   string // after the commands, the account's login (for the registry's login index)
	done    *sync.WaitGroup
}

// queryMsg asks for a read. The actor answers on reply (buffered, so it
// never blocks on a caller that gave up). Registry.Query sends it with
// Send and a reply channel rather than RequestFuture: a future costs a
// process registration, a name and a timer per read, which was a tenth of
// the server's CPU under the auth-reads bench.
type queryMsg struct {
	cred  actors.Credential
	query actors.Query
	reply chan actors.Result
}

// visitMsg runs fn on the state inside the actor (snapshots, restores).
type visitMsg struct {
	fn func(a *actors.Account) (*actors.Account, error)
}

func (s *accountActor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *applyMsg:
		s.rendered.Forget()
		for i, c := range msg.cmds {
			var recovered any
			s.state, msg.results[i], recovered = actors.SafeApply(s.state, c)
			if recovered != nil {
				s.reportPanic(recovered)
			}
		}
		msg.gone = s.state == nil || s.state.Deleted
		if !msg.gone {
			msg.login = s.state.Login
		}
		msg.done.Done()
	case *queryMsg:
		msg.reply <- s.safeQuery(msg)
	case *visitMsg:
		ctx.Respond(s.safeVisit(msg))
	}
}

// safeQuery runs a query and turns a panic into an internal error instead
// of letting protoactor restart the actor with empty state.
func (s *accountActor) safeQuery(msg *queryMsg) actors.Result {
	res, recovered := actors.SafeQuery(s.state, msg.cred, msg.query, s.rendered)
	if recovered != nil {
		s.reportPanic(recovered)
	}
	return res
}

func (s *accountActor) safeVisit(msg *visitMsg) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("actors: panic while visiting account: %v", r)
		}
	}()
	// A visit may change the state in place (a restore), so nothing kept
	// from before it is answered after it.
	s.rendered.Forget()
	next, err := msg.fn(s.state)
	if err == nil {
		s.state = next
	}
	return err
}

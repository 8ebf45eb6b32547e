package registry

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/addrwatch/addrwatch/actors"
)

// Registry finds or creates the actor of each account. Only the apply path
// (ApplyBatch, Restore) adds or removes accounts, on the FSM goroutine;
// queries look accounts up concurrently.
type Registry struct {
	system *actor.ActorSystem
	log    *slog.Logger

	mu       sync.RWMutex
	accounts map[string]*account

	logins *loginIndex // the logins in use (logins.go)
	// owned is the system New started for this registry alone; nil when
	// the registry shares one (System.NewRegistry).
	owned *System
	// reportPanic logs, through its system's logger, a panic the rules
	// recovered from.
	reportPanic func(recovered any)
}

// accountThroughput is how many messages an account's mailbox handles
// before it yields the goroutine running it (protoactor's default).
const accountThroughput = 300

// System is an actor system that account actors run in. A registry of its
// own (New) is what a node of one raft group needs; the groups of a
// sharded node share one (System.NewRegistry), since each protoactor
// system costs about 2.5 MB of heap before its first actor.
type System struct {
	system      *actor.ActorSystem
	reportPanic func(recovered any)
}

// NewSystem starts an actor system that logs through logger and has no
// metrics provider.
func NewSystem(logger *slog.Logger) *System {
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return logger.With("lib", "protoactor")
	}))
	// A query sent to an account deleted since its PID was looked up lands
	// in dead letters; answer it at once rather than after the timeout.
	system.EventStream.Subscribe(func(evt any) {
		if dl, isDead := evt.(*actor.DeadLetterEvent); isDead {
			if q, isQuery := dl.Message.(*queryMsg); isQuery {
				q.reply <- actors.Refused(actors.ErrUnauthorized)
			}
		}
	})
	return &System{system: system, reportPanic: func(recovered any) {
		logger.Error("recovered panic in account actor", "panic", fmt.Sprint(recovered))
	}}
}

// Shutdown stops the system and every actor in it.
func (s *System) Shutdown() { s.system.Shutdown() }

// NewRegistry starts a registry whose accounts run in s. Its Shutdown
// stops its own accounts and leaves s running.
func (s *System) NewRegistry(logger *slog.Logger) *Registry {
	r := &Registry{
		system:      s.system,
		log:         logger,
		accounts:    map[string]*account{},
		logins:      newLoginIndex(),
		reportPanic: s.reportPanic,
	}
	return r
}

// New starts a registry in an actor system of its own (NewSystem), which
// its Shutdown stops.
//
// Account actors use protoactor's synchronized dispatcher: whoever posts
// to an idle mailbox runs it on its own goroutine (an HTTP handler for a
// read, the FSM for an apply) instead of waking a new goroutine per
// message. The mailbox still runs one message at a time, so the actor's
// guarantees are unchanged; what goes away is a goroutine start and two
// hand-offs per read, about a tenth of the read path's cost (see
// actors/DESIGN.md).
func New(logger *slog.Logger) *Registry {
	s := NewSystem(logger)
	r := s.NewRegistry(logger)
	r.owned = s
	return r
}

// account is an account's actor and the answers it keeps (RenderCache),
// which a read may take without a message to the actor (Query).
type account struct {
	pid      *actor.PID
	rendered *actors.RenderCache
}

// spawn starts the actor of an account that starts with state (nil for
// one about to be created).
func (r *Registry) spawn(state *actors.Account) *account {
	rendered := &actors.RenderCache{}
	props := actor.PropsFromProducer(func() actor.Actor {
		return &accountActor{state: state, rendered: rendered, reportPanic: r.reportPanic}
	}, actor.WithDispatcher(actor.NewSynchronizedDispatcher(accountThroughput)))
	return &account{pid: r.system.Root.Spawn(props), rendered: rendered}
}

// ApplyBatch applies commands in log order and returns one result each.
// The batch is cut before each command that reads the login index
// (logins.go); within a run, commands are grouped by account: each group
// goes to its account's actor in order (on this goroutine when its mailbox
// is idle; see New).
func (r *Registry) ApplyBatch(cmds []*actors.Command) []actors.Result {
	results := make([]actors.Result, len(cmds))
	r.applyInRuns(cmds, results, r.applyGroups)
	return results
}

// applyGroups applies one run of commands, its accounts in parallel, and
// settles the login index from the accounts' logins after it.
func (r *Registry) applyGroups(cmds []*actors.Command, results []actors.Result) {
	type group struct {
		pid     *actor.PID
		cmds    []*actors.Command
		indexes []int
	}
	groups := map[string]*group{}
	var order []string // first-seen order keeps sends deterministic for tests and logs
	for i, c := range cmds {
		g := groups[c.Account]
		if g == nil {
			g = &group{}
			groups[c.Account] = g
			order = append(order, c.Account)
		}
		if g.pid == nil {
			// Until the account exists, any later creation in the batch
			// spawns it; the commands before it fail inside the actor just
			// as they would in an earlier batch.
			g.pid = r.lookupOrSpawn(c)
		}
		g.cmds = append(g.cmds, c)
		g.indexes = append(g.indexes, i)
	}
	var done sync.WaitGroup
	msgs := make([]*applyMsg, len(order))
	for i, id := range order {
		g := groups[id]
		if g.pid == nil {
			for _, idx := range g.indexes {
				results[idx] = actors.Refused(actors.ErrUnauthorized)
			}
			continue
		}
		done.Add(1)
		msgs[i] = &applyMsg{cmds: g.cmds, results: make([]actors.Result, len(g.cmds)), done: &done}
		r.system.Root.Send(g.pid, msgs[i])
	}
	done.Wait()
	for i, id := range order {
		if msgs[i] == nil {
			continue
		}
		g := groups[id]
		for j, idx := range g.indexes {
			results[idx] = msgs[i].results[j]
		}
		r.logins.settle(id, msgs[i].login, msgs[i].gone)
		// A deleted account, or one whose creation failed, leaves no
		// actor behind (snapshots never see an empty account).
		if msgs[i].gone {
			r.remove(id)
		}
	}
}

// lookupOrSpawn returns the account's actor, spawning one for an account
// creation. It returns nil for any other command to an unknown account.
func (r *Registry) lookupOrSpawn(c *actors.Command) *actor.PID {
	if pid := r.pid(c.Account); pid != nil {
		return pid
	}
	if _, isCreate := c.Payload.(*actors.CreateAccount); !isCreate {
		return nil
	}
	// Only the apply goroutine adds accounts, so nothing can have added
	// this one between the read above and the write below.
	r.mu.Lock()
	defer r.mu.Unlock()
	acct := r.spawn(nil)
	r.accounts[c.Account] = acct
	return acct.pid
}

func (r *Registry) remove(id string) {
	r.mu.Lock()
	acct := r.accounts[id]
	delete(r.accounts, id)
	r.mu.Unlock()
	if acct != nil {
		r.system.Root.Stop(acct.pid)
	}
}

func (r *Registry) account(id string) *account {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.accounts[id]
}

func (r *Registry) pid(id string) *actor.PID {
	if acct := r.account(id); acct != nil {
		return acct.pid
	}
	return nil
}

// Query authenticates cred on its account and runs q in the account's
// actor, waiting at most until ctx's deadline or timeout. A rendered read
// the account has kept an answer to since it last applied anything
// (actors.RenderCache.Kept) is answered here, without the actor: the
// actor forgets what it kept before it applies a command, so nothing
// kept is older than the last acknowledged write.
func (r *Registry) Query(ctx context.Context, cred actors.Credential, q actors.Query, timeout time.Duration) actors.Result {
	acct := r.account(cred.AccountID)
	if acct == nil {
		return actors.Refused(actors.ErrUnauthorized)
	}
	if rq, rendered := q.(actors.RenderedQuery); rendered {
		if res, kept := acct.rendered.Kept(cred, rq); kept {
			return res
		}
	}
	pid := acct.pid
	if d, hasDeadline := ctx.Deadline(); hasDeadline {
		timeout = min(timeout, time.Until(d))
	}
	// protoactor treats a negative timeout as none at all, so a caller
	// whose deadline has passed would wait without bound.
	if timeout <= 0 {
		return actors.Refused(actors.Errorf(actors.CodeHTTPError, "the account did not answer in time; retry"))
	}
	msg := queryMsgs.Get().(*queryMsg)
	msg.cred, msg.query = cred, q
	r.system.Root.Send(pid, msg)
	answered := func(res actors.Result) actors.Result {
		msg.cred, msg.query = actors.Credential{}, nil
		queryMsgs.Put(msg)
		return res
	}
	select {
	case res := <-msg.reply:
		// Answered already: the mailbox was idle, so Send ran it on this
		// goroutine (see New), and no timer is needed.
		return answered(res)
	default:
	}
	timer := acquireTimer(timeout)
	defer releaseTimer(timer)
	select {
	case res := <-msg.reply:
		return answered(res)
	case <-timer.C:
	case <-ctx.Done():
	}
	// The actor may still answer into msg.reply, so msg is not reused.
	return actors.Refused(actors.Errorf(actors.CodeHTTPError, "the account did not answer in time; retry"))
}

// queryMsgs recycles query messages with their reply channels.
var queryMsgs = sync.Pool{New: func() any { return &queryMsg{reply: make(chan actors.Result, 1)} }}

// timers recycles the timers that bound a query's wait. Since Go 1.23 a
// stopped timer's channel holds no stale value, so Stop then Reset is safe.
var timers sync.Pool

func acquireTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

func releaseTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}

// Visit runs fn inside each account's actor, one account after another in
// account-ID order, and stops at the first error. Snapshots use it to
// encode each account without stopping the others; fn may replace the
// state by returning a different account.
func (r *Registry) Visit(fn func(a *actors.Account) (*actors.Account, error), timeout time.Duration) error {
	return r.visitIDs(r.IDs(everyAccount), fn, timeout)
}

// everyAccount keeps every ID (for IDs).
func everyAccount(string) bool { return true }

// visitIDs runs fn inside the actor of each account of ids, in order, and
// stops at the first error; an account gone meanwhile is skipped.
func (r *Registry) visitIDs(ids []string, fn func(a *actors.Account) (*actors.Account, error), timeout time.Duration) error {
	for _, id := range ids {
		pid := r.pid(id)
		if pid == nil {
			continue
		}
		res, err := r.system.Root.RequestFuture(pid, &visitMsg{fn: fn}, timeout).Result()
		if err != nil {
			return fmt.Errorf("actors: account %s: %w", id, err)
		}
		if res != nil {
			return res.(error)
		}
	}
	return nil
}

// VisitAll runs fn inside each account's actor without changing it, on
// every core at once, and returns how many accounts it visited; i is the
// account's place in account-ID order, so fn can put what it makes in
// order without a lock (fn runs concurrently for different accounts). It
// stops at the first error.
//
// A snapshot uses it: raft calls the FSM's Snapshot on the goroutine that
// applies commands, so no write applies until it returns. The account
// actors run a message on the goroutine that sends it (the synchronized
// dispatcher), so a loop of requests, like Visit's, works on one core
// whatever the machine has; VisitAll sends from one goroutine per core.
func (r *Registry) VisitAll(fn func(i int, a *actors.Account) error, timeout time.Duration) (int, error) {
	ids := r.IDs(everyAccount)
	var (
		next    atomic.Int64
		failed  atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		failed.Store(true)
	}
	for range min(runtime.GOMAXPROCS(0), len(ids)) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(ids) {
					return
				}
				pid := r.pid(ids[i])
				if pid == nil {
					continue // deleted since the list was taken
				}
				res, err := r.system.Root.RequestFuture(pid, &visitMsg{fn: func(a *actors.Account) (*actors.Account, error) {
					return a, fn(i, a)
				}}, timeout).Result()
				if err != nil {
					fail(fmt.Errorf("actors: account %s: %w", ids[i], err))
				} else if res != nil {
					fail(res.(error))
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return len(ids), nil
}

// Restore replaces every account with the given ones (a snapshot restore)
// and rebuilds the login index from their logins.
func (r *Registry) Restore(accounts []*actors.Account) {
	for _, id := range r.logins.rebuild(accounts) {
		r.log.Error("restored account shares its login with an earlier account; it cannot sign in by login", "account", id)
	}
	r.mu.Lock()
	old := r.accounts
	r.accounts = make(map[string]*account, len(accounts))
	for _, a := range accounts {
		r.accounts[a.ID] = r.spawn(a)
	}
	r.mu.Unlock()
	for _, acct := range old {
		r.system.Root.Stop(acct.pid)
	}
}

// Len returns the number of accounts.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.accounts)
}

// Shutdown stops the registry's accounts: with the system it started, or,
// in a shared system, one by one.
func (r *Registry) Shutdown() {
	if r.owned != nil {
		r.owned.Shutdown()
		return
	}
	r.mu.Lock()
	old := r.accounts
	r.accounts = map[string]*account{}
	r.mu.Unlock()
	for _, acct := range old {
		r.system.Root.Stop(acct.pid)
	}
}

// Package activity counts the agent API's requests for their keys'
// activity (actors/activity.go): the node that serves an agent request
// counts it, once it is answered, by key, operation, resource and
// outcome (Log.Count); about once a second the counts of each key go to
// the log as one RecordKeyActivity (record.go). A window's refusals of
// unknown resources are one line, so probing made-up IDs costs the record
// a line a second. Only requests whose key authenticated are counted
// (the edge calls Count only for those): a request with a made-up secret
// cannot write into an account's activity. This is a coarse write in the
// background, never on a request's own path, and a record lost to a
// leader change or a full node costs an owner some lines of activity,
// never a request.
//
// It depends on actors (the entries and commands) and on the node only
// through Store; httpd counts each request (httpd/activity.go) and the
// owner reads the record through the API.
package activity

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

const (
	// Window is how long a key's requests are counted before the
	// flusher records them (a Flush call ends a window sooner).
	Window = time.Second
	// pendingMax bounds the entries a node holds between flushes;
	// past it, a request's line is counted in its key's "other requests"
	// (or "other changes").
	pendingMax = 100_000
	// flushesInFlight bounds the records proposed at once.
	flushesInFlight = 16
	flushTimeout    = 10 * time.Second
)

// Line is what requests are counted by.
type Line struct {
	Account, KeyID, Op string
	Resource           actors.ResourceRef
	Status             int
	Code               actors.Code
}

type keyRef struct{ account, keyID string }

// Store is what the log needs of the node: proposing a command.
type Store interface {
	Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error)
}

// Log holds the counts of the current window.
type Log struct {
	store Store
	now   func() time.Time
	log   *slog.Logger

	mu       sync.Mutex
	pending  map[Line]*actors.ActivityEntry
	perKey   map[keyRef]int
	flushing bool // a flusher goroutine runs; it stops when a window is empty
	flushes  sync.WaitGroup
}

// New returns an empty log that proposes to store. now is the clock of a
// request counted without a time, and of the records; log reports a
// refused record (nil: nothing).
func New(store Store, now func() time.Time, log *slog.Logger) *Log {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Log{store: store, now: now, log: log, pending: map[Line]*actors.ActivityEntry{}, perKey: map[keyRef]int{}}
}

// Count counts one request made at the time at (Unix ns; 0: now), and
// starts the flusher if it is not running.
func (l *Log) Count(line Line, at int64) {
	now := at
	if now == 0 {
		now = l.now().UnixNano()
	}
	if line.Status == http.StatusNotFound && line.Code == actors.CodeNotFound {
		// Refusals of unknown resources are one line a window, whatever
		// the route and the ID: a key probing made-up IDs must not fill
		// the record (and push out older lines) one ID at a time.
		line = Line{Account: line.Account, KeyID: line.KeyID, Op: actors.ActivityUnknown, Status: line.Status, Code: line.Code}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := keyRef{line.Account, line.KeyID}
	e := l.pending[line]
	if e == nil && (l.perKey[ref] >= actors.ActivityFlushMax || len(l.pending) >= pendingMax) {
		// Past the distinct lines a record may hold, the rest of the
		// window is counted, not itemised: changes apart from the rest, so
		// that distinct reads first cannot turn a change into a line that
		// the record drops first (actors/activity_shares.go).
		op := actors.ActivityOther
		if actors.ActivityIsChange(line.Op, line.Status) {
			op = actors.ActivityOtherChanges
		}
		line = Line{Account: line.Account, KeyID: line.KeyID, Op: op}
		e = l.pending[line]
	}
	if e != nil {
		e.Count++
		e.Last = max(e.Last, now)
		return
	}
	if line.Op != actors.ActivityOther && line.Op != actors.ActivityOtherChanges {
		l.perKey[ref]++
	}
	l.pending[line] = &actors.ActivityEntry{KeyID: line.KeyID, Op: line.Op, Resource: line.Resource, Status: line.Status, Code: line.Code, Count: 1, First: now, Last: now}
	if !l.flushing {
		l.flushing = true
		l.flushes.Add(1)
		go l.flushLoop()
	}
}

// flushLoop proposes each window's records until a window is empty.
func (l *Log) flushLoop() {
	defer l.flushes.Done()
	for {
		time.Sleep(Window)
		if !l.Flush() {
			return
		}
	}
}

// Flush proposes the records of the window that ends now, one per key,
// and reports whether there were any (false stops the flusher).
func (l *Log) Flush() bool {
	l.mu.Lock()
	pending := l.pending
	if len(pending) == 0 {
		l.flushing = false
		l.mu.Unlock()
		return false
	}
	l.pending, l.perKey = map[Line]*actors.ActivityEntry{}, map[keyRef]int{}
	l.mu.Unlock()

	records := map[keyRef][]actors.ActivityEntry{}
	for line, e := range pending {
		ref := keyRef{line.Account, line.KeyID}
		records[ref] = append(records[ref], *e)
	}
	slots := make(chan struct{}, flushesInFlight)
	var wg sync.WaitGroup
	at := l.now().UnixNano()
	for ref, entries := range records {
		sort.Slice(entries, func(i, j int) bool { return entries[i].First < entries[j].First })
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			l.record(ref, at, entries)
		}()
	}
	wg.Wait()
	return true
}

// Wait returns once no flusher runs (tests).
func (l *Log) Wait() { l.flushes.Wait() }

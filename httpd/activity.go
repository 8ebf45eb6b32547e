package httpd

import (
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Agent activity (actors/activity.go): the node that serves an agent
// request counts it, once the request is answered, by key, operation,
// resource and outcome; about once a second the counts of each key go to
// the log as one RecordKeyActivity (activity_record.go). A window's
// refusals of unknown resources are one line, so probing made-up IDs
// costs the record a line a second. Only requests whose key authenticated
// are counted (a query answered for the key, not UNAUTHORIZED): a
// request with a made-up secret cannot write into an account's activity.
// Like the key's last use (credential_use.go), this is a coarse write in
// the background, never on a request's own path, and a record lost to a
// leader change or a full node costs an owner some lines of activity,
// never a request.

const (
	// activityFlushEvery is the window a key's requests are counted in.
	activityFlushEvery = time.Second
	// activityPendingMax bounds the entries a node holds between flushes;
	// past it, a request's line is counted in its key's "other requests"
	// (or "other changes").
	activityPendingMax = 100_000
	// activityFlushesInFlight bounds the records proposed at once.
	activityFlushesInFlight = 16
	activityFlushTimeout    = 10 * time.Second
)

// activityLine is what requests are counted by.
type activityLine struct {
	account, keyID, op string
	resource           actors.ResourceRef
	status             int
	code               actors.Code
}

type activityKeyRef struct{ account, keyID string }

// activityLog holds the counts of the current window.
type activityLog struct {
	store Store
	now   func() time.Time
	log   *slog.Logger

	mu       sync.Mutex
	pending  map[activityLine]*actors.ActivityEntry
	perKey   map[activityKeyRef]int
	flushing bool // a flusher goroutine runs; it stops when a window is empty
	flushes  sync.WaitGroup
}

func newActivityLog(store Store, now func() time.Time, log *slog.Logger) *activityLog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &activityLog{store: store, now: now, log: log, pending: map[activityLine]*actors.ActivityEntry{}, perKey: map[activityKeyRef]int{}}
}

// count counts r, answered by the route op (its method and pattern) with
// status, in its key's activity, if a query authenticated its key
// (request.go).
func (l *activityLog) count(r *request, op, route string, status int) {
	if r.key.keyID == "" {
		return
	}
	l.add(activityLine{account: r.key.account, keyID: r.key.keyID, op: op,
		resource: activityResource(r.ctx, route), status: status, code: r.code}, r.cred.Now)
}

// activityResource names the resource of a request from its path: a card,
// a Space or a transaction's note. An ID that could not be one (too long,
// not printable) is left out: it names nothing the account holds.
func activityResource(ctx *fasthttp.RequestCtx, route string) actors.ResourceRef {
	if !strings.Contains(route, "{") {
		return actors.ResourceRef{} // a route without parameters names none
	}
	id := func(name string) string {
		v := pathParam(ctx, name)
		if len(v) > 64 || !printableASCII(v) {
			return ""
		}
		return v
	}
	switch card, space, txid := id("card_id"), id("space_id"), id("txid"); {
	case card != "" && strings.Contains(route, "/portfolio/"):
		return actors.ResourceRef{Kind: actors.ResourcePortfolioCard, ID: card}
	case card != "":
		return actors.ResourceRef{Kind: actors.ResourceBookmarkCard, ID: card, SpaceID: space}
	case space != "":
		return actors.ResourceRef{Kind: actors.ResourceSpace, ID: space}
	case txid != "":
		return actors.ResourceRef{Kind: actors.ResourceNote, ID: txid}
	}
	return actors.ResourceRef{}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// add counts one request made at the time at (Unix ns; 0: now), and
// starts the flusher if it is not running.
func (l *activityLog) add(line activityLine, at int64) {
	now := at
	if now == 0 {
		now = l.now().UnixNano()
	}
	if line.status == fasthttp.StatusNotFound && line.code == actors.CodeNotFound {
		// Refusals of unknown resources are one line a window, whatever
		// the route and the ID: a key probing made-up IDs must not fill
		// the record (and push out older lines) one ID at a time.
		line = activityLine{account: line.account, keyID: line.keyID, op: actors.ActivityUnknown, status: line.status, code: line.code}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := activityKeyRef{line.account, line.keyID}
	e := l.pending[line]
	if e == nil && (l.perKey[ref] >= actors.ActivityFlushMax || len(l.pending) >= activityPendingMax) {
		// Past the distinct lines a record may hold, the rest of the
		// window is counted, not itemised: changes apart from the rest, so
		// that distinct reads first cannot turn a change into a line that
		// the record drops first (actors/activity_shares.go).
		op := actors.ActivityOther
		if actors.ActivityIsChange(line.op, line.status) {
			op = actors.ActivityOtherChanges
		}
		line = activityLine{account: line.account, keyID: line.keyID, op: op}
		e = l.pending[line]
	}
	if e != nil {
		e.Count++
		e.Last = max(e.Last, now)
		return
	}
	if line.op != actors.ActivityOther && line.op != actors.ActivityOtherChanges {
		l.perKey[ref]++
	}
	l.pending[line] = &actors.ActivityEntry{KeyID: line.keyID, Op: line.op, Resource: line.resource, Status: line.status, Code: line.code, Count: 1, First: now, Last: now}
	if !l.flushing {
		l.flushing = true
		l.flushes.Add(1)
		go l.flushLoop()
	}
}

// flushLoop proposes each window's records until a window is empty.
func (l *activityLog) flushLoop() {
	defer l.flushes.Done()
	for {
		time.Sleep(activityFlushEvery)
		if !l.flush() {
			return
		}
	}
}

// flush proposes the records of the window that ends now, one per key,
// and reports whether there were any (false stops the flusher).
func (l *activityLog) flush() bool {
	l.mu.Lock()
	pending := l.pending
	if len(pending) == 0 {
		l.flushing = false
		l.mu.Unlock()
		return false
	}
	l.pending, l.perKey = map[activityLine]*actors.ActivityEntry{}, map[activityKeyRef]int{}
	l.mu.Unlock()

	records := map[activityKeyRef][]actors.ActivityEntry{}
	for line, e := range pending {
		ref := activityKeyRef{line.account, line.keyID}
		records[ref] = append(records[ref], *e)
	}
	slots := make(chan struct{}, activityFlushesInFlight)
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

// wait returns once no flusher runs (tests).
func (l *activityLog) wait() { l.flushes.Wait() }

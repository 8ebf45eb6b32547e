package electrum

import (
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// The watcher holds what the subscriptions tell: the watched addresses
// by script hash, each one's status on the live connection (a hash of
// its history the server keeps current by notifying every change), the
// histories read while that status held, and the Notify channels.
//
// A history is kept while the status it was read under holds: the
// server notifies every change of status, so until a notification the
// history asked again would be the same. A notification, the end of the
// connection, or historyKeptFor passing drops it.

const (
	// historyKeptFor bounds how long a history is kept under its status
	// (a server that failed to notify a change is not believed forever).
	historyKeptFor = time.Minute
	// historyEntriesKeptMax bounds the history entries kept, all
	// addresses together.
	historyEntriesKeptMax = 200_000
)

type watcher struct {
	mu        sync.Mutex
	watched   map[string]string // script hash → address
	sess      *session          // the connection the statuses are told on
	statuses  map[string]string // script hash → status ("": no history) on sess
	histories map[string]keptHistory
	entries   int // in histories
	listeners map[*listener]bool
}

type keptHistory struct {
	status string
	h      history
	at     time.Time
}

func newWatcher() *watcher {
	return &watcher{watched: map[string]string{}, statuses: map[string]string{},
		histories: map[string]keptHistory{}, listeners: map[*listener]bool{}}
}

// sessionStarted makes ss the connection statuses are told on.
func (w *watcher) sessionStarted(ss *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sess = ss
	clear(w.statuses)
	w.dropHistories()
}

// sessionEnded forgets what ss told and closes the Notify channels it
// carried.
func (w *watcher) sessionEnded(ss *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sess == ss {
		w.sess = nil
		clear(w.statuses)
		w.dropHistories()
	}
	for l := range w.listeners {
		if l.sess == ss {
			l.end()
			delete(w.listeners, l)
		}
	}
}

func (w *watcher) dropHistories() {
	clear(w.histories)
	w.entries = 0
}

// setWatched makes targets the watched addresses.
func (w *watcher) setWatched(targets []target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watched = make(map[string]string, len(targets))
	for _, t := range targets {
		w.watched[t.scripthash] = t.address
	}
	for sh, kept := range w.histories {
		if _, still := w.watched[sh]; !still {
			w.entries -= kept.h.size()
			delete(w.histories, sh)
		}
	}
}

// unsubscribed lists the watched script hashes not subscribed to on ss.
func (w *watcher) unsubscribed(ss *session) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for sh := range w.watched {
		if _, known := w.statuses[sh]; !known || w.sess != ss {
			out = append(out, sh)
		}
	}
	return out
}

// subscribed takes in the status a subscription answered, unless a
// notification told a newer one first.
func (w *watcher) subscribed(ss *session, sh, status string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, known := w.statuses[sh]; w.sess == ss && !known {
		w.statuses[sh] = status
	}
}

// statusChanged takes in a notified status; it reports the address to
// name, if sh is watched.
func (w *watcher) statusChanged(ss *session, sh, status string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, known := w.statuses[sh]
	addr, watched := w.watched[sh]
	if w.sess != ss || !(known || watched) { // none asked for: not kept
		return "", false
	}
	w.statuses[sh] = status
	if kept, ok := w.histories[sh]; ok {
		w.entries -= kept.h.size()
		delete(w.histories, sh)
	}
	return addr, watched
}

// statusOf is sh's status on the live connection, if subscribed to.
func (w *watcher) statusOf(sh string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	status, ok := w.statuses[sh]
	return status, ok && w.sess != nil
}

// keep keeps h, read while sh's status was status, if it still is.
func (w *watcher) keep(sh, status string, h history) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now, ok := w.statuses[sh]
	_, watched := w.watched[sh]
	if !ok || now != status || !watched || w.entries+h.size() > historyEntriesKeptMax {
		return
	}
	if old, had := w.histories[sh]; had {
		w.entries -= old.h.size()
	}
	w.histories[sh] = keptHistory{status: status, h: h, at: time.Now()}
	w.entries += h.size()
}

// cached is the history kept for sh, if its status still holds.
func (w *watcher) cached(sh string) (history, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept, ok := w.histories[sh]
	if !ok || w.statuses[sh] != kept.status || time.Since(kept.at) > historyKeptFor {
		return history{}, false
	}
	return kept.h, true
}

// tell passes c on to every Notify channel of ss.
func (w *watcher) tell(ss *session, c chain.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for l := range w.listeners {
		if l.sess == ss {
			l.add(c)
		}
	}
}

// listen adds l; false when its connection has ended already.
func (w *watcher) listen(l *listener) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sess != l.sess || !l.sess.alive() {
		return false
	}
	w.listeners[l] = true
	return true
}

func (w *watcher) unlisten(l *listener) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.listeners, l)
}

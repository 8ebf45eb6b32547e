package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/notify/send"
)

// The receivers of bench notify: HTTP servers on loopback inside bench,
// one a receiving account (an owner's own endpoint) and one for the slow
// channel, sharing one handler. Each channel has a path of its own on its
// account's receiver. Every request is noted with when it arrived and
// whether its signature verifies under the channel's secret
// (send.Verify, as notify/DESIGN.md tells a receiver to check it).

// hookBodyBytesMax bounds a webhook body the receivers read: a real one
// is about 400 bytes.
const hookBodyBytesMax = 64 << 10

// hookChannel is one webhook channel as its receiver knows it.
type hookChannel struct {
	path    string // on its receiver, "/h/<n>"
	id      string // the server's channel ID
	account *watchAccount
	secret  string        // as the server showed it once, at creation
	delay   time.Duration // how long the receiver takes to answer
}

// hookArrival is one request a receiver got.
type hookArrival struct {
	at      time.Time
	channel *hookChannel // nil for a path no channel has
	event   send.WebhookPayload
	attempt int
	// problem says why the request was refused (a bad signature, a body
	// that is not an event): every one is an error of the run.
	problem string
}

// receivers are the HTTP servers and what they got.
type receivers struct {
	mu       sync.Mutex
	channels map[string]*hookChannel // by path
	arrivals []hookArrival
	servers  []*http.Server
	closing  chan struct{}
}

func newReceivers() *receivers {
	return &receivers{channels: map[string]*hookChannel{}, closing: make(chan struct{})}
}

// listen starts one more receiver on a free loopback port and returns
// its base URL.
func (r *receivers) listen() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	r.mu.Lock()
	r.servers = append(r.servers, srv)
	r.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), nil
}

// add makes ch known at its path, on every receiver.
func (r *receivers) add(ch *hookChannel) {
	r.mu.Lock()
	r.channels[ch.path] = ch
	r.mu.Unlock()
}

// ServeHTTP notes the request, answers 401 to one that does not verify
// and, after the channel's delay, 200 to one that does.
func (r *receivers) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, hookBodyBytesMax))
	r.mu.Lock()
	ch := r.channels[req.URL.Path]
	r.mu.Unlock()
	a := hookArrival{at: at, channel: ch}
	a.attempt, _ = strconv.Atoi(req.Header.Get(send.DeliveryAttemptHeader))
	a.event, a.problem = checkHook(ch, req.Header.Get(send.SignatureHeader), body, err, at)
	r.mu.Lock()
	r.arrivals = append(r.arrivals, a)
	r.mu.Unlock()
	if a.problem != "" {
		http.Error(rw, a.problem, http.StatusUnauthorized)
		return
	}
	if ch.delay > 0 {
		t := time.NewTimer(ch.delay)
		select {
		case <-t.C:
		case <-r.closing:
			t.Stop()
		}
	}
	rw.WriteHeader(http.StatusOK)
}

// checkHook verifies one request as a receiver must: the signature over
// the raw body under the channel's secret, then the body as an event.
func checkHook(ch *hookChannel, signature string, body []byte, readErr error, at time.Time) (send.WebhookPayload, string) {
	var e send.WebhookPayload
	switch {
	case ch == nil:
		return e, "no channel at this path"
	case readErr != nil:
		return e, "reading the body: " + readErr.Error()
	}
	if err := send.Verify(ch.secret, signature, body, at, 0); err != nil {
		return e, "signature: " + err.Error()
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return e, "the body is not JSON: " + err.Error()
	}
	if e.ID == "" || e.Type == "" {
		return e, "the body is no event: it has no id or no type"
	}
	return e, ""
}

// next returns the arrivals from index from on, and the index after.
func (r *receivers) next(from int) ([]hookArrival, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookArrival(nil), r.arrivals[from:]...), len(r.arrivals)
}

// hookPollInterval is how often a wait looks at the new arrivals; an
// arrival's time is noted by the handler, so this costs no precision.
const hookPollInterval = 5 * time.Millisecond

// waitArrivals hands every arrival from index from on to take, in order,
// until take says it has all it waits for or limit passes; it returns the
// index after the last arrival handed over and whether take was done.
func (r *receivers) waitArrivals(ctx context.Context, from int, limit time.Duration, take func(hookArrival) bool) (int, bool, error) {
	deadline := time.Now().Add(limit)
	for {
		got, end := r.next(from)
		for i, a := range got {
			if take(a) {
				return from + i + 1, true, nil
			}
		}
		from = end
		if time.Now().After(deadline) {
			return from, false, nil
		}
		if err := sleepCtx(ctx, hookPollInterval); err != nil {
			return from, false, err
		}
	}
}

// close stops every receiver, answering the slow requests at once.
func (r *receivers) close() {
	close(r.closing)
	r.mu.Lock()
	servers := r.servers
	r.mu.Unlock()
	for _, s := range servers {
		_ = s.Close()
	}
}

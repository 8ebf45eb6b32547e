package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
)

// agent-mix is what one agent does in a session, one request per step, in
// the order an agent following the spec would: look at its scope, poll the
// change feed, list what it can see, create an Account card, annotate it,
// read its History and note a transaction, look up and upsert a Sheet row,
// add a bookmark card to a Space and tidy up after itself. Each step is its
// own row in the report. A step whose input is missing (the card create
// failed) is skipped, so one error does not cascade into many.

// agentStep is one request of the session.
type agentStep struct {
	ready func(w *agentMixWorker) bool // nil: always
	build func(w *agentMixWorker) *request
	done  func(w *agentMixWorker, resp *response)
}

// cardRef is a card the session created: its id and latest version.
type cardRef struct{ id, version string }

type agentMixWorker struct {
	base     string
	key      string
	acct     *account
	sw       *sheetWriter
	rng      *rand.Rand
	step     int
	current  *agentStep
	since    string // the events cursor
	card     cardRef
	txid     string
	spaceVer string
	bookmark cardRef
	req      request
}

// agentMixLookups are the Sheet filters of the upsert keys: ?address=…&chain=bitcoin.
var agentMixLookups = func() []string {
	out := make([]string, agentMixKeys)
	for k := range out {
		out[k] = "?address=" + url.QueryEscape(rowCells("agent", k)[0]) + "&chain=bitcoin"
	}
	return out
}()

func newAgentMixWorker(e *env, w int) worker {
	e.sheet(w).dirty = true
	a := e.account(w)
	return &agentMixWorker{base: e.target(w), key: a.writeKey, acct: a, sw: e.sheetWriter(w), rng: newRand(w), step: 0}
}

func (w *agentMixWorker) next() *request {
	for range agentSteps {
		s := &agentSteps[w.step]
		w.step = (w.step + 1) % len(agentSteps)
		if s.ready == nil || s.ready(w) {
			w.current = s
			return s.build(w)
		}
	}
	panic("agent-mix: no step is ready") // GET /v1/me always is
}

func (w *agentMixWorker) done(_ *request, resp *response) {
	if w.current.done != nil {
		w.current.done(w, resp)
	}
}

// get and send fill the worker's one request.
func (w *agentMixWorker) get(op, path string) *request {
	w.req = request{op: op, method: "GET", url: w.base + path, bearer: w.key}
	return &w.req
}

func (w *agentMixWorker) send(op, method, path string, body any) *request {
	b, _ := json.Marshal(body)
	w.req = request{op: op, method: method, url: w.base + path, bearer: w.key, body: b}
	return &w.req
}

func decode(resp *response, into any) bool {
	return resp.ok() && json.Unmarshal(resp.body, into) == nil
}

type cardAnswer struct {
	Card struct {
		ID      string `json:"id"`
		Version string `json:"version"`
	} `json:"card"`
	Space struct {
		Version string `json:"version"`
	} `json:"space"`
}

func hasCard(w *agentMixWorker) bool { return w.card.id != "" }

var agentSteps = []agentStep{
	{build: func(w *agentMixWorker) *request { return w.get("GET /v1/me", "/v1/me") }},
	{
		build: func(w *agentMixWorker) *request {
			path := "/v1/events?limit=100"
			if w.since != "" {
				path += "&since=" + url.QueryEscape(w.since)
			}
			return w.get("GET /v1/events", path)
		},
		done: func(w *agentMixWorker, resp *response) {
			var page struct {
				NextSince string `json:"next_since"`
			}
			if decode(resp, &page) && page.NextSince != "" {
				w.since = page.NextSince
			}
		},
	},
	{build: func(w *agentMixWorker) *request { return w.get("GET /v1/bookmark-spaces", "/v1/bookmark-spaces") }},
	{build: func(w *agentMixWorker) *request { return w.get("GET /v1/portfolio/cards", "/v1/portfolio/cards") }},
	{
		ready: func(w *agentMixWorker) bool { return w.card.id == "" },
		build: func(w *agentMixWorker) *request {
			return w.send("POST /v1/portfolio/cards", "POST", "/v1/portfolio/cards", map[string]string{"address": randomAddress(), "name": "agent card"})
		},
		done: func(w *agentMixWorker, resp *response) {
			var a cardAnswer
			if decode(resp, &a) {
				w.card = cardRef{a.Card.ID, a.Card.Version}
			}
		},
	},
	{
		ready: hasCard,
		build: func(w *agentMixWorker) *request {
			return w.send("PATCH /v1/portfolio/cards/{id}", "PATCH", "/v1/portfolio/cards/"+w.card.id,
				map[string]string{"expected_version": w.card.version, "note": fmt.Sprintf("checked %d", w.rng.IntN(1000))})
		},
		done: func(w *agentMixWorker, resp *response) {
			var a cardAnswer
			if decode(resp, &a) {
				w.card.version = a.Card.Version
			}
		},
	},
	{
		ready: hasCard,
		build: func(w *agentMixWorker) *request {
			return w.get("GET /v1/history/cards/{id}/transactions", "/v1/history/cards/"+w.card.id+"/transactions?limit=10")
		},
		done: func(w *agentMixWorker, resp *response) {
			var page struct {
				Transactions []struct {
					TxID string `json:"txid"`
				} `json:"transactions"`
			}
			w.txid = ""
			if decode(resp, &page) && len(page.Transactions) > 0 {
				w.txid = page.Transactions[w.rng.IntN(len(page.Transactions))].TxID
			}
		},
	},
	{
		ready: func(w *agentMixWorker) bool { return w.txid != "" },
		build: func(w *agentMixWorker) *request {
			return w.send("PUT /v1/history/notes/{txid}", "PUT", "/v1/history/notes/"+w.txid, map[string]string{"note": "seen by bench"})
		},
		done: func(w *agentMixWorker, _ *response) { w.txid = "" },
	},
	{
		build: func(w *agentMixWorker) *request {
			w.req = request{op: "GET …/sheet?address=…&chain=…", method: "GET", url: w.sw.url + agentMixLookups[w.rng.IntN(len(agentMixLookups))], bearer: w.key}
			return &w.req
		},
		done: func(w *agentMixWorker, resp *response) { w.sw.observe(resp) },
	},
	{
		build: func(w *agentMixWorker) *request {
			if w.sw.reread {
				return w.sw.rereadRequest()
			}
			return w.sw.write(opSheetPut, "PUT", agentMixBodies[w.rng.IntN(len(agentMixBodies))])
		},
		done: func(w *agentMixWorker, resp *response) { w.sw.observe(resp) },
	},
	{
		build: func(w *agentMixWorker) *request {
			return w.get("GET /v1/bookmark-spaces/{id}", "/v1/bookmark-spaces/"+w.acct.bitcoinSpace)
		},
		done: func(w *agentMixWorker, resp *response) {
			var a cardAnswer
			if decode(resp, &a) {
				w.spaceVer = a.Space.Version
			}
		},
	},
	{
		ready: func(w *agentMixWorker) bool { return w.spaceVer != "" && w.bookmark.id == "" },
		build: func(w *agentMixWorker) *request {
			return w.send("POST …/cards (bookmark)", "POST", "/v1/bookmark-spaces/"+w.acct.bitcoinSpace+"/cards",
				map[string]string{"expected_space_version": w.spaceVer, "address": randomAddress(), "name": "agent bookmark"})
		},
		done: func(w *agentMixWorker, resp *response) {
			var a cardAnswer
			if decode(resp, &a) {
				w.bookmark, w.spaceVer = cardRef{a.Card.ID, a.Card.Version}, a.Space.Version
			}
		},
	},
	{
		ready: func(w *agentMixWorker) bool { return w.bookmark.id != "" },
		build: func(w *agentMixWorker) *request {
			return w.send("DELETE …/cards/{id} (bookmark)", "DELETE", "/v1/bookmark-spaces/"+w.acct.bitcoinSpace+"/cards/"+w.bookmark.id,
				map[string]string{"expected_version": w.bookmark.version})
		},
		// Forget the card whatever the answer: a session does not retry
		// its clean-up, and a leftover shows as an error in the report.
		done: func(w *agentMixWorker, _ *response) { w.bookmark = cardRef{} },
	},
	{
		ready: hasCard,
		build: func(w *agentMixWorker) *request {
			return w.send("DELETE /v1/portfolio/cards/{id}", "DELETE", "/v1/portfolio/cards/"+w.card.id, map[string]string{"expected_version": w.card.version})
		},
		done: func(w *agentMixWorker, _ *response) { w.card = cardRef{} },
	},
}

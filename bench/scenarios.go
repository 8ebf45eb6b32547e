package main

import (
	"math/rand/v2"
	"strconv"
)

// scenario is one named load. Every scenario but baseline runs against
// the accounts setupFixture made, one worker per connection; worker w uses
// account w mod accounts and, within it, its own Sheet (sheet-put and
// sheet-patch: all the Sheets it owns, in turn), so it alone writes that
// Sheet and always knows its revision.
type scenario struct {
	name    string
	summary string
	// server: needs an addrwatch node (all but baseline).
	server bool
	// cards: the accounts need seeded Account and bookmark cards.
	cards bool
	// seedRows is what each worker's Sheet holds when the run starts: its
	// first seedRows slots filled and the rest blank. -1 leaves the Sheet as
	// the previous scenario left it.
	seedRows int
	// perAccountMax is how many workers may share an account (0: as many
	// as it has Sheets); agent-mix creates cards, and a Space holds ten.
	perAccountMax int
	// ownAccounts: the scenario makes (in start) and removes the accounts
	// it runs against, and needs none of setupFixture's.
	ownAccounts bool
	// start, when set, starts what the scenario needs in-process.
	start     func(e *env) (stop func(), err error)
	newWorker func(e *env, w int) worker
}

// scenarios, in the order `all` runs them.
var scenarios = []*scenario{
	{name: "sheet-put", summary: "Sheet upserts (PUT …/sheet) spread over every account's Sheets; no Sheet has two writers",
		server: true, seedRows: 0, newWorker: newSheetPutWorker},
	{name: "sheet-patch", summary: "100-row Sheet PATCHes, walking each Sheet's 1,000 slots 100 at a time",
		server: true, seedRows: -1, newWorker: newSheetPatchWorker},
	{name: "sheet-mixed", summary: "one Sheet per connection: 50% reads, 35% upserts, 10% deletes, 5% compactions",
		server: true, seedRows: 100, newWorker: newSheetMixedWorker},
	{name: "reads", summary: "a read-only key: GET /v1/me, Account cards, bookmark cards, sparse Sheet reads in turn",
		server: true, cards: true, seedRows: 100, newWorker: newReadsWorker},
	{name: "auth-reads", summary: "a read-only key: GET /v1/me and a 10-card Account card list in turn (the read target of issue 8)",
		server: true, cards: true, seedRows: -1, start: fillPortfolios, newWorker: newAuthReadsWorker},
	{name: "mcp", summary: "auth-reads as MCP tool calls: a read-only key calls the me and list_portfolio_cards tools in turn (POST /v1/mcp, Streamable HTTP)",
		server: true, cards: true, seedRows: -1, start: fillPortfolios, newWorker: newMCPWorker},
	{name: "agent-mix", summary: "an agent session over the whole API: /me, events, Spaces, cards, History, notes, Sheets",
		server: true, cards: true, seedRows: 50, perAccountMax: cardsPerPlaceMax - seededCards, newWorker: newAgentMixWorker},
	{name: "site", summary: "signed-in loads of the owner's API access panel (GET /access) for a full extended account",
		server: true, ownAccounts: true, seedRows: -1, start: setupSiteAccounts, newWorker: newSiteWorker},
	{name: "baseline", summary: "a bare fasthttp handler in this process: the ceiling of this client and loopback",
		server: false, seedRows: -1, start: startBaseline, newWorker: newBaselineWorker},
}

func findScenario(name string) *scenario {
	for _, s := range scenarios {
		if s.name == name {
			return s
		}
	}
	return nil
}

func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// env is what workers are built from.
type env struct {
	cfg         *config
	client      *client
	fix         *fixture
	site        []*siteAccount // the site scenario's accounts, while it runs
	baselineURL string
}

// target is the node worker w sends to: connections are spread over the
// targets, and a follower forwards to the leader as a real client's
// request would be.
func (e *env) target(w int) string { return e.cfg.targets[w%len(e.cfg.targets)] }

func (e *env) account(w int) *account { return e.fix.accounts[w%len(e.fix.accounts)] }

func (e *env) sheet(w int) *sheetSpace { return e.account(w).sheets[w/len(e.fix.accounts)] }

func (e *env) sheetWriter(w int) *sheetWriter {
	return newSheetWriter(e.target(w), e.account(w).writeKey, e.sheet(w))
}

// ownedSheet is a Sheet and the account it is in.
type ownedSheet struct {
	acct  *account
	sheet *sheetSpace
}

// sheetsOf lists every Sheet worker w owns. Sheet g is slot g/accounts of
// account g mod accounts (so Sheet w is e.sheet(w)) and belongs to worker
// g mod connections: with more accounts than connections a worker owns
// several Sheets, and the scenarios that write in turn reach every
// account; still no Sheet has two writers.
func (e *env) sheetsOf(w int) []ownedSheet {
	n := len(e.fix.accounts)
	var out []ownedSheet
	for g := w; g < n*len(e.fix.accounts[0].sheets); g += e.cfg.connections {
		a := e.fix.accounts[g%n]
		out = append(out, ownedSheet{a, a.sheets[g/n]})
	}
	return out
}

// sheetRotation writes a worker's Sheets in turn.
type sheetRotation struct {
	writers []*sheetWriter
	i       int
	cur     *sheetWriter
}

func (e *env) sheetRotation(w int) *sheetRotation {
	r := &sheetRotation{}
	for _, o := range e.sheetsOf(w) {
		o.sheet.dirty = true
		r.writers = append(r.writers, newSheetWriter(e.target(w), o.acct.writeKey, o.sheet))
	}
	return r
}

// pick returns the next Sheet's writer; done answers go to it.
func (r *sheetRotation) pick() *sheetWriter {
	r.cur = r.writers[r.i]
	r.i = (r.i + 1) % len(r.writers)
	return r.cur
}

func newRand(w int) *rand.Rand { return rand.New(rand.NewPCG(uint64(w), 0x5eed)) }

// Operation labels. "…" stands for /v1/bookmark-spaces/{space_id}.
const (
	opSheetPut     = "PUT …/sheet (upsert)"
	opSheetPatch   = "PATCH …/sheet (100 rows)"
	opSheetDelete  = "DELETE …/sheet (row)"
	opSheetCompact = "POST …/sheet (compact)"
	opSheetSparse  = "GET …/sheet?view=sparse"
	opSheetDense   = "GET …/sheet?offset=…&limit=100"
)

// Upsert key pools: how many distinct Address + Blockchain keys a worker
// upserts, so that most PUTs after the first few seconds update a row and
// some create one, and the Sheet never fills (1,000 slots).
const (
	sheetPutKeys   = 500
	sheetMixedKeys = 300
	agentMixKeys   = 200
)

var (
	sheetPutBodies   = upsertBodies("put", sheetPutKeys)
	sheetMixedBodies = upsertBodies("mixed", sheetMixedKeys)
	agentMixBodies   = upsertBodies("agent", agentMixKeys)
	// sheetPatchBodies are the ten 100-slot windows of a Sheet.
	sheetPatchBodies = func() [][]byte {
		out := make([][]byte, sheetSlots/sheetPatchMax)
		for k := range out {
			out[k] = patchRows(k*sheetPatchMax, (k+1)*sheetPatchMax, func(i int) []string { return rowCells("patch", i) })
		}
		return out
	}()
)

// sheet-put: upserts by Address + Blockchain, picking keys at random.
type sheetPutWorker struct {
	sheets *sheetRotation
	rng    *rand.Rand
}

func newSheetPutWorker(e *env, w int) worker {
	return &sheetPutWorker{sheets: e.sheetRotation(w), rng: newRand(w)}
}

func (w *sheetPutWorker) next() *request {
	sw := w.sheets.pick()
	if sw.reread {
		return sw.rereadRequest()
	}
	return sw.write(opSheetPut, "PUT", sheetPutBodies[w.rng.IntN(len(sheetPutBodies))])
}

func (w *sheetPutWorker) done(_ *request, resp *response) { w.sheets.cur.observe(resp) }

// sheet-patch: 100-row PATCHes over the ten windows of the Sheet in turn.
type sheetPatchWorker struct {
	sheets *sheetRotation
	window int
}

func newSheetPatchWorker(e *env, w int) worker {
	return &sheetPatchWorker{sheets: e.sheetRotation(w), window: w % len(sheetPatchBodies)}
}

func (w *sheetPatchWorker) next() *request {
	sw := w.sheets.pick()
	if sw.reread {
		return sw.rereadRequest()
	}
	body := sheetPatchBodies[w.window]
	w.window = (w.window + 1) % len(sheetPatchBodies)
	return sw.write(opSheetPatch, "PATCH", body)
}

func (w *sheetPatchWorker) done(_ *request, resp *response) { w.sheets.cur.observe(resp) }

// sheet-mixed: what a busy Sheet sees. The Sheet stays compact (PUT fills
// the first empty slot, DELETE shifts later rows up), so stored counts its
// rows and any index below it deletes one; a compaction then moves
// nothing, which is also what most agents' compactions meet.
type sheetMixedWorker struct {
	sw     *sheetWriter
	rng    *rand.Rand
	stored int
	req    request
}

func newSheetMixedWorker(e *env, w int) worker {
	e.sheet(w).dirty = true
	return &sheetMixedWorker{sw: e.sheetWriter(w), rng: newRand(w), stored: 100}
}

func (w *sheetMixedWorker) next() *request {
	if w.sw.reread {
		return w.sw.rereadRequest()
	}
	switch r := w.rng.IntN(100); {
	case r < 35:
		w.req = request{op: opSheetSparse, method: "GET", url: w.sw.url + "?view=sparse", bearer: w.sw.key}
		return &w.req
	case r < 50:
		offset := w.rng.IntN(sheetSlots - sheetPatchMax + 1)
		w.req = request{op: opSheetDense, method: "GET", url: w.sw.url + "?limit=100&offset=" + strconv.Itoa(offset), bearer: w.sw.key}
		return &w.req
	case r < 85 || w.stored == 0 && r < 95:
		return w.sw.write(opSheetPut, "PUT", sheetMixedBodies[w.rng.IntN(len(sheetMixedBodies))])
	case r < 95:
		return w.sw.write(opSheetDelete, "DELETE", []byte(`,"index":`+strconv.Itoa(w.rng.IntN(w.stored))+`}`))
	default:
		return w.sw.write(opSheetCompact, "POST", []byte(`}`))
	}
}

func (w *sheetMixedWorker) done(req *request, resp *response) {
	ans, ok := w.sw.observe(resp)
	if !ok {
		return
	}
	switch req.op {
	case opSheetPut:
		if ans.Created != nil && *ans.Created {
			w.stored++
		}
	case opSheetDelete:
		w.stored--
	}
}

// reads: a read-only key walking the read paths in turn.
type readsWorker struct {
	reqs []request
	i    int
}

func newReadsWorker(e *env, w int) worker {
	a, base := e.account(w), e.target(w)
	key := a.readKey
	return &readsWorker{i: w, reqs: []request{
		{op: "GET /v1/me", method: "GET", url: base + "/v1/me", bearer: key},
		{op: "GET /v1/portfolio/cards", method: "GET", url: base + "/v1/portfolio/cards", bearer: key},
		{op: "GET …/cards (bookmarks)", method: "GET", url: base + "/v1/bookmark-spaces/" + a.bitcoinSpace + "/cards", bearer: key},
		{op: opSheetSparse, method: "GET", url: sheetURL(base, e.sheet(w).id) + "?view=sparse", bearer: key},
	}}
}

func (w *readsWorker) next() *request {
	w.i++
	return &w.reqs[w.i%len(w.reqs)]
}

func (w *readsWorker) done(*request, *response) {}

// auth-reads: the two authenticated reads every agent session starts with,
// against an account whose portfolio is full (ten Account cards).
func newAuthReadsWorker(e *env, w int) worker {
	a, base := e.account(w), e.target(w)
	key := a.readKey
	return &readsWorker{i: w, reqs: []request{
		{op: "GET /v1/me", method: "GET", url: base + "/v1/me", bearer: key},
		{op: "GET /v1/portfolio/cards (10)", method: "GET", url: base + "/v1/portfolio/cards", bearer: key},
	}}
}

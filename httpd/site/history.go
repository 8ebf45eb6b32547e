package site

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// The site's History: the combined view and each card's, paged with
// next_offset as the API pages them, from the same views
// (Owner's CombinedHistory and CardTransactions), with transaction notes
// saved and deleted in place through the same note rules. A degraded
// upstream is a banner over what could be read, never an empty History.

var historyNotices = map[string]string{
	"note-saved":   "Note saved.",
	"note-deleted": "Note deleted.",
}

// historyRow is a transaction as the History table shows it.
type historyRow struct {
	TxID    string
	When    string // block time, or "unconfirmed"
	Amount  string // the card's balance effect, signed, in BTC
	Fee     string
	Note    string
	HasNote bool
	Cards   string // the combined view: the cards it involves
}

// historyCardLink is a card of the combined view's summary.
type historyCardLink struct {
	ID, Name, Address string
	Total, Balance    string
	Degraded          bool
}

// historyData is the History page's, combined or one card's.
type historyData struct {
	CardID, CardName string        // one card's page
	Balance          *balanceShown // one card's page: the card's balance
	Cards            []historyCardLink
	Rows             []historyRow
	Degraded         bool
	Window           string // what the rows cover
	Preview          bool
	Incomplete       bool
	CSV              string
	Back             string // this page, for the note forms to come back to
	PrevOffset       *int
	NextOffset       *int
	NoteMax          int
}

func (s *Site) registerHistory(r Router) {
	r.GET("/history", s.signedIn(s.combinedHistoryPage))
	r.GET("/history/cards/{card_id}", s.signedIn(s.cardHistoryPage))
	r.POST("/history/notes/{txid}", s.signedIn(s.noteForm))
	r.POST("/history/notes/{txid}/delete", s.signedIn(s.deleteNoteForm))
}

func (s *Site) combinedHistoryPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	v, err := s.owner.CombinedHistory(ctx, sess.cred)
	if err != nil {
		s.siteError(ctx, err)
		return
	}
	names := map[string]string{}
	d := historyData{Degraded: v.HistoryDegraded, CSV: DownloadsPrefix + "/history.csv", Back: "/history", NoteMax: noteCharsMaxShown}
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
	for _, tx := range v.Transactions {
		row := historyRowOf(tx)
		var involved []string
		for _, id := range tx.CardIDs {
			involved = append(involved, names[id])
		}
		row.Cards = strings.Join(involved, ", ")
		d.Rows = append(d.Rows, row)
	}
	d.describeWindow(v.HistoryExport)
	s.renderHistory(ctx, sess, "History", d)
}

func (s *Site) cardHistoryPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "card_id")
	offset, perr := s.owner.HistoryOffset(ctx)
	if perr != nil {
		s.siteError(ctx, perr)
		return
	}
	card, err := s.card(sess, id)
	if err != nil {
		s.siteError(ctx, err)
		return
	}
	v, verr := s.owner.CardTransactions(ctx, sess.cred, id, offset)
	if err := s.typed(verr); err != nil {
		s.siteError(ctx, err)
		return
	}
	balance, _ := s.balancesOf(sess, []string{card.Address})
	d := historyData{CardID: id, CardName: cardLabel(card.Name), Balance: &balance[0], Degraded: v.HistoryDegraded, NoteMax: noteCharsMaxShown,
		CSV:  DownloadsPrefix + "/history/cards/" + url.PathEscape(id) + "/transactions.csv",
		Back: "/history/cards/" + url.PathEscape(id) + "?offset=" + strconv.Itoa(offset)}
	for _, tx := range v.Transactions {
		d.Rows = append(d.Rows, historyRowOf(tx))
	}
	if offset > 0 {
		prev := max(0, offset-views.HistoryPage)
		d.PrevOffset = &prev
	}
	if v.HasMore && v.NextOffset != nil {
		d.NextOffset = v.NextOffset
	}
	d.describeWindow(v.HistoryExport)
	s.renderHistory(ctx, sess, "History of "+cardLabel(card.Name), d)
}

func (s *Site) renderHistory(ctx *fasthttp.RequestCtx, sess *siteSession, title string, d historyData) {
	r := s.reads(sess)
	_, page := r.layout("history")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Data = title, d
	page.Notice = historyNotices[string(ctx.QueryArgs().Peek("m"))]
	s.renderPage(ctx, fasthttp.StatusOK, "history", page)
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

func historyRowOf(tx views.Tx) historyRow {
	row := historyRow{TxID: tx.TxID, When: "unconfirmed", Amount: formatBTC(tx.AmountSat, true), Fee: formatBTC(tx.FeeSat, false)}
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
		s.noteRefused(ctx, err, text)
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
		s.noteRefused(ctx, err, "")
		return
	}
	s.redirect(ctx, historyBack(ctx, "note-deleted"))
}

// noteRefused says why a note was not saved, and repeats what the owner
// typed, so that nothing typed is lost.
func (s *Site) noteRefused(ctx *fasthttp.RequestCtx, failure error, typed string) {
	err := s.edge.SpecError(failure)
	text := "The note was not saved: " + err.Message
	if typed != "" {
		text += ". What you typed: “" + typed + "”"
	}
	if err.RetryAfter > 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(err.RetryAfter))
	}
	s.renderPage(ctx, s.edge.Status(err.Code), "message", sitePage{Title: "Nothing was changed", Narrow: true,
		Data: messageData{Text: text, Link: historyBack(ctx, ""), LinkText: "Back to History"}})
}

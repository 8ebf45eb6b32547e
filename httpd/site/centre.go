package site

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The notification centre: the account's recent chain events, newest
// first, of every card, live (a new event redraws it within about a
// second: /live carries the newest event's number, live.go). The
// navigation shows how many came since this browser last opened it: the
// number of the newest event seen is kept in a cookie, which holds
// nothing secret (a planted one can only change that count).

const (
	seenCookie       = "addrwatch_seen"
	secureSeenCookie = "__Host-addrwatch_seen"
	// centreBadgeMax is the largest count the badge spells out.
	centreBadgeMax = 99
	// seenCookieAge keeps the number across browser restarts.
	seenCookieAge = 400 * 24 * time.Hour
)

// centreRow is one event as the centre shows it.
type centreRow struct {
	When, WhenISO, Kind, Amount, Card, CardLink, TxID, TxShort, Detail string
	Gone, Incoming, Outgoing                                           bool
}

// centreData is the notification centre's page.
type centreData struct {
	Rows   []centreRow
	Older  string
	Newest bool
}

func (s *Site) registerCentre(r Router) {
	r.GET("/centre", s.signedIn(s.centrePage))
}

func (s *Site) centrePage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	q := actors.ChainCentreQuery{Limit: actors.ChainCentreLimitDefault}
	status, problem := fasthttp.StatusOK, ""
	if before := string(ctx.QueryArgs().Peek("before")); before != "" {
		if q.Before, _ = strconv.ParseUint(before, 10, 64); q.Before == 0 {
			status, problem = fasthttp.StatusUnprocessableEntity, "That page of the centre does not exist; here are the newest events."
		}
	}
	r := s.reads(sess)
	centre := read(r, q)
	cards := read(r, actors.NotifiedCardsQuery{})
	if r.err == nil && q.Before == 0 {
		// Opening the newest page sees every event: the badge drawn
		// with this very page already counts none.
		sess.seen = centre.Latest
		setSeenCookie(ctx, sess, centre.Latest)
	}
	_, page := r.layout("centre")
	if r.failed(ctx) {
		return
	}
	spaceOf := map[string]string{}
	for _, c := range cards.Cards {
		spaceOf[c.ID] = c.SpaceID
	}
	d := centreData{Newest: q.Before == 0}
	for _, e := range centre.Events {
		d.Rows = append(d.Rows, newCentreRow(e, spaceOf))
	}
	if centre.HasMore {
		d.Older = "/centre?" + url.Values{"before": {strconv.FormatUint(centre.NextBefore, 10)}}.Encode()
	}
	page.Title, page.Problem, page.Data = "Notification centre", problem, d
	s.renderPage(ctx, status, "centre", page)
}

func newCentreRow(e actors.ChainCentreEvent, spaceOf map[string]string) centreRow {
	row := centreRow{Kind: kindShort(e.Kind), Amount: formatBTC(e.AmountSat, true), Card: cardLabel(e.CardName), TxID: e.TxID,
		TxShort: shortTxID(e.TxID), Gone: e.CardGone, Incoming: e.AmountSat > 0, Outgoing: e.AmountSat < 0, WhenISO: e.At}
	row.When = e.At
	if t, err := time.Parse(time.RFC3339Nano, e.At); err == nil {
		row.When = t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	switch {
	case e.CardGone:
		row.Card = "(a card deleted since)"
	case spaceOf[e.CardID] != "":
		row.CardLink = "/spaces/" + spaceOf[e.CardID]
	default:
		row.CardLink = "/history/cards/" + e.CardID
	}
	switch e.Kind {
	case actors.ChainTxConfirmed, actors.ChainTxDeep:
		row.Detail = "block " + strconv.FormatInt(e.Height, 10) + ", " + strconv.FormatInt(e.Confirmations, 10) + " deep"
	case actors.ChainTxReorged:
		row.Detail = "was in block " + strconv.FormatInt(e.Height, 10)
	case actors.ChainTxReplaced:
		row.Detail = "by " + shortTxID(e.ReplacedBy)
	}
	return row
}

// shortTxID shows a txid by its ends: the page gives the whole one in
// the title.
func shortTxID(txid string) string {
	if len(txid) <= 16 {
		return txid
	}
	return txid[:8] + "…" + txid[len(txid)-8:]
}

// seenOf reads the seen cookie: the newest event this browser has seen
// of the account (0 when it has none, or one of another account).
func seenOf(ctx *fasthttp.RequestCtx, https bool, account string) uint64 {
	name := seenCookie
	if https {
		name = secureSeenCookie
	}
	v := string(ctx.Request.Header.Cookie(name))
	dot := strings.LastIndexByte(v, '.')
	if dot < 0 || v[:dot] != account {
		return 0
	}
	seq := v[dot+1:]
	n, _ := strconv.ParseUint(seq, 10, 64)
	return n
}

func setSeenCookie(ctx *fasthttp.RequestCtx, sess *siteSession, latest uint64) {
	name := seenCookie
	if sess.https {
		name = secureSeenCookie
	}
	setCookie(ctx, name, sess.cred.AccountID+"."+strconv.FormatUint(latest, 10), sess.https, seenCookieAge)
}

// badgeText is the navigation badge's count.
func badgeText(n int) string {
	if n > centreBadgeMax {
		return strconv.Itoa(centreBadgeMax) + "+"
	}
	return strconv.Itoa(n)
}

// lastActivity is a card's latest chain event as the Portfolio shows it:
// what happened and when.
type lastActivity struct {
	Kind, When, WhenISO string
}

func lastActivityOf(e actors.LastChainEvent) *lastActivity {
	t := time.Unix(0, e.At).UTC()
	return &lastActivity{Kind: kindShort(e.Kind), When: t.Format("2006-01-02 15:04 UTC"), WhenISO: t.Format(time.RFC3339)}
}

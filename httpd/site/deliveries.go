package site

import (
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The delivery log: every try of every notification, newest first, a page
// at a time, of one channel or all; "send again" makes a notification
// pending again with the same event ID (RedeliverEntry), so a receiver
// that got it already knows it for a redelivery.

// deliveriesPage is how many lines a page shows.
const deliveriesPage = 50

// deliveryRow is one line as the page shows it.
type deliveryRow struct {
	When, Channel, Kind, Card, Amount, Outcome, Class, Latency, Detail string
	EntryID                                                            string
	Attempt                                                            int
	Delivered, GaveUp                                                  bool
}

// deliveriesData is the delivery log's page.
type deliveriesData struct {
	Rows     []deliveryRow
	Channels []actors.ChannelView
	Channel  string // the channel filtered on
	Older    string // the next page's link, "" on the last
	Newest   bool   // this is the first page
}

func (s *Site) registerDeliveries(r Router) {
	r.GET("/notifications/deliveries", s.signedIn(s.deliveriesPage))
	r.POST("/notifications/deliveries/{entry_id}/redeliver", s.signedIn(s.redeliverForm))
}

func (s *Site) deliveriesPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	args := ctx.QueryArgs()
	q := actors.DeliveryLogQuery{ChannelID: string(args.Peek("channel")), Limit: deliveriesPage}
	status, problem := fasthttp.StatusOK, ""
	if before := string(args.Peek("before")); before != "" {
		if q.Before, _ = strconv.ParseUint(before, 10, 64); q.Before == 0 {
			status, problem = fasthttp.StatusUnprocessableEntity, "That page of the log does not exist; here is the newest."
		}
	}
	r := s.reads(sess)
	_, page := r.layout("notifications")
	channels := read(r, actors.NotifyChannelsQuery{})
	cards := read(r, actors.NotifiedCardsQuery{})
	log := read(r, q)
	if r.failed(ctx) {
		return
	}
	names := map[string]string{}
	for _, ch := range channels.Channels {
		names[ch.ID] = ch.Name
	}
	cardNames := map[string]string{}
	for _, c := range cards.Cards {
		cardNames[c.ID] = cardLabel(c.Name)
	}
	d := deliveriesData{Channels: channels.Channels, Channel: q.ChannelID, Newest: q.Before == 0}
	for _, l := range log.Deliveries {
		d.Rows = append(d.Rows, newDeliveryRow(l, names, cardNames))
	}
	if log.HasMore && log.NextBefore != nil {
		older := url.Values{"before": {strconv.FormatUint(*log.NextBefore, 10)}}
		if q.ChannelID != "" {
			older.Set("channel", q.ChannelID)
		}
		d.Older = "/notifications/deliveries?" + older.Encode()
	}
	page.Title, page.Problem, page.Data = "Delivery log", problem, d
	page.Notice = notifyNotices[string(args.Peek("m"))]
	s.renderPage(ctx, status, "deliveries", page)
}

func newDeliveryRow(l actors.DeliveryLineView, channels, cards map[string]string) deliveryRow {
	row := deliveryRow{When: shortTime(&l.At), Kind: kindShort(l.Kind), Amount: formatBTC(l.AmountSat, true),
		Attempt: l.Attempt, Delivered: l.Delivered, GaveUp: l.GaveUp, Class: l.Class, Detail: l.Detail, EntryID: l.EntryID}
	if t, err := time.Parse(time.RFC3339Nano, l.At); err == nil {
		row.When = t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	row.Channel = channels[l.ChannelID]
	if row.Channel == "" {
		row.Channel = "(a deleted channel)"
	}
	row.Card = cards[l.CardID]
	if row.Card == "" {
		row.Card = "(a card deleted since)"
	}
	switch {
	case l.Delivered:
		row.Outcome = "Delivered"
	case l.GaveUp:
		row.Outcome = "Not delivered; given up"
	default:
		row.Outcome = "Not delivered; tried again later"
	}
	if l.Status != 0 {
		row.Outcome += " (" + strconv.Itoa(l.Status) + ")"
	}
	if l.LatencyMs > 0 || l.Status != 0 {
		row.Latency = strconv.FormatInt(l.LatencyMs, 10) + " ms"
	}
	return row
}

// redeliverForm is "send again": back to the log, on the page and filter
// it was sent from.
func (s *Site) redeliverForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	if _, err := s.siteWrite(sess, &actors.RedeliverEntry{EntryID: pathParam(ctx, "entry_id")}); err != nil {
		message := err.Message
		if err.Code == actors.CodeNotFound {
			message = "This notification is no longer kept (delivered or given-up ones are kept for 7 days), so it cannot be sent again."
		}
		s.renderPage(ctx, s.edge.Status(err.Code), "message", sitePage{Title: "Not sent again", Narrow: true,
			Data: messageData{Text: message, Link: "/notifications/deliveries", LinkText: "Back to the delivery log"}})
		return
	}
	back := url.Values{"m": {"sent-again"}}
	if ch := formValue(ctx, "channel"); ch != "" {
		back.Set("channel", ch)
	}
	s.redirect(ctx, "/notifications/deliveries?"+back.Encode())
}

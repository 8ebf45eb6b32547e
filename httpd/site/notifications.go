package site

import (
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The owner's notification settings: the channels (a signed webhook, an
// ntfy topic, an email address) with what each is doing, the rules of
// which chain events reach them, and (deliveries.go) the delivery log.
// Every change is the owner API's command or operation (Owner's
// CreateNotifyChannel and RotateNotifySecret for what the edge must do:
// resolve and seal a URL, derive a secret). A webhook's secret is shown on
// the answer to its creation or rotation, once, and on no page after:
// the state holds no secret to show. Those answers, and a test's, are
// redirects to a GET page with what to show in a flash (flash.go).

var notifyNotices = map[string]string{
	"channel-added":    "Channel added. It is told of the chain events the rules select from now on.",
	"channel-renamed":  "Channel renamed.",
	"channel-enabled":  "Channel enabled. It is told of chain events again; what failed meanwhile can be sent again from the delivery log.",
	"channel-disabled": "Channel disabled. Nothing is sent to it until you enable it.",
	"channel-deleted":  "Channel deleted, with its undelivered notifications. The delivery log keeps its lines.",
	"rule-saved":       "Rule saved.",
	"rule-removed":     "Rule removed.",
	"sent-again":       "The notification is pending again and goes out on the next try.",
}

// channelKindWords names a channel's kind for the owner.
var channelKindWords = map[actors.ChannelKind]string{
	actors.ChannelWebhook: "Webhook",
	actors.ChannelNtfy:    "ntfy",
	actors.ChannelEmail:   "Email",
}

// channelForm is what the owner typed into the add form. Where (the URL
// or the address) is given back to a refused form only for email: a URL
// may hold a token, and a page shows none.
type channelForm struct {
	Kind, Name, Where string
}

// channelRow is a channel as the page lists it.
type channelRow struct {
	actors.ChannelView
	KindWords string
	// State is what the channel is doing, in words; Failing and Off say
	// how to draw it.
	State         string
	Failing, Off  bool
	FailingNotice bool // disabled after a day of failures: the owner must act
}

// notificationsData is the notification settings page's.
type notificationsData struct {
	Channels []channelRow
	Form     channelForm
	Full     bool
	Limit    limitShown // replaces the add form when Full
	Rules    rulesSummary
	// NoEmail: the server has no SMTP relay, so email channels are
	// refused (and tests of them fail).
	NoEmail bool
}

// notifyChannelsMax is the account's bound on channels, to hide the add
// form when it is reached (the command refuses past it anyway).
const notifyChannelsMax = actors.NotifyChannelsMax

func (s *Site) registerNotifications(r Router) {
	r.GET("/notifications", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		s.renderNotifications(ctx, sess, fasthttp.StatusOK, channelForm{Kind: string(actors.ChannelWebhook)}, "", "")
	}))
	r.POST("/notifications/channels", s.signedIn(s.addChannelForm))
	r.POST("/notifications/channels/{channel_id}/name", s.signedIn(s.renameChannelForm))
	r.POST("/notifications/channels/{channel_id}/enabled", s.signedIn(s.enableChannelForm))
	r.POST("/notifications/channels/{channel_id}/secret", s.signedIn(s.rotateSecretForm))
	r.POST("/notifications/channels/{channel_id}/test", s.signedIn(s.testChannelForm))
	r.GET(channelSecretPage, s.signedIn(s.channelSecretShown))
	r.GET(channelTestedPage, s.signedIn(s.channelTestedShown))
	r.GET("/notifications/channels/{channel_id}/delete", s.signedIn(s.deleteChannelPage))
	r.POST("/notifications/channels/{channel_id}/delete", s.signedIn(s.deleteChannelForm))
	s.registerRules(r)
	s.registerDeliveries(r)
	s.registerCentre(r)
}

func (s *Site) renderNotifications(ctx *fasthttp.RequestCtx, sess *siteSession, status int, form channelForm, notice, problem string) {
	r := s.reads(sess)
	_, page := r.layout("notifications")
	channels := read(r, actors.NotifyChannelsQuery{})
	rules := read(r, actors.NotifyRulesQuery{})
	cards := read(r, actors.NotifiedCardsQuery{})
	if r.failed(ctx) {
		return
	}
	d := notificationsData{Form: form, Full: len(channels.Channels) >= notifyChannelsMax, Limit: channelsLimit(len(channels.Channels)), NoEmail: !s.owner.SendsEmail()}
	d.Limit.ID = "channels-limit"
	for _, ch := range channels.Channels {
		d.Channels = append(d.Channels, newChannelRow(ch))
	}
	d.Rules = summarizeRules(rules, cards, channels.Channels)
	page.Title, page.Notice, page.Problem = "Notifications", notice, problem
	if notice == "" {
		page.Notice = notifyNotices[string(ctx.QueryArgs().Peek("m"))]
	}
	page.Data = d
	s.renderPage(ctx, status, "notifications", page)
}

func newChannelRow(ch actors.ChannelView) channelRow {
	row := channelRow{ChannelView: ch, KindWords: channelKindWords[ch.Kind]}
	switch {
	case !ch.Enabled && ch.DisabledReason == actors.DisabledFailing:
		row.State, row.Off, row.FailingNotice = "Disabled "+shortTime(ch.DisabledAt)+": every try failed for a day", true, true
	case !ch.Enabled:
		row.State, row.Off = "Disabled by you "+shortTime(ch.DisabledAt), true
	case ch.FailingSince != nil:
		row.State, row.Failing = "Failing since "+shortTime(ch.FailingSince), true
	case ch.LastSuccessAt != nil:
		row.State = "Active, last delivered " + shortTime(ch.LastSuccessAt)
	default:
		row.State = "Active, nothing sent yet"
	}
	if ch.PreviousSecretUntil != nil {
		row.State += "; the old secret also signs until " + shortTime(ch.PreviousSecretUntil)
	}
	return row
}

// shortTime shows an RFC 3339 time of a view as "2026-05-01 14:03 UTC".
func shortTime(rfc3339 *string) string {
	if rfc3339 == nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, *rfc3339)
	if err != nil {
		return *rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func (s *Site) addChannelForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	form := channelForm{Kind: formValue(ctx, "kind"), Name: strings.TrimSpace(formValue(ctx, "name")), Where: strings.TrimSpace(formValue(ctx, "where"))}
	created, failure := s.owner.CreateNotifyChannel(sess.cred, form.Kind, form.Name, form.Where)
	if err := s.typed(failure); err != nil {
		if form.Kind != string(actors.ChannelEmail) {
			form.Where = ""
		}
		problem := "The channel was not added: " + err.Message + "."
		if now, cerr := ask(s, sess, actors.NotifyChannelsQuery{}); cerr == nil && len(now.Channels) >= notifyChannelsMax {
			// Another page or tab added the last one first: the page
			// answers in the words it now shows in the form's place.
			problem = "The channel was not added. " + channelsLimit(len(now.Channels)).String()
		}
		s.renderNotifications(ctx, sess, s.edge.Status(err.Code), form, "", problem)
		return
	}
	if created.Secret == "" {
		s.redirect(ctx, "/notifications?m=channel-added")
		return
	}
	s.setFlash(ctx, sess, channelSecretPage, channelSecretFlash{Added: true, Name: truncateRunes(created.Channel.Name, channelNameFlashMax), Secret: created.Secret})
}

// channelSecretPage is where a webhook's new secret is shown: the GET its
// creation or rotation redirects to.
const channelSecretPage = "/notifications/secret"

// channelNameFlashMax bounds the channel name a flash carries, so the
// cookie stays small whatever the name.
const channelNameFlashMax = 100

// channelSecretFlash is a webhook's new secret on its way to
// channelSecretPage: for a new channel (Added, with its Name) or a
// rotation (with the end of the old secret's grace, if any).
type channelSecretFlash struct {
	Added         bool    `json:"added,omitempty"`
	Name          string  `json:"name,omitempty"`
	PreviousUntil *string `json:"previous_until,omitempty"`
	Secret        string  `json:"secret"`
}

// channelSecretData is the page that shows a webhook's secret, once.
type channelSecretData struct {
	Text, Secret string
	// Gone: the secret was shown already, so the page says what to do.
	Gone bool
}

// channelSecretShown shows the webhook secret in the flash, once; a
// reload says it was shown.
func (s *Site) channelSecretShown(ctx *fasthttp.RequestCtx, sess *siteSession) {
	var f channelSecretFlash
	if !s.takeFlash(ctx, sess, &f) {
		s.showOnce(ctx, sess, "notifications", "channel_secret", "Webhook secret shown once", channelSecretData{Gone: true})
		return
	}
	title, text := "Webhook secret rotated", "The webhook has a new secret. Notifications are signed with it from now on: put it in your receiver, and the old one stops working."
	switch {
	case f.Added:
		title, text = "Webhook added", "The webhook "+f.Name+" is added. Your receiver checks each notification's signature with this secret (see Notifications in docs/owners.md)."
	case f.PreviousUntil != nil:
		text = "The webhook has a new secret. Until " + shortTime(f.PreviousUntil) + " each notification is signed with both the old and the new one, so your receiver accepts them while you put the new one in; after that, only the new one."
	}
	s.showOnce(ctx, sess, "notifications", "channel_secret", title, channelSecretData{Text: text, Secret: f.Secret})
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

func (s *Site) renameChannelForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	name := strings.TrimSpace(formValue(ctx, "name"))
	s.channelChange(ctx, sess, &actors.UpdateNotifyChannel{ChannelID: pathParam(ctx, "channel_id"), Name: &name}, "channel-renamed")
}

func (s *Site) enableChannelForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	on := formValue(ctx, "enabled") == "true"
	notice := "channel-disabled"
	if on {
		notice = "channel-enabled"
	}
	s.channelChange(ctx, sess, &actors.UpdateNotifyChannel{ChannelID: pathParam(ctx, "channel_id"), Enabled: &on}, notice)
}

// channelChange proposes a change of a channel and goes back to the page,
// or shows it again with why it was refused.
func (s *Site) channelChange(ctx *fasthttp.RequestCtx, sess *siteSession, p actors.Payload, notice string) {
	if _, err := s.siteWrite(sess, p); err != nil {
		s.renderNotifications(ctx, sess, s.edge.Status(err.Code), channelForm{Kind: string(actors.ChannelWebhook)}, "", err.Message)
		return
	}
	s.redirect(ctx, "/notifications?m="+notice)
}

func (s *Site) rotateSecretForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "channel_id")
	grace, ok := rotationGraces[formValue(ctx, "grace")]
	if !ok {
		s.renderNotifications(ctx, sess, fasthttp.StatusUnprocessableEntity, channelForm{Kind: string(actors.ChannelWebhook)}, "", "Choose how long the old secret keeps working.")
		return
	}
	secret, previousUntil, failure := s.owner.RotateNotifySecret(sess.cred, id, grace)
	if err := s.typed(failure); err != nil {
		s.renderNotifications(ctx, sess, s.edge.Status(err.Code), channelForm{Kind: string(actors.ChannelWebhook)}, "", err.Message)
		return
	}
	s.setFlash(ctx, sess, channelSecretPage, channelSecretFlash{PreviousUntil: previousUntil, Secret: secret})
}

// rotationGraces are the site's choices of how long a rotated secret
// keeps signing: none (the form's default, for a secret that may have
// leaked), an hour, or a day (the owner API takes any number of seconds
// up to a day). A form without the field is one from before the choice.
var rotationGraces = map[string]time.Duration{"": 0, "0": 0, "3600": time.Hour, "86400": 24 * time.Hour}

// channelDeleteData is the confirmation page of a channel's deletion.
type channelDeleteData struct {
	Channel channelRow
}

func (s *Site) deleteChannelPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	_, page := r.layout("notifications")
	channels := read(r, actors.NotifyChannelsQuery{})
	if r.failed(ctx) {
		return
	}
	id := pathParam(ctx, "channel_id")
	for _, ch := range channels.Channels {
		if ch.ID == id {
			page.Title, page.Narrow, page.Data = "Delete a notification channel", true, channelDeleteData{Channel: newChannelRow(ch)}
			s.renderPage(ctx, fasthttp.StatusOK, "channel_delete", page)
			return
		}
	}
	s.siteError(ctx, actors.Errorf(actors.CodeNotFound, "no such notification channel"))
}

func (s *Site) deleteChannelForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.channelChange(ctx, sess, &actors.DeleteNotifyChannel{ChannelID: pathParam(ctx, "channel_id")}, "channel-deleted")
}

// channelTestedPage shows how a channel's test went: the GET the test
// redirects to, so a reload sends no second test.
const channelTestedPage = "/notifications/tested"

// channelTestDetailMax bounds the receiver's words a test's flash
// carries, so the cookie stays small whatever the receiver answered.
const channelTestDetailMax = 300

// testChannelForm sends the channel a sample event now, outside the
// outbox (so not in the delivery log), and redirects to the page that
// says how it went.
func (s *Site) testChannelForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	res, failure := s.owner.TestNotifyChannel(sess.cred, pathParam(ctx, "channel_id"))
	if err := s.typed(failure); err != nil {
		s.renderNotifications(ctx, sess, s.edge.Status(err.Code), channelForm{Kind: string(actors.ChannelWebhook)}, "", "The test was not sent: "+err.Message)
		return
	}
	res.Class, res.Detail = truncateRunes(res.Class, channelTestDetailMax), truncateRunes(res.Detail, channelTestDetailMax)
	s.setFlash(ctx, sess, channelTestedPage, res)
}

// channelTestedShown is the notifications page with how the test went; a
// reload shows the page without it.
func (s *Site) channelTestedShown(ctx *fasthttp.RequestCtx, sess *siteSession) {
	fresh := channelForm{Kind: string(actors.ChannelWebhook)}
	var res ChannelTest
	switch {
	case !s.takeFlash(ctx, sess, &res):
		s.renderNotifications(ctx, sess, fasthttp.StatusOK, fresh, "", "")
	case res.Delivered:
		s.renderNotifications(ctx, sess, fasthttp.StatusOK, fresh, "Test delivered"+testFacts(res)+".", "")
	default:
		said := res.Class
		if res.Detail != "" {
			said += ": " + res.Detail
		}
		s.renderNotifications(ctx, sess, fasthttp.StatusOK, fresh, "", "The test was not delivered"+testFacts(res)+". "+said)
	}
}

// testFacts are a test's answer code and latency, in parentheses.
func testFacts(res ChannelTest) string {
	var facts []string
	if res.Status != 0 {
		facts = append(facts, "answer "+strconv.Itoa(res.Status))
	}
	facts = append(facts, strconv.FormatInt(res.LatencyMs, 10)+" ms")
	return " (" + strings.Join(facts, ", ") + ")"
}

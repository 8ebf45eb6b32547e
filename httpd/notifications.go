package httpd

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
)

// /owner/v1/notifications: the owner's channels (a signed webhook, an ntfy
// topic, an email address), the rules per card or Space, the delivery log
// with "send again", and the outbox's summary. The rules live in actors
// (notify_*.go); what happens here is what apply may not do: drawing IDs
// and nonces, checking a URL against the network (it must resolve only
// to addresses this node sends to), sealing it under the notify key so
// the log never holds it plain, and deriving a webhook's secret, which is
// shown once and stored nowhere.

const notificationsPrefix = "/notifications"

var notificationOperations = []operation{
	{id: "createNotificationChannel", method: fasthttp.MethodPost, path: notificationsPrefix + "/channels", apis: ownerAPI,
		request: typeOf[channelCreateRequest](), response: typeOf[actors.ChannelCreatedView](), status: fasthttp.StatusCreated,
		serve: (*Server).createNotifyChannel},
	{id: "listNotificationChannels", method: fasthttp.MethodGet, path: notificationsPrefix + "/channels", apis: ownerAPI,
		response: answerOf(actors.NotifyChannelsQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.NotifyChannelsQuery{}) }},
	{id: "updateNotificationChannel", method: fasthttp.MethodPatch, path: notificationsPrefix + "/channels/{channel_id}", apis: ownerAPI,
		request: typeOf[channelPatchRequest](), response: typeOf[actors.ChannelView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req channelPatchRequest
				if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
					return nil, err
				}
				return &actors.UpdateNotifyChannel{ChannelID: pathParam(ctx, "channel_id"), Name: req.Name, Enabled: req.Enabled}, nil
			}, decorate: s.wakeDeliverer(r)})
		}},
	{id: "deleteNotificationChannel", method: fasthttp.MethodDelete, path: notificationsPrefix + "/channels/{channel_id}", apis: ownerAPI,
		status: fasthttp.StatusNoContent,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				return &actors.DeleteNotifyChannel{ChannelID: pathParam(ctx, "channel_id")}, nil
			}})
		}},
	{id: "rotateNotificationSecret", method: fasthttp.MethodPost, path: notificationsPrefix + "/channels/{channel_id}/secret", apis: ownerAPI,
		request: typeOf[rotateSecretRequest](), response: typeOf[notifySecretView](), status: fasthttp.StatusOK,
		serve: (*Server).rotateNotifySecret},
	{id: "listNotificationRules", method: fasthttp.MethodGet, path: notificationsPrefix + "/rules", apis: ownerAPI,
		response: answerOf(actors.NotifyRulesQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.NotifyRulesQuery{}) }},
	{id: "putDefaultNotificationRule", method: fasthttp.MethodPut, path: notificationsPrefix + "/rules/default", apis: ownerAPI,
		request: typeOf[ruleRequest](), response: typeOf[actors.RuleView](), status: fasthttp.StatusOK,
		serve: putRule(actors.RuleDefault, "")},
	{id: "deleteDefaultNotificationRule", method: fasthttp.MethodDelete, path: notificationsPrefix + "/rules/default", apis: ownerAPI,
		status: fasthttp.StatusNoContent, serve: deleteRule(actors.RuleDefault, "")},
	{id: "putCardNotificationRule", method: fasthttp.MethodPut, path: notificationsPrefix + "/rules/cards/{card_id}", apis: ownerAPI,
		request: typeOf[ruleRequest](), response: typeOf[actors.RuleView](), status: fasthttp.StatusOK,
		serve: putRule(actors.RuleCard, "card_id")},
	{id: "deleteCardNotificationRule", method: fasthttp.MethodDelete, path: notificationsPrefix + "/rules/cards/{card_id}", apis: ownerAPI,
		status: fasthttp.StatusNoContent, serve: deleteRule(actors.RuleCard, "card_id")},
	{id: "putSpaceNotificationRule", method: fasthttp.MethodPut, path: notificationsPrefix + "/rules/bookmark-spaces/{space_id}", apis: ownerAPI,
		request: typeOf[ruleRequest](), response: typeOf[actors.RuleView](), status: fasthttp.StatusOK,
		serve: putRule(actors.RuleSpace, "space_id")},
	{id: "deleteSpaceNotificationRule", method: fasthttp.MethodDelete, path: notificationsPrefix + "/rules/bookmark-spaces/{space_id}", apis: ownerAPI,
		status: fasthttp.StatusNoContent, serve: deleteRule(actors.RuleSpace, "space_id")},
	{id: "listNotificationDeliveries", method: fasthttp.MethodGet, path: notificationsPrefix + "/deliveries", apis: ownerAPI,
		response: answerOf(actors.DeliveryLogQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) { return deliveryLogQuery(r.ctx) })
		}},
	{id: "redeliverNotification", method: fasthttp.MethodPost, path: notificationsPrefix + "/deliveries/{entry_id}/redeliver", apis: ownerAPI,
		response: typeOf[actors.OutboxEntryView](), status: fasthttp.StatusAccepted,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				return &actors.RedeliverEntry{EntryID: pathParam(ctx, "entry_id")}, nil
			}, decorate: s.wakeDeliverer(r)})
		}},
	{id: "getNotificationOutbox", method: fasthttp.MethodGet, path: notificationsPrefix + "/outbox", apis: ownerAPI,
		response: answerOf(actors.OutboxQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.OutboxQuery{}) }},
}

// channelCreateRequest is a new channel: a webhook or ntfy topic by its
// URL, an email channel by its address.
type channelCreateRequest struct {
	Kind    *string `json:"kind"`
	Name    *string `json:"name"`
	URL     *string `json:"url"`
	Address *string `json:"address"`
}

type channelPatchRequest struct {
	Name    *string `json:"name"`
	Enabled *bool   `json:"enabled"`
}

// ruleRequest is a whole rule; a field left out is its default: every
// kind, any amount, depth 6, every channel.
type ruleRequest struct {
	Events       *[]string `json:"events"`
	MinAmountSat *int64    `json:"min_amount_sat"`
	Depth        *int64    `json:"depth"`
	Channels     *[]string `json:"channels"`
}

// rotateSecretRequest is a rotation's optional body: how long the old
// secret keeps signing beside the new one (0 or left out: it stops now).
type rotateSecretRequest struct {
	GraceSeconds int64 `json:"grace_seconds"`
}

// notifySecretView is a webhook's new secret, shown once, and when the
// old one stops signing if a grace was asked for.
type notifySecretView struct {
	Secret              string  `json:"secret"`
	PreviousSecretUntil *string `json:"previous_secret_until"`
}

// rotation is the command of a rotation to nonce, with grace seconds
// (0: none) in which the old secret still signs.
func rotation(id, nonce string, grace int64) actors.Payload {
	if grace == 0 {
		return &actors.RotateNotifySecret{ChannelID: id, Nonce: nonce}
	}
	return &actors.RotateNotifySecretWithGrace{ChannelID: id, Nonce: nonce, GraceSeconds: grace}
}

// rotatedView is the answer to a rotation: the new secret, and when
// the old one stops signing (from the channel the command answered).
func (s *Server) rotatedView(res actors.Result, id, nonce string) notifySecretView {
	v := notifySecretView{Secret: s.notifyKey.WebhookSecret(id, nonce)}
	if ch, ok := res.Body.(actors.ChannelView); ok {
		v.PreviousSecretUntil = ch.PreviousSecretUntil
	}
	return v
}

// errNotifyUnset refuses a channel's creation or rotation on a node
// built without a notify key (tests; never addrwatchd, which always has
// one).
var errNotifyUnset = actors.Errorf(actors.CodeHTTPError, "notifications are not set up on this node")

// createNotifyChannel makes a channel: the URL is checked, as a send
// would check it, only after the credential is (a lookup costs the node
// a DNS query), then sealed for the new channel's ID.
func (s *Server) createNotifyChannel(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	var req channelCreateRequest
	if err := decodeBody(r.ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	c, cancel := s.context()
	defer cancel()
	v, err := s.makeNotifyChannel(c, r, req)
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusCreated, v)
}

// makeNotifyChannel makes the channel req asks for as r's owner (the
// owner API's and the site's), with a webhook's secret, shown once.
func (s *Server) makeNotifyChannel(c context.Context, r *request, req channelCreateRequest) (actors.ChannelCreatedView, error) {
	p, target, err := channelOf(req)
	if err != nil {
		return actors.ChannelCreatedView{}, err
	}
	if p.ChannelKind == actors.ChannelEmail && (s.notifyTester == nil || !s.notifyTester.SendsEmail()) {
		return actors.ChannelCreatedView{}, errNoRelay
	}
	if s.notifyKey == nil || s.notifyEgress == nil {
		return actors.ChannelCreatedView{}, errNotifyUnset
	}
	who, err := s.authorize(c, r)
	if err != nil {
		return actors.ChannelCreatedView{}, err
	}
	p.ChannelID = "nc_" + newID()
	if p.ChannelKind != actors.ChannelEmail {
		if err := s.sealURL(c, p, target); err != nil {
			return actors.ChannelCreatedView{}, err
		}
	}
	res, err := s.propose(c, &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal, Payload: p})
	if err != nil {
		return actors.ChannelCreatedView{}, err
	}
	v, err := bodyOf[actors.ChannelCreatedView](res)
	if err != nil {
		return actors.ChannelCreatedView{}, err
	}
	if p.ChannelKind == actors.ChannelWebhook {
		v.Secret = s.notifyKey.WebhookSecret(p.ChannelID, p.Nonce)
	}
	return v, nil
}

// channelOf reads a creation request into the command, all but what the
// key and the network give (ID, sealed URL, nonce), and returns the URL.
func channelOf(req channelCreateRequest) (*actors.CreateNotifyChannel, string, error) {
	if req.Kind == nil {
		return nil, "", required("kind")
	}
	kind, known := actors.ParseChannelKind(*req.Kind)
	if !known {
		return nil, "", actors.Errorf(actors.CodeValidation, "kind must be webhook, ntfy or email")
	}
	if req.Name == nil {
		return nil, "", required("name")
	}
	if err := actors.ValidateChannelName(*req.Name); err != nil {
		return nil, "", err
	}
	p := &actors.CreateNotifyChannel{ChannelKind: kind, Name: *req.Name}
	if kind == actors.ChannelEmail {
		if req.URL != nil {
			return nil, "", actors.Errorf(actors.CodeValidation, "an email channel takes address, not url")
		}
		if req.Address == nil {
			return nil, "", required("address")
		}
		address, err := emailAddress(*req.Address)
		if err != nil {
			return nil, "", err
		}
		p.Target, p.Display = address, address
		return p, "", nil
	}
	if req.Address != nil {
		return nil, "", actors.Errorf(actors.CodeValidation, "a %s channel takes url, not address", kind)
	}
	if req.URL == nil {
		return nil, "", required("url")
	}
	if _, err := egress.ParseTarget(*req.URL); err != nil {
		return nil, "", urlRefusal(err)
	}
	return p, *req.URL, nil
}

// emailAddress is the one bare address raw names (net/mail's syntax; a
// display name is dropped, a list refused).
func emailAddress(raw string) (string, error) {
	if len(raw) > actors.EmailAddressBytesMax {
		return "", actors.Errorf(actors.CodeValidation, "address must be at most %d bytes", actors.EmailAddressBytesMax)
	}
	a, err := mail.ParseAddress(raw)
	if err != nil {
		return "", actors.Errorf(actors.CodeValidation, "address must be one email address")
	}
	if err := actors.ValidateEmailAddress(a.Address); err != nil {
		return "", err
	}
	return a.Address, nil
}

// sealURL checks raw as a send would (unless the operator allowed private
// addresses, only public ones) and puts it in p sealed for p's channel,
// with its redacted form to show and, for a webhook, a nonce.
func (s *Server) sealURL(c context.Context, p *actors.CreateNotifyChannel, raw string) error {
	if err := s.notifyEgress.Check(c, raw); err != nil {
		return urlRefusal(err)
	}
	target, err := egress.ParseTarget(raw)
	if err != nil {
		return urlRefusal(err)
	}
	// The form sent is stored: the host in ASCII, no fragment.
	sealed, err := s.notifyKey.Seal(p.ChannelID, target.URL().String())
	if err != nil {
		return err
	}
	p.Target, p.Display, p.KeyFingerprint = sealed, target.String(), s.notifyKey.Fingerprint()
	if p.ChannelKind == actors.ChannelWebhook {
		p.Nonce = newNonce()
	}
	return nil
}

// urlRefusal is a 422 that says why a URL is refused (its class's words:
// "the host resolves to a loopback address, ..."), never quoting it.
func urlRefusal(err error) error {
	var e *egress.Error
	if errors.As(err, &e) {
		return actors.Errorf(actors.CodeValidation, "url: %s", e.Detail)
	}
	return actors.Errorf(actors.CodeValidation, "url is not one this server sends to")
}

// newNonce draws a webhook's nonce: 128 random bits.
func newNonce() string { return randomString(16) }

// rotateNotifySecret gives a webhook a new nonce, and shows the secret it
// makes; the old one signs nothing more.
func (s *Server) rotateNotifySecret(r *request) error {
	if s.notifyKey == nil {
		if err := s.bearer(r); err != nil {
			return err
		}
		return errNotifyUnset
	}
	id, nonce := pathParam(r.ctx, "channel_id"), newNonce()
	return s.write(r, writeSpec{
		payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			var req rotateSecretRequest
			if len(ctx.PostBody()) > 0 {
				if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
					return nil, err
				}
			}
			if longest := int64(actors.NotifySecretGraceMax / time.Second); req.GraceSeconds < 0 || req.GraceSeconds > longest {
				return nil, actors.Errorf(actors.CodeValidation, "grace_seconds must be from 0 (the old secret stops now) to %d (a day)", longest)
			}
			return rotation(id, nonce, req.GraceSeconds), nil
		},
		decorate: func(res actors.Result) actors.Result {
			return actors.Result{Status: fasthttp.StatusOK, Body: s.rotatedView(res, id, nonce)}
		},
	})
}

// rotateNotifySecretAs is the site's rotation, as r's owner: the same
// command, and the secret to show once.
func (s *Server) rotateNotifySecretAs(c context.Context, r *request, id string, grace int64) (notifySecretView, error) {
	if s.notifyKey == nil {
		return notifySecretView{}, errNotifyUnset
	}
	who, err := s.authorize(c, r)
	if err != nil {
		return notifySecretView{}, err
	}
	nonce := newNonce()
	cmd := &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal, Payload: rotation(id, nonce, grace)}
	res, err := s.propose(c, cmd)
	if err != nil {
		return notifySecretView{}, err
	}
	return s.rotatedView(res, id, nonce), nil
}

func putRule(scope actors.RuleScope, param string) func(*Server, *request) error {
	return func(s *Server, r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			var req ruleRequest
			if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
				return nil, err
			}
			p := &actors.PutNotifyRule{Scope: scope, NotifyRuleFields: req.fields()}
			if param != "" {
				p.ID = pathParam(ctx, param)
			}
			return p, nil
		}})
	}
}

// fields fills in a rule's defaults.
func (req ruleRequest) fields() actors.NotifyRuleFields {
	f := actors.NotifyRuleFields{Events: actors.ChainEventKinds, Depth: actors.TxDeepConfirmations, Channels: []string{}}
	if req.Events != nil {
		f.Events = make([]actors.ChainEventKind, len(*req.Events))
		for i, k := range *req.Events {
			f.Events[i] = actors.ChainEventKind(k)
		}
	}
	if req.MinAmountSat != nil {
		f.MinAmountSat = *req.MinAmountSat
	}
	if req.Depth != nil {
		f.Depth = *req.Depth
	}
	if req.Channels != nil {
		f.Channels = *req.Channels
	}
	return f
}

func deleteRule(scope actors.RuleScope, param string) func(*Server, *request) error {
	return func(s *Server, r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			p := &actors.DeleteNotifyRule{Scope: scope}
			if param != "" {
				p.ID = pathParam(ctx, param)
			}
			return p, nil
		}})
	}
}

// deliveryLogQuery reads the delivery log's parameters; any other is
// refused, so a misspelt filter is never silently ignored.
func deliveryLogQuery(ctx *fasthttp.RequestCtx) (actors.DeliveryLogQuery, error) {
	if err := onlyParams(ctx, "channel", "before", "limit"); err != nil {
		return actors.DeliveryLogQuery{}, err
	}
	q := actors.DeliveryLogQuery{ChannelID: strings.TrimSpace(string(ctx.QueryArgs().Peek("channel")))}
	before, err := queryIntDefault(ctx, "before", 0, 1, 1<<62)
	if err != nil {
		return q, err
	}
	q.Before = uint64(before)
	if q.Limit, err = queryIntDefault(ctx, "limit", actors.DeliveryLogLimitDefault, 1, actors.DeliveryLogLimitMax); err != nil {
		return q, err
	}
	return q, nil
}

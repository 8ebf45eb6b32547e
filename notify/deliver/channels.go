package deliver

import (
	"context"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/send"
)

// ClassNoRelay is the class of a try of an email channel on a node
// without an SMTP relay (--smtp-relay): nothing can be sent until the
// operator sets one.
const ClassNoRelay = "no_relay"

// ClassUnknownKind is the class of a try of a channel whose kind this
// node does not know (made by a newer one).
const ClassUnknownKind = "unknown_kind"

// testCardName is the card's name in a "send a test" message.
const testCardName = "Test card"

// Channels picks the sender of a channel by its kind.
type Channels struct {
	Webhook *send.Webhook
	Ntfy    *send.Ntfy
	// Email is nil on a node without an SMTP relay.
	Email *send.Email
}

// Send makes one try of d.
func (c *Channels) Send(ctx context.Context, account string, d actors.DueDelivery) send.Outcome {
	return c.send(ctx, d.Channel, send.Delivery{Account: account, ChannelID: d.Channel.ID, Attempt: d.Attempt,
		Event: d.Event, CardName: d.CardName})
}

// Test sends ch a sample event now ("send a test"): counted against the
// same budgets as every try, but not in the outbox nor in the delivery
// log. at is the sample's time, which makes its event ID.
func (c *Channels) Test(ctx context.Context, account string, ch actors.NotifyChannelTarget, at time.Time) send.Outcome {
	return c.send(ctx, ch, send.Delivery{Account: account, ChannelID: ch.ID, Attempt: 1,
		Event: send.SampleEvent(at), CardName: testCardName, Test: true})
}

// Room is what the budgets allow account's channel ch now: how many tries
// it may start, and when it has room for more (send.Room).
func (c *Channels) Room(account string, ch actors.NotifyChannelTarget) send.Room {
	switch ch.Kind {
	case actors.ChannelWebhook:
		return c.Webhook.Room(account, ch.ID)
	case actors.ChannelNtfy:
		return c.Ntfy.Room(account, ch.ID)
	case actors.ChannelEmail:
		if c.Email != nil {
			return c.Email.Room(account, ch.ID)
		}
	}
	// Refused before it could spend anything.
	return send.Unbounded()
}

// SendsEmail reports whether this node has an SMTP relay.
func (c *Channels) SendsEmail() bool { return c.Email != nil }

func (c *Channels) send(ctx context.Context, ch actors.NotifyChannelTarget, d send.Delivery) send.Outcome {
	switch ch.Kind {
	case actors.ChannelWebhook:
		// PreviousNonce is set while a rotation's grace lasts (the
		// query's time): the try is signed under both secrets.
		return c.Webhook.Send(ctx, send.WebhookChannel{SealedURL: ch.Target, Nonce: ch.Nonce, PreviousNonce: ch.PreviousNonce,
			KeyFingerprint: ch.KeyFingerprint}, d)
	case actors.ChannelNtfy:
		return c.Ntfy.Send(ctx, send.NtfyChannel{SealedURL: ch.Target, KeyFingerprint: ch.KeyFingerprint}, d)
	case actors.ChannelEmail:
		if c.Email == nil {
			return send.Outcome{Class: ClassNoRelay,
				Detail: "this server has no SMTP relay (--smtp-relay), so it cannot send email; the operator must set one"}
		}
		return c.Email.Send(ctx, ch.Target, d)
	}
	return send.Outcome{Class: ClassUnknownKind, Detail: "this node does not know this kind of channel"}
}

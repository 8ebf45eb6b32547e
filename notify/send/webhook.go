package send

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/keys"
)

// The webhook's headers besides the signature: a receiver can drop a
// redelivery by the event ID before it reads the body.
const (
	EventIDHeader         = "Addrwatch-Event-Id"
	EventTypeHeader       = "Addrwatch-Event-Type"
	DeliveryAttemptHeader = "Addrwatch-Delivery-Attempt"
)

// Webhook sends signed JSON to owners' URLs.
type Webhook struct {
	HTTP *egress.Client
	Key  *keys.Key
	// Now is the clock of the signature's timestamp and of Retry-After
	// dates; time.Now when nil.
	Now func() time.Time
}

// WebhookChannel is a webhook channel as the replicated state holds it.
type WebhookChannel struct {
	// SealedURL is the owner's URL sealed under the notify key for this
	// channel (keys.Seal).
	SealedURL string
	// Nonce makes the channel's secret: keys.WebhookSecret(channel, Nonce).
	Nonce string
	// PreviousNonce, while a rotation's grace period lasts, is the nonce
	// of the secret before it: each try is signed under both, so a
	// receiver not yet given the new secret still verifies. Empty
	// otherwise.
	PreviousNonce string
	// KeyFingerprint is the fingerprint of the key the channel was made
	// under.
	KeyFingerprint string
}

// WebhookPayload is the JSON body of a webhook, field for field. It is a
// function of the event alone (and Test), so every try of one event
// sends the same bytes; the card's name is left out for that reason: a
// rename between two tries would change them.
type WebhookPayload struct {
	ID            string `json:"id"`
	Type          string `json:"type"`
	CreatedAt     string `json:"created_at"`
	CardID        string `json:"card_id"`
	SpaceID       string `json:"space_id,omitempty"`
	Address       string `json:"address"`
	TxID          string `json:"txid"`
	AmountSat     int64  `json:"amount_sat"`
	Height        int64  `json:"height"`
	BlockHash     string `json:"block_hash"`
	Confirmations int64  `json:"confirmations"`
	ReplacedBy    string `json:"replaced_by,omitempty"`
	Test          bool   `json:"test"`
}

// WebhookBody is the body a webhook sends for d.
func WebhookBody(d Delivery) []byte {
	e := d.Event
	body, err := json.Marshal(WebhookPayload{
		ID: e.ID(), Type: string(e.Kind), CreatedAt: eventTime(e).Format(time.RFC3339Nano),
		CardID: e.CardID, SpaceID: e.SpaceID, Address: e.Address, TxID: e.TxID,
		AmountSat: e.AmountSat, Height: e.Height, BlockHash: e.BlockHash,
		Confirmations: e.Confirmations, ReplacedBy: e.ReplacedBy, Test: d.Test,
	})
	if err != nil {
		// Strings, integers and a bool: Marshal cannot fail on them.
		panic("send: a webhook payload did not encode: " + err.Error())
	}
	return body
}

// Send makes one try of d to ch. Nothing is sent for a channel made
// under another key: signing with this node's key would give a
// signature the receiver cannot verify, and its URL does not open here.
func (w *Webhook) Send(ctx context.Context, ch WebhookChannel, d Delivery) Outcome {
	url, refused, ok := openURL(w.Key, ch.KeyFingerprint, d.ChannelID, ch.SealedURL)
	if !ok {
		return refused
	}
	now := w.now()
	body := WebhookBody(d)
	secrets := []string{w.Key.WebhookSecret(d.ChannelID, ch.Nonce)}
	if ch.PreviousNonce != "" {
		secrets = append(secrets, w.Key.WebhookSecret(d.ChannelID, ch.PreviousNonce))
	}
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set(EventIDHeader, d.Event.ID())
	header.Set(EventTypeHeader, string(d.Event.Kind))
	header.Set(DeliveryAttemptHeader, strconv.Itoa(d.Attempt))
	header.Set(SignatureHeader, Sign(now, body, secrets...))
	answer, err := w.HTTP.Post(ctx, egress.Request{URL: url, Account: d.Account, Endpoint: d.ChannelID, Header: header, Body: body})
	return httpOutcome(answer, err, w.now().Sub(now), w.now())
}

func (w *Webhook) now() time.Time { return nowOf(w.Now) }

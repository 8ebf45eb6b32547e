package send

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
)

const (
	channelID = "ch_webhook_1"
	nonce     = "nonce-1"
	// pathToken stands for the secret part of an owner's URL: it must
	// never reach an Outcome.
	pathToken = "/hooks/T0KEN-in-the-path"
)

// webhookFixture is a receiver, a sender trusting it and a channel
// pointing at it.
type webhookFixture struct {
	rc    *receiver
	clk   *clock
	hook  *Webhook
	ch    WebhookChannel
	event actors.ChainEvent
}

func newWebhookFixture(t *testing.T, answer func(w http.ResponseWriter, r *http.Request), cfg egress.Config) *webhookFixture {
	t.Helper()
	rc := newReceiver(t, answer)
	key := newKey(t)
	clk := &clock{t: time.Unix(1_772_368_245, 0)}
	return &webhookFixture{
		rc:    rc,
		clk:   clk,
		hook:  &Webhook{HTTP: rc.client(t, cfg), Key: key, Now: clk.now},
		ch:    WebhookChannel{SealedURL: seal(t, key, channelID, rc.url(pathToken+"?auth=Q")), Nonce: nonce, KeyFingerprint: key.Fingerprint()},
		event: confirmedEvent(),
	}
}

func (f *webhookFixture) send(t *testing.T, attempt int) Outcome {
	t.Helper()
	return f.hook.Send(context.Background(), f.ch, Delivery{Account: "acct_1", ChannelID: channelID, Attempt: attempt, Event: f.event, CardName: hostileName})
}

// TestWebhookReceiverVerifiesEachTry: the receiver checks the signature
// with Verify and the channel's secret as the owner was shown it; a
// redelivery a minute later carries the same bytes, a new timestamp and
// the next attempt number.
func TestWebhookReceiverVerifiesEachTry(t *testing.T) {
	var f *webhookFixture
	f = newWebhookFixture(t, func(w http.ResponseWriter, r *http.Request) {
		// The receiver has read the body already: the last one it kept.
		got := f.rc.requests()
		secret := f.hook.Key.WebhookSecret(channelID, nonce)
		if err := Verify(secret, r.Header.Get(SignatureHeader), got[len(got)-1].body, f.clk.now(), 0); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}, egress.Config{})

	first := f.send(t, 1)
	f.clk.set(f.clk.now().Add(time.Minute))
	second := f.send(t, 2)
	for i, out := range []Outcome{first, second} {
		if !out.Delivered || out.Status != http.StatusOK || out.Class != "" {
			t.Fatalf("try %d: %+v, want delivered with 200", i+1, out)
		}
	}
	got := f.rc.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if !bytes.Equal(got[0].body, got[1].body) {
		t.Fatalf("a redelivery changed the body:\n%s\n%s", got[0].body, got[1].body)
	}
	if got[0].header.Get(SignatureHeader) == got[1].header.Get(SignatureHeader) {
		t.Fatal("the redelivery's signature has the first try's timestamp")
	}
	want := `{"id":"` + f.event.ID() + `","type":"tx_confirmed","created_at":"2026-03-01T12:30:45.0000005Z",` +
		`"card_id":"card_9","space_id":"space_2","address":"bcrt1qexampleaddress",` +
		`"txid":"ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12","amount_sat":150000,` +
		`"height":812,"block_hash":"00ff00ff","confirmations":1,"test":false}`
	if string(got[0].body) != want {
		t.Fatalf("body\n%s\nwant\n%s", got[0].body, want)
	}
	for i, r := range got {
		h := r.header
		if h.Get("Content-Type") != "application/json" || h.Get(EventIDHeader) != f.event.ID() ||
			h.Get(EventTypeHeader) != "tx_confirmed" || h.Get(DeliveryAttemptHeader) != []string{"1", "2"}[i] {
			t.Fatalf("try %d headers: %v", i+1, h)
		}
		if r.path != pathToken {
			t.Fatalf("try %d went to %q", i+1, r.path)
		}
	}
}

// TestWebhookWrongSecretIsRefused: a receiver holding another secret
// (another nonce's) refuses the request, so the sender's key really is
// what the receiver trusts.
func TestWebhookWrongSecretIsRefused(t *testing.T) {
	var f *webhookFixture
	f = newWebhookFixture(t, func(w http.ResponseWriter, r *http.Request) {
		wrong := f.hook.Key.WebhookSecret(channelID, "another-nonce")
		if err := Verify(wrong, r.Header.Get(SignatureHeader), f.rc.requests()[0].body, f.clk.now(), 0); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}, egress.Config{})
	if out := f.send(t, 1); out.Delivered || out.Status != http.StatusUnauthorized || out.Class != ClassAnswer {
		t.Fatalf("%+v, want a 401 answer", out)
	}
}

// TestWebhookRotationSignsWithBothSecrets: during a rotation's grace
// period a receiver holding either secret verifies.
func TestWebhookRotationSignsWithBothSecrets(t *testing.T) {
	f := newWebhookFixture(t, nil, egress.Config{})
	f.ch.PreviousNonce = "nonce-0"
	if out := f.send(t, 1); !out.Delivered {
		t.Fatalf("%+v", out)
	}
	r := f.rc.requests()[0]
	for _, n := range []string{nonce, "nonce-0"} {
		if err := Verify(f.hook.Key.WebhookSecret(channelID, n), r.header.Get(SignatureHeader), r.body, f.clk.now(), 0); err != nil {
			t.Fatalf("the secret of %s does not verify: %v", n, err)
		}
	}
	if n := strings.Count(r.header.Get(SignatureHeader), "v1="); n != 2 {
		t.Fatalf("%d signatures, want 2", n)
	}
}

// TestWebhookTestDelivery: a test is marked in the body; its sample has
// no Space, so space_id is left out.
func TestWebhookTestDelivery(t *testing.T) {
	f := newWebhookFixture(t, nil, egress.Config{})
	f.event = SampleEvent(f.clk.now())
	out := f.hook.Send(context.Background(), f.ch, Delivery{Account: "a", ChannelID: channelID, Attempt: 1, Event: f.event, Test: true})
	if !out.Delivered {
		t.Fatalf("%+v", out)
	}
	body := string(f.rc.requests()[0].body)
	if !strings.HasSuffix(body, `"test":true}`) || strings.Contains(body, "space_id") || strings.Contains(body, "replaced_by") {
		t.Fatalf("test body %s", body)
	}
	if SampleEvent(f.clk.now().Add(time.Second)).ID() == f.event.ID() {
		t.Fatal("two presses of the test button a second apart have one event ID")
	}
}

// TestWebhookNon2xxIsNotDelivered: an error status, a missing page and a
// redirect (to loopback, where the client could reach) are answers, not
// deliveries, and the redirect is not followed.
func TestWebhookNon2xxIsNotDelivered(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, http.StatusNotFound, http.StatusFound} {
		f := newWebhookFixture(t, func(w http.ResponseWriter, r *http.Request) {
			if status == http.StatusFound {
				http.Redirect(w, r, "/elsewhere", status)
				return
			}
			http.Error(w, "Cannot POST "+r.URL.Path, status)
		}, egress.Config{})
		out := f.send(t, 1)
		if out.Delivered || out.Status != status || out.Class != ClassAnswer || out.RetryAfter != 0 {
			t.Errorf("%d: %+v, want not delivered, class %s", status, out, ClassAnswer)
		}
		if strings.Contains(out.Detail, "T0KEN") || strings.Contains(out.Detail, "auth=") {
			t.Errorf("%d: the detail shows the URL's path or query: %q", status, out.Detail)
		}
		if n := len(f.rc.requests()); n != 1 {
			t.Errorf("%d: the receiver got %d requests, want 1 (no redirect followed)", status, n)
		}
	}
}

// TestWebhookRetryAfter: a 429 or 503's Retry-After, in seconds or as a
// date, becomes RetryAfter, bounded to a day; another status's is not
// read.
func TestWebhookRetryAfter(t *testing.T) {
	now := time.Unix(1_772_368_245, 0)
	cases := []struct {
		status int
		value  string
		want   time.Duration
	}{
		{http.StatusTooManyRequests, "120", 2 * time.Minute},
		{http.StatusServiceUnavailable, now.Add(90 * time.Second).UTC().Format(http.TimeFormat), 90 * time.Second},
		{http.StatusTooManyRequests, "99999999999999999999999", retryAfterMax},
		{http.StatusTooManyRequests, now.Add(-time.Hour).UTC().Format(http.TimeFormat), 0},
		{http.StatusTooManyRequests, "soon", 0},
		{http.StatusInternalServerError, "120", 0},
	}
	for _, tc := range cases {
		f := newWebhookFixture(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", tc.value)
			w.WriteHeader(tc.status)
		}, egress.Config{})
		f.clk.set(now)
		out := f.send(t, 1)
		if out.Delivered || out.Status != tc.status || out.RetryAfter != tc.want {
			t.Errorf("%d Retry-After %q: %+v, want RetryAfter %s", tc.status, tc.value, out, tc.want)
		}
	}
}

// TestWebhookSilentReceiverTimesOut: a receiver that never answers costs
// the total timeout and gives the timeout class.
func TestWebhookSilentReceiverTimesOut(t *testing.T) {
	release := make(chan struct{})
	f := newWebhookFixture(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}, egress.Config{TotalTimeout: 300 * time.Millisecond})
	defer close(release)
	start := time.Now()
	out := f.send(t, 1)
	if out.Delivered || out.Class != ClassTimeout || out.Status != 0 {
		t.Fatalf("%+v, want class %s", out, ClassTimeout)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a 300 ms timeout took %s", took)
	}
	if strings.Contains(out.Detail, "T0KEN") {
		t.Fatalf("the detail shows the URL's path: %q", out.Detail)
	}
}

// TestWebhookKeyMismatchSendsNothing: a channel made under another key,
// or whose sealed URL does not open, is refused before any request.
func TestWebhookKeyMismatchSendsNothing(t *testing.T) {
	f := newWebhookFixture(t, nil, egress.Config{})
	other := newKey(t)
	made := f.ch
	f.ch = WebhookChannel{SealedURL: seal(t, other, channelID, f.rc.url("/")), Nonce: nonce, KeyFingerprint: other.Fingerprint()}
	if out := f.send(t, 1); out.Delivered || out.Class != ClassKeyMismatch || out.Detail == "" {
		t.Fatalf("another key: %+v, want %s", out, ClassKeyMismatch)
	}
	f.ch = made
	f.ch.SealedURL = seal(t, f.hook.Key, "ch_another", f.rc.url("/"))
	if out := f.send(t, 1); out.Delivered || out.Class != ClassSealedURL {
		t.Fatalf("a URL sealed for another channel: %+v, want %s", out, ClassSealedURL)
	}
	if n := len(f.rc.requests()); n != 0 {
		t.Fatalf("the receiver got %d requests, want none", n)
	}
}

// TestWebhookRateLimited: egress's budgets apply per channel, and the
// wait comes back as RetryAfter.
func TestWebhookRateLimited(t *testing.T) {
	f := newWebhookFixture(t, nil, egress.Config{EndpointRate: egress.Rate{PerSecond: 0.5, Burst: 1}})
	if out := f.send(t, 1); !out.Delivered {
		t.Fatalf("first: %+v", out)
	}
	out := f.send(t, 1)
	if out.Delivered || out.Class != ClassRateLimited || out.RetryAfter <= 0 || out.RetryAfter > 2*time.Second {
		t.Fatalf("second: %+v, want %s with a RetryAfter up to 2s", out, ClassRateLimited)
	}
	if n := len(f.rc.requests()); n != 1 {
		t.Fatalf("the receiver got %d requests, want 1", n)
	}
}

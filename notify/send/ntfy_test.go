package send

import (
	"context"
	"mime"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
)

const ntfyChannelID = "ch_ntfy_1"

// ntfySend sends event named name to a fresh receiver and returns the
// outcome and the one request it got.
func ntfySend(t *testing.T, event actors.ChainEvent, name string, test bool) (Outcome, received) {
	t.Helper()
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"id":"x"}`)) })
	key := newKey(t)
	n := &Ntfy{HTTP: rc.client(t, egress.Config{}), Key: key}
	ch := NtfyChannel{SealedURL: seal(t, key, ntfyChannelID, rc.url("/mytopic-secret")), KeyFingerprint: key.Fingerprint()}
	out := n.Send(context.Background(), ch, Delivery{Account: "a", ChannelID: ntfyChannelID, Attempt: 1, Event: event, CardName: name, Test: test})
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want 1 (%+v)", len(got), out)
	}
	return out, got[0]
}

// TestNtfyMessage: the documented headers and body.
func TestNtfyMessage(t *testing.T) {
	out, r := ntfySend(t, confirmedEvent(), "Savings", false)
	if !out.Delivered || out.Status != http.StatusOK {
		t.Fatalf("%+v", out)
	}
	want := map[string]string{
		"Title":        "addrwatch: +0.00150000 BTC confirmed on Savings",
		"Tags":         "white_check_mark,tx_confirmed",
		"Priority":     "default",
		"Content-Type": "text/plain; charset=utf-8",
	}
	for name, value := range want {
		if got := r.header.Get(name); got != value {
			t.Errorf("%s: %q, want %q", name, got, value)
		}
	}
	wantBody := "+0.00150000 BTC confirmed in block 812 on Savings\n" +
		"txid ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12\n" +
		"address bcrt1qexampleaddress\n" +
		"block 812 00ff00ff\n"
	if string(r.body) != wantBody {
		t.Fatalf("body\n%q\nwant\n%q", r.body, wantBody)
	}
	if r.path != "/mytopic-secret" {
		t.Fatalf("posted to %q", r.path)
	}
}

// TestNtfyUrgentKindsAndTests: a reorg or a replacement undoes an earlier
// notification, so it comes at high priority; a test says so in its
// title, its tags and its first line.
func TestNtfyUrgentKindsAndTests(t *testing.T) {
	reorged := confirmedEvent()
	reorged.Kind, reorged.AmountSat = actors.ChainTxReorged, -2500
	_, r := ntfySend(t, reorged, "Cold", false)
	if r.header.Get("Priority") != "high" || r.header.Get("Title") != "addrwatch: -0.00002500 BTC reorged out on Cold" {
		t.Fatalf("reorged: %v", r.header)
	}
	replaced := confirmedEvent()
	replaced.Kind, replaced.ReplacedBy = actors.ChainTxReplaced, "beef"
	_, r = ntfySend(t, replaced, "Cold", false)
	if r.header.Get("Priority") != "high" || !strings.Contains(string(r.body), "replaced in the mempool by beef") {
		t.Fatalf("replaced: %v %q", r.header, r.body)
	}
	_, r = ntfySend(t, SampleEvent(signedAt), "", true)
	if r.header.Get("Title") != "addrwatch test: +0.00100000 BTC seen on "+sampleAddress ||
		r.header.Get("Tags") != "eyes,tx_seen,test" || r.header.Get("Priority") != "default" {
		t.Fatalf("test: %v", r.header)
	}
	if !strings.HasPrefix(string(r.body), "This is a test from addrwatch") {
		t.Fatalf("test body %q", r.body)
	}
}

// TestNtfyHostileCardNameAddsNoHeader: a name of line breaks, a header
// of its own, markup, an encoded-word and non-ASCII reaches the receiver
// as one encoded Title and nothing else; decoded, it is one line.
func TestNtfyHostileCardNameAddsNoHeader(t *testing.T) {
	out, r := ntfySend(t, confirmedEvent(), hostileName, false)
	if !out.Delivered {
		t.Fatalf("%+v", out)
	}
	var names []string
	for name := range r.header {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"Content-Length", "Content-Type", "Priority", "Tags", "Title", "User-Agent"}
	if !slices.Equal(names, want) {
		t.Fatalf("the receiver got headers %v, want %v", names, want)
	}
	raw := r.header.Get("Title")
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x20 || raw[i] > 0x7e {
			t.Fatalf("the Title holds byte %#x: %q", raw[i], raw)
		}
	}
	decoded, err := new(mime.WordDecoder).DecodeHeader(raw)
	if err != nil {
		t.Fatalf("the Title %q does not decode: %v", raw, err)
	}
	if strings.ContainsAny(decoded, "\r\n\x00\u202e") || !strings.Contains(decoded, "Évil X-Injected: yes <script>") ||
		!strings.Contains(decoded, "= ?utf-8?q?=0D=0A") {
		t.Fatalf("the Title decodes to %q", decoded)
	}
	if strings.ContainsAny(string(r.body), "\r\x00\u202e") || strings.Count(string(r.body), "\n") != 4 {
		t.Fatalf("the body has more lines or controls than its own: %q", r.body)
	}
}

// TestNtfyKeyMismatchSendsNothing: a topic URL sealed under another key
// is not opened, nor tried.
func TestNtfyKeyMismatchSendsNothing(t *testing.T) {
	rc := newReceiver(t, nil)
	key, other := newKey(t), newKey(t)
	n := &Ntfy{HTTP: rc.client(t, egress.Config{}), Key: key}
	d := Delivery{Account: "a", ChannelID: ntfyChannelID, Attempt: 1, Event: confirmedEvent()}
	ch := NtfyChannel{SealedURL: seal(t, other, ntfyChannelID, rc.url("/topic")), KeyFingerprint: other.Fingerprint()}
	if out := n.Send(context.Background(), ch, d); out.Delivered || out.Class != ClassKeyMismatch {
		t.Fatalf("another key: %+v, want %s", out, ClassKeyMismatch)
	}
	ch = NtfyChannel{SealedURL: "s1.not-sealed", KeyFingerprint: key.Fingerprint()}
	if out := n.Send(context.Background(), ch, d); out.Delivered || out.Class != ClassSealedURL {
		t.Fatalf("an altered URL: %+v, want %s", out, ClassSealedURL)
	}
	if got := rc.requests(); len(got) != 0 {
		t.Fatalf("the receiver got %d requests", len(got))
	}
}

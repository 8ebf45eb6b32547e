//go:build unix

package system_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/addrwatch/addrwatch/notify/send"
	"github.com/addrwatch/addrwatch/notify/send/smtptest"
)

// Notifications delivered by the real server (the chain follower on a
// btcd regtest chain, the outbox in the raft log, the deliverer) over
// loopback to receivers started here: signed webhooks in order, a
// redelivery after a 500 with the same event ID, "send again", ntfy,
// email through an SMTP server with STARTTLS and AUTH, and "send a test".

// hookRequest is one request a receiver got.
type hookRequest struct {
	header http.Header
	body   []byte
	event  send.WebhookPayload
}

// receiver is an HTTP receiver that keeps every request; answer, when
// set, picks the status of each (given the requests so far, this one
// last).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []hookRequest
	answer func(got []hookRequest) int
}

func newReceiver(t *testing.T, answer func([]hookRequest) int) *receiver {
	return newSlowReceiver(t, 0, answer)
}

// newSlowReceiver is newReceiver answering each request delay after it
// came (it is kept at once): a slow receiver, whose requests overlap.
func newSlowReceiver(t *testing.T, delay time.Duration, answer func([]hookRequest) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := hookRequest{header: r.Header.Clone(), body: body}
		json.Unmarshal(body, &req.event)
		rc.mu.Lock()
		rc.got = append(rc.got, req)
		status := http.StatusOK
		if rc.answer != nil {
			status = rc.answer(rc.got)
		}
		rc.mu.Unlock()
		time.Sleep(delay)
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// waitRequests waits until the receiver holds a request that done says
// ends the wait, and returns them all.
func (rc *receiver) waitRequests(t *testing.T, s *server, what string, timeout time.Duration, done func([]hookRequest) bool) []hookRequest {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := rc.requests()
		if done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the receiver got %d requests: %s\nthe node said:\n%s", what, len(got), describe(got), s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describe(got []hookRequest) string {
	var lines []string
	for _, r := range got {
		lines = append(lines, r.event.Type+" "+r.event.ID+" attempt "+r.header.Get(send.DeliveryAttemptHeader)+" "+r.header.Get("Title"))
	}
	return strings.Join(lines, "; ")
}

// ofTx are the requests about txid, as "type attempt".
func ofTx(got []hookRequest, txid string) []string {
	var out []string
	for _, r := range got {
		if r.event.TxID == txid {
			out = append(out, r.event.Type+" "+r.header.Get(send.DeliveryAttemptHeader))
		}
	}
	return out
}

func TestNotificationsDeliveredFromARegtestChain(t *testing.T) {
	t.Parallel()
	node := regtest.Own(t) // it mines: a chain no other test sees
	rpc := node.RPC()
	dir := t.TempDir()
	rpcCert := filepath.Join(dir, "rpc.cert")
	if err := os.WriteFile(rpcCert, rpc.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	relay := smtptest.New(t, true)
	relayCert := filepath.Join(dir, "relay.pem")
	passwordFile := filepath.Join(dir, "smtp-password")
	if err := os.WriteFile(relayCert, relay.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passwordFile, []byte(smtptest.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The relay's certificate is trusted as a system root (Go reads
	// SSL_CERT_FILE on Unix): the server has no flag of its own for it.
	s := &server{t: t, Dir: t.TempDir(), AdminToken: "notify-delivery-token", env: []string{"SSL_CERT_FILE=" + relayCert}}
	s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
	s.start("--network", "regtest", "--chain", "btcd:"+rpc.URL().String(), "--chain-cert", rpcCert, "--chain-poll", "200ms",
		"--notify-allow-private", "--smtp-relay", relay.Addr, "--smtp-from", "addrwatch <alerts@notify.example>",
		"--smtp-user", smtptest.User, "--smtp-password-file", passwordFile)
	t.Cleanup(s.stop)

	a := s.createAccount(t, "extended")
	payee, err := node.NewKey(regtest.P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	cardID := apOwnerCreateCard(t, s, a, payee.Address, "Savings <b>")["id"].(string)

	good := newReceiver(t, nil)
	// flaky answers 500 to its very first request, then 200.
	flaky := newReceiver(t, func(got []hookRequest) int {
		if len(got) == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	topic := newReceiver(t, nil)
	channel := func(body map[string]any) (id, secret string) {
		r := do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, body)
		expect(t, r, http.StatusCreated, "")
		v := r.JSON(t)
		secret, _ = v["secret"].(string)
		return owString(t, owObject(t, v, "channel"), "id"), secret
	}
	goodID, goodSecret := channel(map[string]any{"kind": "webhook", "name": "good", "url": good.URL + "/hook?token=t0k"})
	flakyID, flakySecret := channel(map[string]any{"kind": "webhook", "name": "flaky", "url": flaky.URL + "/hook"})
	topicID, _ := channel(map[string]any{"kind": "ntfy", "name": "phone", "url": topic.URL + "/addrwatch-topic"})
	mailID, _ := channel(map[string]any{"kind": "email", "name": "me", "address": "owner@example.com"})

	// "Send a test": delivered now, not in the outbox nor in the log.
	r := do(t, "POST", ntURL(s, "/channels/"+goodID+"/test"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); v["delivered"] != true || v["status"] != float64(200) || v["class"] != "" {
		t.Errorf("a test to the good webhook: %s", r.Body)
	}
	tests := good.requests()
	if len(tests) != 1 || !tests[0].event.Test || tests[0].event.Type != "tx_seen" {
		t.Fatalf("the test message: %s", describe(tests))
	}
	if err := send.Verify(goodSecret, tests[0].header.Get(send.SignatureHeader), tests[0].body, time.Now(), 0); err != nil {
		t.Errorf("the test message's signature: %v", err)
	}
	// A rotation with a grace: a try is signed under the old and the new
	// secret, and either verifies; one without a grace ends the old one.
	rotate := func(body any) string {
		r := do(t, "POST", ntURL(s, "/channels/"+goodID+"/secret"), a.OwnerSecret, body)
		expect(t, r, http.StatusOK, "")
		return r.JSON(t)["secret"].(string)
	}
	testSignedBy := func(what string, secrets map[string]bool) {
		t.Helper()
		before := len(good.requests())
		expect(t, do(t, "POST", ntURL(s, "/channels/"+goodID+"/test"), a.OwnerSecret, nil), http.StatusOK, "")
		got := good.requests()
		if len(got) != before+1 {
			t.Fatalf("%s: the test message did not arrive: %s", what, describe(got))
		}
		for secret, verifies := range secrets {
			if err := send.Verify(secret, got[before].header.Get(send.SignatureHeader), got[before].body, time.Now(), 0); (err == nil) != verifies {
				t.Errorf("%s: a secret verifies %v, want %v (%v)", what, err == nil, verifies, err)
			}
		}
	}
	graced := rotate(map[string]any{"grace_seconds": 600})
	testSignedBy("within the grace", map[string]bool{goodSecret: true, graced: true})
	newest := rotate(nil)
	testSignedBy("after a rotation without a grace", map[string]bool{goodSecret: false, graced: false, newest: true})
	goodSecret = newest

	r = do(t, "POST", ntURL(s, "/channels/"+mailID+"/test"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); v["delivered"] != true || v["status"] != float64(250) {
		t.Errorf("a test to the email channel: %s", r.Body)
	}
	expect(t, do(t, "POST", ntURL(s, "/channels/nc_nope/test"), a.OwnerSecret, nil), http.StatusNotFound, "NOT_FOUND")
	expect(t, do(t, "POST", ntURL(s, "/channels/"+goodID+"/test"), s.createKey(t, a, "write"), nil), http.StatusUnauthorized, "UNAUTHORIZED")

	// A payment, then its block.
	paid := time.Now()
	txid, err := node.Pay(payee.Address, 70_000)
	if err != nil {
		t.Fatal(err)
	}
	good.waitRequests(t, s, "tx_seen at the good webhook", 30*time.Second, func(got []hookRequest) bool { return len(ofTx(got, txid)) >= 1 })
	seenAfter := time.Since(paid)
	mined := time.Now()
	if _, err := node.Mine(1); err != nil {
		t.Fatal(err)
	}
	got := good.waitRequests(t, s, "tx_confirmed at the good webhook", 30*time.Second, func(got []hookRequest) bool { return len(ofTx(got, txid)) >= 2 })
	// For the reader, not asserted: timings are the bench's.
	t.Logf("payment to tx_seen received: %s; block to tx_confirmed received: %s", seenAfter.Round(time.Millisecond), time.Since(mined).Round(time.Millisecond))
	if seq := ofTx(got, txid); !slices.Equal(seq[:2], []string{"tx_seen 1", "tx_confirmed 1"}) {
		t.Errorf("the good webhook got %v, want tx_seen then tx_confirmed, each once", seq)
	}
	var seenID string
	for _, req := range got {
		if req.event.TxID != txid {
			continue
		}
		if err := send.Verify(goodSecret, req.header.Get(send.SignatureHeader), req.body, time.Now(), 0); err != nil {
			t.Errorf("%s: signature: %v", req.event.Type, err)
		}
		if err := send.Verify(flakySecret, req.header.Get(send.SignatureHeader), req.body, time.Now(), 0); err == nil {
			t.Errorf("%s verifies under another channel's secret", req.event.Type)
		}
		if req.header.Get(send.EventIDHeader) != req.event.ID || req.event.CardID != cardID || req.event.AmountSat != 70_000 || req.event.Test {
			t.Errorf("%s: %s %s", req.event.Type, req.header, req.body)
		}
		if req.event.Type == "tx_seen" {
			seenID = req.event.ID
		}
	}

	// The flaky receiver: tx_seen answered 500, tried again 30 s later
	// (the first back-off) with the same event ID as attempt 2; only
	// then tx_confirmed, which waited for it.
	got = flaky.waitRequests(t, s, "the redelivery after a 500", 90*time.Second, func(got []hookRequest) bool { return len(ofTx(got, txid)) >= 3 })
	if seq := ofTx(got, txid); !slices.Equal(seq[:3], []string{"tx_seen 1", "tx_seen 2", "tx_confirmed 1"}) {
		t.Errorf("the flaky webhook got %v, want tx_seen 1 (500), tx_seen 2, tx_confirmed 1", seq)
	}
	if got[0].event.ID != seenID || got[1].event.ID != seenID || string(got[0].body) != string(got[1].body) {
		t.Errorf("the redelivery's event ID or body differs: %s / %s (first delivered as %s)", got[0].body, got[1].body, seenID)
	}

	// ntfy: a POST of text per event, titled.
	got = topic.waitRequests(t, s, "ntfy", 30*time.Second, func(got []hookRequest) bool { return len(got) >= 2 })
	if title := got[0].header.Get("Title"); !strings.HasPrefix(title, "addrwatch") || !strings.Contains(string(got[0].body), txid) {
		t.Errorf("the ntfy message: title %q, body %q", title, got[0].body)
	}

	// Email: through STARTTLS, with AUTH over TLS, one message per event.
	msgs := waitMessages(t, s, relay, 3) // the test and two events
	var mailed []string
	for _, m := range msgs {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		if !m.TLS || m.To != "owner@example.com" {
			t.Errorf("a message to %s, over TLS %v", m.To, m.TLS)
		}
		mailed = append(mailed, msg.Header.Get(send.EventIDHeader))
	}
	if !slices.Contains(mailed, seenID) {
		t.Errorf("the emails' event IDs %v lack tx_seen's %s", mailed, seenID)
	}
	_, auths := relay.Received()
	for _, auth := range auths {
		if !auth.TLS || auth.User != smtptest.User {
			t.Errorf("an AUTH over TLS %v as %q", auth.TLS, auth.User)
		}
	}
	if len(auths) == 0 {
		t.Error("the relay was not authenticated to")
	}

	// The delivery log: every try, the 500 among them. A receiver holds a
	// try before the try's ack is applied, so the log is read until it
	// shows them or 30 s have passed.
	want := map[string][]string{
		goodID:  {"tx_seen 1 200 ", "tx_confirmed 1 200 "},
		flakyID: {"tx_seen 1 500 answer", "tx_seen 2 200 ", "tx_confirmed 1 200 "},
		topicID: {"tx_seen 1 200 ", "tx_confirmed 1 200 "},
		mailID:  {"tx_seen 1 250 ", "tx_confirmed 1 250 "},
	}
	var byChannel map[string][]string
	var goodSeenEntry string
	var logBody []byte
	logged := func() bool {
		for id, lines := range want {
			if !slices.Equal(byChannel[id][:min(len(lines), len(byChannel[id]))], lines) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var lines []deliveryLine
		lines, logBody = deliveryLog(t, s, a)
		byChannel, goodSeenEntry = map[string][]string{}, ""
		for _, l := range slices.Backward(lines) {
			byChannel[l.ChannelID] = append(byChannel[l.ChannelID], l.Kind+" "+strconv.Itoa(l.Attempt)+" "+strconv.Itoa(l.Status)+" "+l.Class)
			if l.ChannelID == goodID && l.EventID == seenID {
				goodSeenEntry = l.EntryID
			}
		}
		if logged() || time.Now().After(deadline) {
			break
		}
	}
	for id, lines := range want {
		if !slices.Equal(byChannel[id][:min(len(lines), len(byChannel[id]))], lines) {
			t.Errorf("the log of %s: %v, want %v first", id, byChannel[id], lines)
		}
	}
	if strings.Contains(string(logBody), "t0k") {
		t.Errorf("the delivery log quotes a URL's token: %s", logBody)
	}

	// "Send again": the same event, its tries counted on.
	if goodSeenEntry == "" {
		t.Fatalf("no delivery line of tx_seen to the good webhook: %s", logBody)
	}
	before := len(good.requests())
	expect(t, do(t, "POST", ntURL(s, "/deliveries/"+goodSeenEntry+"/redeliver"), a.OwnerSecret, nil), http.StatusAccepted, "")
	got = good.waitRequests(t, s, "the redelivery asked for", 30*time.Second, func(got []hookRequest) bool { return len(got) > before })
	if again := got[before]; again.event.ID != seenID || again.header.Get(send.DeliveryAttemptHeader) != "2" {
		t.Errorf("sent again as %s attempt %s, want %s attempt 2", again.event.ID, again.header.Get(send.DeliveryAttemptHeader), seenID)
	}

	// The admin status counts what the deliverer did.
	r = do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	stats, _ := r.JSON(t)["deliverer"].(map[string]any)
	if stats == nil || stats["delivered"].(float64) < 8 || stats["failed"].(map[string]any)["answer"] != float64(1) {
		t.Errorf("the deliverer's status: %s", r.Body)
	}
	if strings.Contains(s.logs.String(), "t0k") || strings.Contains(s.logs.String(), smtptest.Password) {
		t.Errorf("the node's log holds a URL's token or the relay's password:\n%s", s.logs.String())
	}
}

// waitMessages waits until relay holds n messages.
func waitMessages(t *testing.T, s *server, relay *smtptest.Server, n int) []smtptest.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := relay.Received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay got %d messages, want %d; the node said:\n%s", len(got), n, s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

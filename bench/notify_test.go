package main

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/notify/send"
)

func TestParseNotify(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs([]string{"notify"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.notify
	if cfg.command != "notify" || cfg.accounts != watchAccountsDefault || cfg.watch.addresses != watchAddressesDefault ||
		n.burstAccounts != 60 || n.burstChannels != 4 || n.burstAddresses != 100 || n.slowAnswer != 2*time.Second {
		t.Fatalf("notify defaults: %+v %+v", cfg, n)
	}
	cfg, err = parseArgs([]string{"notify", "--addresses", "20", "--accounts", "2", "--blocks", "1", "--burst-accounts", "0", "--slow-answer", "1s"}, noEnv)
	if err != nil || cfg.notify.burstAccounts != 0 || cfg.notify.slowAnswer != time.Second || cfg.watch.blocks != 1 {
		t.Fatalf("parsed %+v, %v", cfg, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reads", "--burst-accounts", "5"}, "--burst-accounts is for notify"},
		{[]string{"watch", "--slow-answer", "1s"}, "--slow-answer is for notify"},
		{[]string{"notify", "--reorgs", "1"}, "no reorgs or leader kills"},
		{[]string{"notify", "--burst-channels", "11"}, "--burst-channels must be from 1 to 10"},
		{[]string{"notify", "--burst-addresses", "111"}, "--burst-addresses must be from 1 to 110"},
		{[]string{"notify", "--slow-answer", "15s"}, "--slow-answer must be from 0 to under 15s"},
		{[]string{"notify", "reads"}, "notify takes no scenarios"},
	} {
		_, err := parseArgs(c.args, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseArgs(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// hookRequest posts body to the receivers at url signed under secret, as
// the server's webhook sender does, and returns the answer's status.
func hookRequest(t *testing.T, url, secret string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(send.SignatureHeader, send.Sign(time.Now(), body, secret))
	req.Header.Set(send.DeliveryAttemptHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A receiver takes a webhook signed under its channel's secret, refuses
// one signed under another, one whose body is no event and one to a path
// no channel has, and notes each with its reason; the slow channel
// answers after its delay.
func TestReceiversVerifyEveryWebhook(t *testing.T) {
	t.Parallel()
	rc := newReceivers()
	defer rc.close()
	base, err := rc.listen()
	if err != nil {
		t.Fatal(err)
	}
	fast := &hookChannel{path: "/h/fast", secret: "whsec_fast"}
	slow := &hookChannel{path: "/h/slow", secret: "whsec_slow", delay: 200 * time.Millisecond}
	rc.add(fast)
	rc.add(slow)
	event := []byte(`{"id":"ce_1","type":"tx_confirmed","txid":"ab","address":"bcrt1q","block_hash":"00"}`)

	if got := hookRequest(t, base+fast.path, fast.secret, event); got != 200 {
		t.Errorf("a good webhook: %d", got)
	}
	if got := hookRequest(t, base+fast.path, slow.secret, event); got != 401 {
		t.Errorf("a webhook under another channel's secret: %d", got)
	}
	if got := hookRequest(t, base+fast.path, fast.secret, []byte(`{"id":""}`)); got != 401 {
		t.Errorf("a body with no event: %d", got)
	}
	if got := hookRequest(t, base+"/h/none", fast.secret, event); got != 401 {
		t.Errorf("a path with no channel: %d", got)
	}
	start := time.Now()
	if got := hookRequest(t, base+slow.path, slow.secret, event); got != 200 || time.Since(start) < slow.delay {
		t.Errorf("the slow channel answered %d after %s", got, time.Since(start))
	}

	got, end := rc.next(0)
	if end != 5 || len(got) != 5 {
		t.Fatalf("%d arrivals", len(got))
	}
	if got[0].problem != "" || got[0].channel != fast || got[0].event.TxID != "ab" || got[0].attempt != 1 {
		t.Errorf("the good webhook: %+v", got[0])
	}
	for i, want := range []string{"signature", "no event", "no channel"} {
		if !strings.Contains(got[i+1].problem, want) {
			t.Errorf("arrival %d: problem %q, want %q", i+1, got[i+1].problem, want)
		}
	}
	if got[4].problem != "" || got[4].channel != slow || got[4].at.Sub(start) >= slow.delay {
		t.Errorf("the slow webhook, noted when it arrived: %+v", got[4])
	}
}

// The tally keeps the first arrival of each webhook, counts a second
// request of one event ID as a redelivery and a refused one as refused,
// and a wait says how many it never got.
func TestHookTallyWaits(t *testing.T) {
	t.Parallel()
	rc := newReceivers()
	ch := &hookChannel{path: "/h/1"}
	at := time.Now()
	ev := func(id, kind, txid string) hookArrival {
		return hookArrival{at: at, channel: ch, event: send.WebhookPayload{ID: id, Type: kind, TxID: txid, Address: "a"}}
	}
	rc.arrivals = []hookArrival{ev("e1", kindSeen, "t1"), ev("e1", kindSeen, "t1"), {problem: "signature: no"}, ev("e2", kindConfirmed, "t1")}
	tally := newHookTally(rc)
	want := keySet([]hookKey{{ch, kindSeen, "t1", "a"}, {ch, kindConfirmed, "t1", "a"}, {ch, kindConfirmed, "t2", "a"}})
	missing, err := tally.wait(context.Background(), want, 20*time.Millisecond)
	if err != nil || missing != 1 || !want[hookKey{ch, kindConfirmed, "t2", "a"}] {
		t.Fatalf("missing %d (%v), still wanted %v", missing, err, want)
	}
	if tally.redelivered != 1 || tally.refused != 1 || tally.byKind[kindSeen] != 1 || tally.byKind[kindConfirmed] != 1 || tally.cursor != 4 {
		t.Errorf("tally %+v", tally)
	}
	if a, ok := tally.arrived(hookKey{ch, kindSeen, "t1", "a"}); !ok || a.event.ID != "e1" {
		t.Errorf("first arrival %+v %v", a, ok)
	}
}

func TestBurstFigures(t *testing.T) {
	t.Parallel()
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	if got := perSecond(ms(100, 900, 1000, 3500)); !slices.Equal(got, []int{2, 1, 0, 1}) {
		t.Errorf("per second %v", got)
	}
	first, last, rate := rateOf(ms(3000, 500, 1500, 2500))
	if first != 500*time.Millisecond || last != 3*time.Second || rate != 4/2.5 {
		t.Errorf("rate: first %s, last %s, %v/s", first, last, rate)
	}
	if _, _, rate := rateOf(ms(5)); rate != 0 {
		t.Errorf("the rate of one arrival: %v", rate)
	}
	b := budgetOf(60, 4)
	if b.AccountsPerS != 1200 || b.ChannelsPerS != 1200 || b.SteadyPerS != 1200 || b.AtOnce != 12000 {
		t.Errorf("budget of 60 × 4: %+v", b)
	}
	if b := budgetOf(60, 2); b.SteadyPerS != 600 || b.AtOnce != 6000 {
		t.Errorf("budget of 60 × 2: %+v", b)
	}
	l := hookLatencyOf(ms(10, 20, 30, 40, 50, 60, 70, 80, 90, 100))
	if l.Samples != 10 || l.P50 != 50_000 || l.P90 != 90_000 || l.P99 != 100_000 || l.Max != 100_000 {
		t.Errorf("latency %+v", l)
	}
}

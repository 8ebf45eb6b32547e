package send

import (
	"math"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/notify/egress"
)

// TestRoomIsWhatTheSendsWouldSpend: a webhook's and an ntfy channel's
// Room are their HTTP client's budgets, shared (one account budget for
// both), and a try spends what Room said; email's are its own, and an
// email sender without budgets has unbounded room.
func TestRoomIsWhatTheSendsWouldSpend(t *testing.T) {
	f := newWebhookFixture(t, nil, egress.Config{AccountRate: egress.Rate{PerSecond: 1, Burst: 3},
		EndpointRate: egress.Rate{PerSecond: 1, Burst: 2}})
	ntfy := &Ntfy{HTTP: f.hook.HTTP, Key: f.hook.Key}
	r := f.hook.Room("acct_1", channelID)
	if r.Account.Sends != 3 || r.Channel.Sends != 2 || r.Budgets != f.hook.HTTP.Limits() {
		t.Fatalf("a fresh webhook channel's room: %+v", r)
	}
	if out := f.send(t, 1); !out.Delivered {
		t.Fatalf("send: %+v", out)
	}
	r = f.hook.Room("acct_1", channelID)
	if r.Account.Sends != 2 || r.Channel.Sends != 1 || r.Channel.Next <= 0 || r.Channel.Next > time.Second {
		t.Fatalf("after one try: %+v", r)
	}
	if n := ntfy.Room("acct_1", "ch_ntfy_1"); n.Account.Sends != 2 || n.Channel.Sends != 2 || n.Budgets != r.Budgets {
		t.Fatalf("an ntfy channel of the same account: %+v", n)
	}

	limits := egress.NewLimits(egress.Rate{PerSecond: 1, Burst: 5}, egress.Rate{PerSecond: 1, Burst: 4}, nil)
	if e := (&Email{Limits: limits}).Room("acct_1", "ch_mail"); e.Account.Sends != 5 || e.Channel.Sends != 4 || e.Budgets != limits {
		t.Fatalf("email: %+v", e)
	}
	if e := (&Email{}).Room("acct_1", "ch_mail"); e.Account.Sends != math.MaxInt || e.Channel.Sends != math.MaxInt || e.Budgets != nil {
		t.Fatalf("email without budgets: %+v", e)
	}
}

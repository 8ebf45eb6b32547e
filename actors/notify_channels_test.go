package actors

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// webhookChannel is a well-formed webhook channel's creation.
func webhookChannel(id string) *CreateNotifyChannel {
	return &CreateNotifyChannel{ChannelID: id, ChannelKind: ChannelWebhook, Name: "hook " + id, Target: "s1.sealed-" + id,
		Display: "https://hooks.example/…", Nonce: "nonce-of-" + id + "-0123456789", KeyFingerprint: "0123456789abcdef"}
}

// addChannel makes a webhook channel as the owner.
func (ta *testAccount) addChannel(id string) {
	ta.t.Helper()
	ta.mustOK(ta.owner, webhookChannel(id))
}

func TestNotifyChannelsAreTheOwners(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	agent := ta.addKey(LevelWrite)
	ta.mustFail(CodeForbidden, agent, webhookChannel("nc_a"))
	ta.mustFail(CodeForbidden, systemP, webhookChannel("nc_a"))
	res := ta.mustOK(ta.owner, webhookChannel("nc_a"))
	if res.Status != 201 {
		t.Fatalf("status %d", res.Status)
	}
	v := res.Body.(ChannelCreatedView).Channel
	if v.ID != "nc_a" || v.Kind != ChannelWebhook || !v.Enabled || v.Display != "https://hooks.example/…" || v.DisabledAt != nil {
		t.Errorf("view %+v", v)
	}
	ta.mustFail(CodeConflict, ta.owner, webhookChannel("nc_a"))
	if _, err := (NotifyChannelsQuery{}).answer(ta.a, agent, LevelWrite, ta.at); err == nil {
		t.Error("an agent read the channels")
	}
	list, _ := NotifyChannelsQuery{}.answer(ta.a, ownerP, LevelWrite, ta.at)
	if len(list.Channels) != 1 || list.Channels[0].ID != "nc_a" {
		t.Errorf("list %+v", list)
	}
}

// Everything is checked before anything changes; a plain URL never
// stands where a sealed one must.
func TestNotifyChannelValidation(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	bad := map[string]func(*CreateNotifyChannel){
		"id without prefix":    func(p *CreateNotifyChannel) { p.ChannelID = "x1" },
		"id with a slash":      func(p *CreateNotifyChannel) { p.ChannelID = "nc_a/b" },
		"unknown kind":         func(p *CreateNotifyChannel) { p.ChannelKind = "sms" },
		"empty name":           func(p *CreateNotifyChannel) { p.Name = "" },
		"long name":            func(p *CreateNotifyChannel) { p.Name = strings.Repeat("n", 101) },
		"control in name":      func(p *CreateNotifyChannel) { p.Name = "a\x1bb" },
		"plain URL":            func(p *CreateNotifyChannel) { p.Target = "https://hooks.example/token" },
		"no display":           func(p *CreateNotifyChannel) { p.Display = "" },
		"short nonce":          func(p *CreateNotifyChannel) { p.Nonce = "short" },
		"no fingerprint":       func(p *CreateNotifyChannel) { p.KeyFingerprint = "" },
		"upper fingerprint":    func(p *CreateNotifyChannel) { p.KeyFingerprint = "0123456789ABCDEF" },
		"ntfy with a nonce":    func(p *CreateNotifyChannel) { p.ChannelKind = ChannelNtfy },
		"email with a URL":     func(p *CreateNotifyChannel) { p.ChannelKind, p.Nonce = ChannelEmail, "" },
		"email with two @":     func(p *CreateNotifyChannel) { *p = emailChannel("nc_e", "a@b, c@d") },
		"email without domain": func(p *CreateNotifyChannel) { *p = emailChannel("nc_e", "owner@") },
		"email display":        func(p *CreateNotifyChannel) { *p = emailChannel("nc_e", "o@example.com"); p.Display = "other" },
	}
	for name, change := range bad {
		p := webhookChannel("nc_a")
		change(p)
		t.Run(name, func(t *testing.T) {
			ta.t = t
			ta.mustFail(CodeValidation, ta.owner, p)
		})
	}
	ta.t = t
	mail := emailChannel("nc_e", "owner@example.com")
	ta.mustOK(ta.owner, &mail)
	ntfy := webhookChannel("nc_n")
	ntfy.ChannelKind, ntfy.Nonce = ChannelNtfy, ""
	ta.mustOK(ta.owner, ntfy)
}

func emailChannel(id, address string) CreateNotifyChannel {
	return CreateNotifyChannel{ChannelID: id, ChannelKind: ChannelEmail, Name: "mail", Target: address, Display: address}
}

func TestAnAccountHasAtMostTenChannels(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	for i := range notifyChannelsMax {
		ta.addChannel(fmt.Sprintf("nc_%d", i))
	}
	ta.mustFail(CodeConflict, ta.owner, webhookChannel("nc_x"))
	ta.mustOK(ta.owner, &DeleteNotifyChannel{ChannelID: "nc_3"})
	ta.addChannel("nc_x")
}

func TestUpdatingAndRotatingAChannel(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	ta.addChannel("nc_a")
	ta.mustFail(CodeNotFound, ta.owner, &UpdateNotifyChannel{ChannelID: "nc_b", Name: ptr("x")})
	ta.mustFail(CodeValidation, ta.owner, &UpdateNotifyChannel{ChannelID: "nc_a"})
	ta.mustFail(CodeValidation, ta.owner, &UpdateNotifyChannel{ChannelID: "nc_a", Name: ptr(""), Enabled: ptr(false)})
	v := ta.mustOK(ta.owner, &UpdateNotifyChannel{ChannelID: "nc_a", Name: ptr("renamed"), Enabled: ptr(false)}).Body.(ChannelView)
	if v.Name != "renamed" || v.Enabled || v.DisabledReason != DisabledByOwner || v.DisabledAt == nil {
		t.Errorf("disabled view %+v", v)
	}
	ch := ta.a.notifyChannel("nc_a")
	ch.FailingSince = ta.at // as a failing day would leave it
	v = ta.mustOK(ta.owner, &UpdateNotifyChannel{ChannelID: "nc_a", Enabled: ptr(true)}).Body.(ChannelView)
	if !v.Enabled || v.DisabledReason != "" || v.DisabledAt != nil || v.FailingSince != nil {
		t.Errorf("enabling again did not clear the failing state: %+v", v)
	}

	before := ch.Nonce
	ta.mustFail(CodeConflict, ta.owner, &RotateNotifySecret{ChannelID: "nc_a", Nonce: before})
	ta.mustFail(CodeValidation, ta.owner, &RotateNotifySecret{ChannelID: "nc_a", Nonce: "bad nonce!"})
	ta.mustOK(ta.owner, &RotateNotifySecret{ChannelID: "nc_a", Nonce: "a-new-nonce-0123456789"})
	if ch.Nonce != "a-new-nonce-0123456789" {
		t.Errorf("nonce %q", ch.Nonce)
	}
	mail := emailChannel("nc_e", "o@example.com")
	ta.mustOK(ta.owner, &mail)
	ta.mustFail(CodeValidation, ta.owner, &RotateNotifySecret{ChannelID: "nc_e", Nonce: "a-new-nonce-0123456789"})
	ta.mustFail(CodeNotFound, ta.owner, &DeleteNotifyChannel{ChannelID: "nc_zz"})
}

// A rotation with a grace keeps the secret it replaced signing until the
// grace ends: the deliverer's and the test's reads carry its nonce until
// then, the owner's view says until when; a plain rotation, or another
// with a grace, ends it; the grace is bounded to a day.
func TestRotateNotifySecretWithGrace(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	oneCardWithChannel(ta)
	ch := ta.a.notifyChannel("nc_a")
	first := ch.Nonce
	ta.observeChain(addrs[0], 900, mempoolTx("a1", 5000)) // an entry to deliver

	for _, grace := range []int64{0, -1, 86401} {
		ta.mustFail(CodeValidation, ta.owner, &RotateNotifySecretWithGrace{ChannelID: "nc_a", Nonce: "second-nonce-0123456789", GraceSeconds: grace})
	}
	ta.mustFail(CodeForbidden, ta.addKey(LevelWrite), &RotateNotifySecretWithGrace{ChannelID: "nc_a", Nonce: "second-nonce-0123456789", GraceSeconds: 60})
	ta.mustFail(CodeConflict, ta.owner, &RotateNotifySecretWithGrace{ChannelID: "nc_a", Nonce: first, GraceSeconds: 60})
	ta.mustFail(CodeNotFound, ta.owner, &RotateNotifySecretWithGrace{ChannelID: "nc_zz", Nonce: "second-nonce-0123456789", GraceSeconds: 60})

	v := ta.mustOK(ta.owner, &RotateNotifySecretWithGrace{ChannelID: "nc_a", Nonce: "second-nonce-0123456789", GraceSeconds: 3600}).Body.(ChannelView)
	rotatedAt := ta.at
	until := rotatedAt + int64(time.Hour)
	if v.PreviousSecretUntil == nil || *v.PreviousSecretUntil != formatTime(until) || ch.Nonce != "second-nonce-0123456789" {
		t.Fatalf("after the rotation: view %+v, nonce %q", v, ch.Nonce)
	}
	// Both the deliverer's read and the test's read sign with the old
	// nonce beside the new one until the grace ends, not at its end.
	for _, c := range []struct {
		now      int64
		previous string
	}{{rotatedAt, first}, {until - 1, first}, {until, ""}, {until + int64(time.Hour), ""}} {
		due := ta.due(c.now)
		target, err := NotifyChannelQuery{ChannelID: "nc_a"}.answer(ta.a, ownerP, LevelWrite, c.now)
		if err != nil || len(due.Due) != 1 {
			t.Fatalf("at %d: %v, %+v", c.now-rotatedAt, err, due)
		}
		if got := due.Due[0].Channel; got.Nonce != "second-nonce-0123456789" || got.PreviousNonce != c.previous || target.PreviousNonce != c.previous {
			t.Errorf("%s after the rotation: due %+v, test %+v; want previous %q", time.Duration(c.now-rotatedAt), got, target, c.previous)
		}
		list, _ := NotifyChannelsQuery{}.answer(ta.a, ownerP, LevelWrite, c.now)
		if shown := list.Channels[0].PreviousSecretUntil != nil; shown != (c.previous != "") {
			t.Errorf("%s after the rotation: the owner's view shows previous_secret_until: %v", time.Duration(c.now-rotatedAt), shown)
		}
	}

	// A second rotation with a grace keeps only the secret it replaced.
	ta.mustOK(ta.owner, &RotateNotifySecretWithGrace{ChannelID: "nc_a", Nonce: "third-nonce-0123456789", GraceSeconds: 60})
	if got := ta.due(ta.at).Due[0].Channel; got.PreviousNonce != "second-nonce-0123456789" {
		t.Errorf("after a second rotation the previous nonce is %q", got.PreviousNonce)
	}
	// A plain rotation ends the grace at once.
	v = ta.mustOK(ta.owner, &RotateNotifySecret{ChannelID: "nc_a", Nonce: "fourth-nonce-0123456789"}).Body.(ChannelView)
	if got := ta.due(ta.at).Due[0].Channel; got.PreviousNonce != "" || v.PreviousSecretUntil != nil || ch.PreviousNonce != "" || ch.PreviousUntil != 0 {
		t.Errorf("after a plain rotation: target %+v, view %+v", got, v)
	}

	mail := emailChannel("nc_e", "o@example.com")
	ta.mustOK(ta.owner, &mail)
	ta.mustFail(CodeValidation, ta.owner, &RotateNotifySecretWithGrace{ChannelID: "nc_e", Nonce: "second-nonce-0123456789", GraceSeconds: 60})
}

package actors

import (
	"fmt"
	"strings"
	"testing"
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

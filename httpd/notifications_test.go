package httpd

import (
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// A channel's creation body, decoded and read, is a command or a 422,
// never a panic, and a refusal never repeats the URL (its path or query
// may be a token) or the address.
func FuzzChannelCreateRequest(f *testing.F) {
	for _, body := range []string{
		`{"kind":"webhook","name":"n","url":"https://hooks.example/t0ken"}`,
		`{"kind":"ntfy","name":"n","url":"http://[::1]:80/topic?auth=secretvalue"}`,
		`{"kind":"email","name":"n","address":"Owner <owner@example.com>"}`,
		`{"kind":"email","name":"n","address":"a@b, c@d"}`,
		`{"kind":"webhook","name":"n","url":"https://u:p@x/secretpath"}`,
		`{"kind":"sms","name":"n"}`, `{"kind":"webhook","name":""}`, `{"kind":"email","name":"n","url":"x"}`,
		`{"kind":"webhook","name":"n","url":"https://xn--/secretpath"}`, `{"kind":"webhook","name":"n","url":"https://0x7f.1/secretpath"}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req channelCreateRequest
		if err := decodeBody(requestWith("application/json", body), &req, ownerBodyBytesMax); err != nil {
			return
		}
		p, _, err := channelOf(req)
		if err == nil {
			if p.Name == "" || (p.ChannelKind == actors.ChannelEmail && p.Target == "") {
				t.Fatalf("accepted %s as %+v", body, p)
			}
			return
		}
		e := typedErr(err)
		if e.Code != actors.CodeValidation {
			t.Fatalf("refusal with code %s: %v", e.Code, e)
		}
		for _, v := range []*string{req.URL, req.Address} {
			if v != nil && len(*v) >= 8 && strings.Contains(e.Message, *v) {
				t.Fatalf("message %q repeats %q", e.Message, *v)
			}
		}
		if req.URL != nil && strings.Contains(*req.URL, "secretpath") && strings.Contains(e.Message, "secretpath") {
			t.Fatalf("message %q repeats the URL's path", e.Message)
		}
	})
}

func TestEmailAddress(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"owner@example.com":            "owner@example.com",
		"Owner <owner@example.com>":    "owner@example.com",
		"a@example.com, b@example.com": "",
		"owner@":                       "",
		"<>":                           "",
		strings.Repeat("a", 250) + "@example.com": "",
	} {
		got, err := emailAddress(raw)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("emailAddress(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// A rule's body fills in the defaults of what it leaves out.
func TestRuleRequestDefaults(t *testing.T) {
	t.Parallel()
	f := ruleRequest{}.fields()
	if f.Depth != actors.TxDeepConfirmations || len(f.Events) != 6 || f.Channels == nil || len(f.Channels) != 0 || f.MinAmountSat != 0 {
		t.Errorf("defaults %+v", f)
	}
	none := []string{}
	depth := int64(3)
	f = ruleRequest{Events: &none, Depth: &depth}.fields()
	if len(f.Events) != 0 || f.Events == nil || f.Depth != 3 {
		t.Errorf("explicit %+v", f)
	}
}

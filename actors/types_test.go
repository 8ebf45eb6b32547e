package actors

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestLevelJSONAndParsing(t *testing.T) {
	for l, name := range map[Level]string{LevelNone: "none", LevelRead: "read", LevelWrite: "write"} {
		if l.String() != name {
			t.Fatalf("%d.String() = %q", l, l.String())
		}
		b, err := json.Marshal(l)
		if err != nil || string(b) != `"`+name+`"` {
			t.Fatalf("marshal %v = %s, %v", l, b, err)
		}
		var back Level
		if err := json.Unmarshal(b, &back); err != nil || back != l {
			t.Fatalf("unmarshal %s = %v, %v", b, back, err)
		}
		if p, ok := ParseLevel(name); !ok || p != l {
			t.Fatalf("ParseLevel(%q) = %v, %v", name, p, ok)
		}
	}
	if LevelNone >= LevelRead || LevelRead >= LevelWrite {
		t.Fatalf("levels are not ordered none < read < write")
	}
	for _, bad := range []string{"", "Read", "WRITE", "admin", "level(3)"} {
		if _, ok := ParseLevel(bad); ok {
			t.Fatalf("ParseLevel(%q) accepted", bad)
		}
		var l Level
		if err := json.Unmarshal([]byte(fmt.Sprintf("%q", bad)), &l); err == nil {
			t.Fatalf("unmarshal %q accepted", bad)
		}
	}
	var l Level
	if err := json.Unmarshal([]byte(`2`), &l); err == nil {
		t.Fatalf("a numeric level was accepted")
	}
	if s := Level(7).String(); s != "level(7)" {
		t.Fatalf("unknown level renders as %q", s)
	}
	// Nothing the decoder would reject may be encoded (and reach the log).
	if b, err := json.Marshal(Level(3)); err == nil {
		t.Fatalf("an out-of-range level encodes as %s", b)
	}
}

func TestPlanJSONAndParsing(t *testing.T) {
	for p, name := range map[Plan]string{PlanBase: "base", PlanExtended: "extended"} {
		b, err := json.Marshal(p)
		if err != nil || string(b) != `"`+name+`"` {
			t.Fatalf("marshal %v = %s, %v", p, b, err)
		}
		var back Plan
		if err := json.Unmarshal(b, &back); err != nil || back != p {
			t.Fatalf("unmarshal %s = %v, %v", b, back, err)
		}
	}
	for _, bad := range []string{"", "Base", "pro", "free"} {
		if _, ok := ParsePlan(bad); ok {
			t.Fatalf("ParsePlan(%q) accepted", bad)
		}
		var p Plan
		if err := json.Unmarshal([]byte(fmt.Sprintf("%q", bad)), &p); err == nil {
			t.Fatalf("unmarshal plan %q accepted", bad)
		}
	}
	if s := Plan(9).String(); s != "plan(9)" {
		t.Fatalf("unknown plan renders as %q", s)
	}
	if b, err := json.Marshal(Plan(2)); err == nil {
		t.Fatalf("an unknown plan encodes as %s", b)
	}
	// The spec's plan limits.
	base, ext := PlanBase.limits(), PlanExtended.limits()
	if base.spacesMax != 1 || base.spaceCardsMax != 10 || base.portfolioCardsMax != 10 {
		t.Fatalf("base limits %+v", base)
	}
	if ext.spacesMax != 10 || ext.spaceCardsMax != 10 || ext.portfolioCardsMax != 10 {
		t.Fatalf("extended limits %+v", ext)
	}
}

func TestHashJSON(t *testing.T) {
	h := hashOf("x")
	b, err := json.Marshal(h)
	if err != nil || len(b) != 66 {
		t.Fatalf("marshal hash = %s, %v", b, err)
	}
	var back Hash
	if err := json.Unmarshal(b, &back); err != nil || back != h {
		t.Fatalf("round trip %v, %v", back, err)
	}
	for _, bad := range []string{`"abcd"`, `"` + strings.Repeat("zz", 32) + `"`, `"` + strings.Repeat("ab", 33) + `"`, `12`, `null`} {
		var x Hash
		if err := json.Unmarshal([]byte(bad), &x); err == nil {
			t.Fatalf("hash %s accepted", bad)
		}
	}
}

// The kind numbers are part of the on-disk log format: they must never
// change, and every kind must decode to a payload that reports it.
func TestCommandKindsAreStable(t *testing.T) {
	want := map[Kind]Payload{
		1: &CreateAccount{}, 2: &DeleteAccount{}, 3: &CreateKey{}, 4: &RevokeKey{},
		5: &CreateSession{}, 6: &DeleteSession{}, 7: &SetGrant{}, 8: &SetPlan{},
		9: &ChangePassword{}, 10: &RotateOwnerSecret{}, 11: &CreatePortfolioCard{},
		12: &UpdatePortfolioCard{}, 13: &DeletePortfolioCard{},
	}
	for k, sample := range want {
		if sample.Kind() != k {
			t.Fatalf("%T reports kind %d, the log format says %d", sample, sample.Kind(), k)
		}
		p, ok := NewPayload(k)
		if !ok || p.Kind() != k || fmt.Sprintf("%T", p) != fmt.Sprintf("%T", sample) {
			t.Fatalf("NewPayload(%d) = %T, %v", k, p, ok)
		}
	}
	for _, k := range []Kind{0, 200, 255} {
		if p, ok := NewPayload(k); ok || p != nil {
			t.Fatalf("NewPayload(%d) = %T, %v: an unknown kind must be refused", k, p, ok)
		}
	}
}

func TestErrors(t *testing.T) {
	e := Errorf(CodeStaleVersion, "version %s is old", "v1")
	if e.Error() != "STALE_VERSION: version v1 is old" {
		t.Fatalf("Error() = %q", e.Error())
	}
	if ErrorCode(e) != CodeStaleVersion {
		t.Fatalf("ErrorCode = %s", ErrorCode(e))
	}
	if ErrorCode(fmt.Errorf("wrapped: %w", e)) != CodeStaleVersion {
		t.Fatalf("ErrorCode does not unwrap")
	}
	if ErrorCode(fmt.Errorf("plain")) != CodeInternal || ErrorCode(nil) != CodeInternal {
		t.Fatalf("a foreign error is not INTERNAL")
	}
	b, _ := json.Marshal(e)
	if string(b) != `{"code":"STALE_VERSION","error":"version v1 is old"}` {
		t.Fatalf("error body %s", b)
	}
}

func TestTextRules(t *testing.T) {
	for _, s := range []string{"", "abc", "a b", "ünï €", "🪙"} {
		if !isPrintable(s) || !isPlainText(s) {
			t.Fatalf("%q should be printable", s)
		}
	}
	for _, s := range []string{"\n", "\t", "\r", "\x00", "\u200b", "\u202e", "\ufeff"} {
		if isPrintable(s) {
			t.Fatalf("%q passes isPrintable", s)
		}
	}
	if !isPlainText("a\nb\tc") || isPlainText("a\rb") || isPlainText("\x00") {
		t.Fatalf("isPlainText allows only newline and tab beyond printable text")
	}
	if charCount("héllo🪙") != 6 {
		t.Fatalf("charCount counts bytes, not code points")
	}
}

func TestVersionStringsAreOpaqueAndUnique(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	seen := map[string]bool{}
	card := ta.createCard(w, addrs[0])
	seen[card.Version] = true
	for i := range 5 {
		card = cardOf(t, ta.mustOK(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr(fmt.Sprint(i))}}))
		if seen[card.Version] {
			t.Fatalf("version %s repeats", card.Version)
		}
		seen[card.Version] = true
	}
	other := ta.createCard(w, addrs[1])
	if seen[other.Version] {
		t.Fatalf("a new card reuses version %s", other.Version)
	}
}

// TestCommandKindsAreTheirPayloads: every row of the command table makes
// a payload of its own kind, and the kinds are the log's numbers 1 to 32
// with none missing, so a row cannot decode one kind as another.
func TestCommandKindsAreTheirPayloads(t *testing.T) {
	for k, spec := range commandKinds {
		if got := spec.payload().Kind(); got != k {
			t.Errorf("the row of kind %d makes a payload of kind %d", k, got)
		}
	}
	for k := KindCreateAccount; k <= KindImportLabels; k++ {
		if _, known := commandKinds[k]; !known {
			t.Errorf("kind %d has no row", k)
		}
	}
	if KindRecordActivity.FeatureVersion() != 2 || KindImportLabels.FeatureVersion() != 3 || KindCreateAccount.FeatureVersion() != 1 {
		t.Error("feature versions are not the table's")
	}
	if !KindRecordKeyActivity.Ignorable() || KindImportLabels.Ignorable() || Kind(200).Ignorable() {
		t.Error("ignorable kinds are not the table's")
	}
}

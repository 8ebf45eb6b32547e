package actors

import (
	"fmt"
	"strings"
	"testing"
)

func TestCreateCardByAgentStartsAtWrite(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	events := len(ta.a.Audit)
	res := ta.mustOK(w, &CreatePortfolioCard{CardID: "card-a", Address: addrs[1], CardFields: CardFields{Name: ptr("Cold"), Note: ptr("savings")}})
	if res.Status != 201 {
		t.Fatalf("status %d", res.Status)
	}
	v := cardOf(t, res)
	want := CardView{ID: "card-a", Version: versionString(ta.a.Seq), EffectiveAccess: LevelWrite, Address: addrs[1], Name: "Cold", Note: "savings", ColorKey: defaultColorKey}
	if v != want {
		t.Fatalf("view %+v, want %+v", v, want)
	}
	// An agent never sees the owner's grant field.
	if got := bodyJSON(t, res.Body); strings.Contains(got, `"grant"`) {
		t.Fatalf("agent view shows the grant: %s", got)
	}
	c := ta.card("card-a")
	if c == nil || c.Grant != LevelWrite || c.CreatedAt != ta.at || c.Address != addrs[1] {
		t.Fatalf("stored card %+v", c)
	}
	if len(ta.a.Audit) != events+1 {
		t.Fatalf("create recorded %d events", len(ta.a.Audit)-events)
	}
	// The new card is visible to every key within its ceiling.
	r := ta.addKey(LevelRead)
	if got := cardOf(t, ta.mustQuery(ta.keyCred(r), GetPortfolioCardQuery{CardID: "card-a"})); got.EffectiveAccess != LevelRead {
		t.Fatalf("read key sees %v on an agent-created card", got.EffectiveAccess)
	}
}

func TestCreateCardByOwnerStartsAtNone(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	res := ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "card-o", Address: addrs[0]})
	v := cardOf(t, res)
	if v.EffectiveAccess != LevelWrite || v.Grant == nil || *v.Grant != LevelNone {
		t.Fatalf("owner view %+v (grant %v)", v, v.Grant)
	}
	if got := bodyJSON(t, res.Body); !strings.Contains(got, `"grant":"none"`) {
		t.Fatalf("owner view lacks the grant: %s", got)
	}
	if ta.card("card-o").Grant != LevelNone {
		t.Fatalf("owner-created card grant %v", ta.card("card-o").Grant)
	}
	wantCode(t, ta.query(ta.keyCred(w), GetPortfolioCardQuery{CardID: "card-o"}), CodeNotFound)
	if list := ta.listFor(ta.keyCred(w)); len(list.Cards) != 0 {
		t.Fatalf("agent lists a hidden card: %+v", list)
	}
	// A session owner creates at none as well.
	ta.mustOK(systemP, &CreateSession{SessionID: "s", Hash: hashOf("s"), ExpiresAt: ta.at + 1e12, PasswordHash: testPasswordHash})
	ta.mustOK(Principal{Kind: PrincipalOwner, SessionID: "s"}, &CreatePortfolioCard{CardID: "card-s", Address: addrs[2]})
	if ta.card("card-s").Grant != LevelNone {
		t.Fatalf("session-created card grant %v", ta.card("card-s").Grant)
	}
}

func TestCreateCardRejectsInvalidAddresses(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	bad := map[string]string{
		"testnet bech32":     "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
		"testnet P2PKH":      "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn",
		"testnet P2SH":       "2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc",
		"hex public key":     "0279BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798",
		"garbage":            "not an address",
		"empty":              "",
		"bad checksum":       "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb",
		"mixed case bech32":  "bc1QW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"surrounding spaces": " " + addrs[0] + " ",
		"altcoin (litecoin)": "LVg2kJoFNg45Nbpy53h7Fe1wKyeXVRhMH9",
	}
	for name, address := range bad {
		for _, p := range []Principal{w, ta.owner} {
			err := ta.mustFail(CodeValidation, p, &CreatePortfolioCard{CardID: "card-x", Address: address})
			if address != "" {
				mustNotMention(t, name+" error", err.Message, strings.TrimSpace(address))
			}
		}
		wantCode(t, ta.query(ta.keyCred(w), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: address}}), CodeValidation)
	}
}

func TestCreateCardStoresCanonicalAddress(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	upper := strings.ToUpper(addrs[1])
	v := ta.createCard(w, upper)
	if v.Address != addrs[1] || ta.card(v.ID).Address != addrs[1] {
		t.Fatalf("address stored as %q, want %q", ta.card(v.ID).Address, addrs[1])
	}
	// The lower-case spelling is the same address.
	ta.mustFail(CodeDuplicateAddress, w, &CreatePortfolioCard{CardID: "card-dup", Address: addrs[1]})
	// And the reverse: an upper-case P2TR after the lower-case one.
	ta.createCard(w, addrs[3])
	ta.mustFail(CodeDuplicateAddress, w, &CreatePortfolioCard{CardID: "card-dup", Address: strings.ToUpper(addrs[3])})
}

func TestDuplicateAddressRevealsNothing(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	hidden := ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "card-hidden", Address: addrs[0], CardFields: CardFields{Name: ptr("Secret Vault"), Note: ptr("do not tell")}})
	visible := ta.createCard(w, addrs[1])
	h := cardOf(t, hidden)

	for _, tc := range []struct {
		existing CardView
		address  string
		name     string
	}{{h, addrs[0], "Secret Vault"}, {visible, addrs[1], ""}} {
		err := ta.mustFail(CodeDuplicateAddress, w, &CreatePortfolioCard{CardID: "card-new", Address: tc.address})
		mustNotMention(t, "duplicate error", err.Message, tc.existing.ID, tc.existing.Version, tc.address, tc.name)
		res := ta.query(ta.keyCred(w), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: tc.address}})
		verr := wantCode(t, res, CodeDuplicateAddress)
		mustNotMention(t, "validate duplicate error", verr.Message, tc.existing.ID, tc.address)
		// The failed create grants nothing: the hidden card stays hidden.
		wantCode(t, ta.query(ta.keyCred(w), GetPortfolioCardQuery{CardID: h.ID}), CodeNotFound)
	}
	// The hidden and the visible duplicate answer identically.
	e1 := ta.apply(w, &CreatePortfolioCard{CardID: "card-new", Address: addrs[0]}).err
	e2 := ta.apply(w, &CreatePortfolioCard{CardID: "card-new", Address: addrs[1]}).err
	if *e1 != *e2 {
		t.Fatalf("hidden duplicate %v differs from visible duplicate %v", e1, e2)
	}
	if ta.card("card-hidden").Grant != LevelNone {
		t.Fatalf("duplicate attempt changed the hidden card's grant")
	}
}

func TestOverviewFull(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	limit := PlanBase.limits().portfolioCardsMax
	// The owner fills all but one slot with cards the key cannot see.
	for i := range limit - 1 {
		ta.createCard(ta.owner, addrs[i])
	}
	if list := ta.listFor(ta.keyCred(w)); len(list.Cards) != 0 {
		t.Fatalf("the key sees %d cards", len(list.Cards))
	}
	// A write key may still create a card it can see none of the others.
	if res := ta.query(ta.keyCred(w), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: addrs[limit-1]}}); res.err != nil {
		t.Fatalf("validate under the limit: %v", res.err)
	}
	ta.createCard(w, addrs[limit-1])
	if len(ta.a.Portfolio) != limit {
		t.Fatalf("%d cards, want %d", len(ta.a.Portfolio), limit)
	}
	err := ta.mustFail(CodeOverviewFull, w, &CreatePortfolioCard{CardID: "card-over", Address: addrs[limit]})
	mustNotMention(t, "full error", err.Message, ta.a.Portfolio[0].ID)
	ta.mustFail(CodeOverviewFull, ta.owner, &CreatePortfolioCard{CardID: "card-over", Address: addrs[limit]})
	wantCode(t, ta.query(ta.keyCred(w), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: addrs[limit]}}), CodeOverviewFull)
	// The extended plan has the same Account card limit.
	ta.mustOK(ta.owner, &SetPlan{Plan: PlanExtended})
	ta.mustFail(CodeOverviewFull, w, &CreatePortfolioCard{CardID: "card-over", Address: addrs[limit]})
	// Deleting one makes room again.
	c := ta.a.Portfolio[0]
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: c.ID, ExpectedVersion: versionString(c.Version)})
	ta.createCard(w, addrs[limit])
}

func TestColorKeys(t *testing.T) {
	if len(ColorKeys) != 10 {
		t.Fatalf("%d color keys, the spec lists 10", len(ColorKeys))
	}
	ta := newTestAccount(t, PlanExtended)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	for i, key := range ColorKeys {
		// Accepted on create (cards are deleted to stay under the limit)...
		res := ta.mustOK(w, &CreatePortfolioCard{CardID: fmt.Sprintf("card-c%d", i), Address: addrs[1], CardFields: CardFields{ColorKey: ptr(key)}})
		made := cardOf(t, res)
		if made.ColorKey != key {
			t.Fatalf("created with color %q, stored %q", key, made.ColorKey)
		}
		ta.mustOK(w, &DeletePortfolioCard{CardID: made.ID, ExpectedVersion: made.Version})
		// ...and on edit.
		card = cardOf(t, ta.mustOK(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{ColorKey: ptr(key)}}))
		if card.ColorKey != key {
			t.Fatalf("patched to %q, got %q", key, card.ColorKey)
		}
	}
	for _, key := range []string{"", "red", "Amber", "AMBER", " amber", "amber ", "purple", "grey", "black"} {
		ta.mustFail(CodeValidation, w, &CreatePortfolioCard{CardID: "card-bad", Address: addrs[2], CardFields: CardFields{ColorKey: ptr(key)}})
		ta.mustFail(CodeValidation, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{ColorKey: ptr(key)}})
		wantCode(t, ta.query(ta.keyCred(w), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: addrs[2], CardFields: CardFields{ColorKey: ptr(key)}}}), CodeValidation)
	}
}

func TestCardNameAndNoteBounds(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	patch := func(f CardFields) Result {
		return ta.apply(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: f})
	}
	good := []CardFields{
		{Name: ptr("")},
		{Name: ptr(strings.Repeat("x", cardNameCharsMax))},
		{Name: ptr(strings.Repeat("ü", cardNameCharsMax))}, // code points, not bytes
		{Name: ptr("Savings 🪙 2026")},
		{Note: ptr("")},
		{Note: ptr(strings.Repeat("y", cardNoteCharsMax))},
		{Note: ptr(strings.Repeat("ж", cardNoteCharsMax))},
		{Note: ptr("line one\nline two\tcolumn")},
	}
	for _, f := range good {
		res := patch(f)
		if res.err != nil {
			t.Fatalf("patch %+v: %v", f, res.err)
		}
		card = cardOf(t, res)
		if f.Name != nil && card.Name != *f.Name || f.Note != nil && card.Note != *f.Note {
			t.Fatalf("patch %+v stored name %q note %q", f, card.Name, card.Note)
		}
	}
	bad := []CardFields{
		{Name: ptr(strings.Repeat("x", cardNameCharsMax+1))},
		{Name: ptr(strings.Repeat("ü", cardNameCharsMax+1))},
		{Name: ptr("two\nlines")},
		{Name: ptr("tab\tname")},
		{Name: ptr("nul\x00")},
		{Name: ptr("esc\x1b[31m")},
		{Name: ptr("bidi\u202eoverride")},
		{Name: ptr("bad\xc3")},
		{Note: ptr(strings.Repeat("y", cardNoteCharsMax+1))},
		{Note: ptr("carriage\rreturn")},
		{Note: ptr("nul\x00")},
		{Note: ptr("del\x7f")},
		{Note: ptr("bad\xff")},
		// One bad field spoils an otherwise good edit.
		{Name: ptr("fine"), Note: ptr("bad\x00")},
	}
	for _, f := range bad {
		ta.mustFail(CodeValidation, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: f})
		ta.mustFail(CodeValidation, w, &CreatePortfolioCard{CardID: "card-bad", Address: addrs[1], CardFields: f})
		ta.mustFail(CodeValidation, ta.owner, &CreatePortfolioCard{CardID: "card-bad", Address: addrs[1], CardFields: f})
	}
}

func TestPatchCardWithExpectedVersion(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	v1 := card.Version

	events := len(ta.a.Audit)
	res := ta.mustOK(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: v1, CardFields: CardFields{Name: ptr("Renamed")}})
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	updated := cardOf(t, res)
	if updated.Version == v1 || updated.Name != "Renamed" || updated.Note != "" || updated.ColorKey != defaultColorKey || updated.Address != addrs[0] || updated.ID != card.ID {
		t.Fatalf("patched card %+v (old version %s)", updated, v1)
	}
	if updated.EffectiveAccess != LevelWrite || len(ta.a.Audit) != events+1 {
		t.Fatalf("patched view access %v events %d", updated.EffectiveAccess, len(ta.a.Audit)-events)
	}
	// The old version is now stale: nothing changes.
	ta.mustFail(CodeStaleVersion, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: v1, CardFields: CardFields{Name: ptr("Lost update")}})
	ta.mustFail(CodeStaleVersion, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: "", CardFields: CardFields{Name: ptr("x")}})
	ta.mustFail(CodeStaleVersion, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: "v999", CardFields: CardFields{Name: ptr("x")}})
	if got := ta.card(card.ID); got.Name != "Renamed" {
		t.Fatalf("stale patch changed the name to %q", got.Name)
	}
	// Only sent fields change; every accepted patch gets a new version.
	again := cardOf(t, ta.mustOK(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: updated.Version, CardFields: CardFields{Note: ptr("n"), ColorKey: ptr("pink")}}))
	if again.Name != "Renamed" || again.Note != "n" || again.ColorKey != "pink" || again.Version == updated.Version || again.Version == v1 {
		t.Fatalf("second patch %+v", again)
	}
	got := cardOf(t, ta.mustQuery(ta.keyCred(w), GetPortfolioCardQuery{CardID: card.ID}))
	if got != again {
		t.Fatalf("GET %+v differs from the PATCH result %+v", got, again)
	}
	// The owner edits with the same version rule.
	ta.mustFail(CodeStaleVersion, ta.owner, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: updated.Version, CardFields: CardFields{Name: ptr("o")}})
	ta.mustOK(ta.owner, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: again.Version, CardFields: CardFields{Name: ptr("o")}})
}

func TestDeleteCardWithExpectedVersion(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	other := ta.createCard(w, addrs[1])
	edited := cardOf(t, ta.mustOK(w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("n")}}))

	ta.mustFail(CodeStaleVersion, w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version})
	ta.mustFail(CodeStaleVersion, w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: ""})
	res := ta.mustOK(w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: edited.Version})
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != `{"deleted":true}` {
		t.Fatalf("delete result %d %s", res.Status, got)
	}
	if ta.card(card.ID) != nil || ta.card(other.ID) == nil || len(ta.a.Portfolio) != 1 {
		t.Fatalf("portfolio after delete: %v", ta.portfolioIDs())
	}
	wantCode(t, ta.query(ta.keyCred(w), GetPortfolioCardQuery{CardID: card.ID}), CodeNotFound)
	ta.mustFail(CodeNotFound, w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: edited.Version})
	ta.mustFail(CodeNotFound, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: edited.Version, CardFields: CardFields{Name: ptr("x")}})
	// The address is free again, and a re-created card gets a new version.
	again := ta.createCard(w, addrs[0])
	if again.Version == card.Version || again.Version == edited.Version {
		t.Fatalf("re-created card reuses version %s", again.Version)
	}
}

func TestReadOnlyKeyIsForbiddenOnEveryWrite(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	card := ta.createCard(w, addrs[0]) // grant write
	writes := []Payload{
		&CreatePortfolioCard{CardID: "card-r", Address: addrs[1]},
		&UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("x")}},
		&DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version},
		// Refused before anything else is looked at: a missing card,
		// a stale version or a bad field is still 403.
		&UpdatePortfolioCard{CardID: "card-missing", ExpectedVersion: "v1"},
		&DeletePortfolioCard{CardID: card.ID, ExpectedVersion: "stale"},
		&CreatePortfolioCard{CardID: "card-r", Address: "garbage"},
	}
	for _, p := range writes {
		err := ta.mustFail(CodeForbidden, r, p)
		if *err != *errReadOnlyKey {
			t.Fatalf("%T: %v, want the read-only key error", p, err)
		}
	}
	wantCode(t, ta.query(ta.keyCred(r), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: addrs[1]}}), CodeForbidden)
	// Reads still work.
	if got := cardOf(t, ta.mustQuery(ta.keyCred(r), GetPortfolioCardQuery{CardID: card.ID})); got.EffectiveAccess != LevelRead {
		t.Fatalf("read key effective access %v", got.EffectiveAccess)
	}
}

func TestWriteKeyOnReadGrantedCardIsForbidden(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	ta.setGrant(card.ID, LevelRead)
	for _, p := range []Payload{
		&UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("x")}},
		&DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version},
	} {
		err := ta.mustFail(CodeForbidden, w, p)
		if *err != *errNotWritable {
			t.Fatalf("%T: %v, want the grant error", p, err)
		}
	}
	if got := cardOf(t, ta.mustQuery(ta.keyCred(w), GetPortfolioCardQuery{CardID: card.ID})); got.EffectiveAccess != LevelRead {
		t.Fatalf("write key on a read card sees %v", got.EffectiveAccess)
	}
}

func TestNoneGrantedCardIsNotFound(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	card := ta.createCard(w, addrs[0])
	ta.setGrant(card.ID, LevelNone)

	absentGet := ta.query(ta.keyCred(w), GetPortfolioCardQuery{CardID: "card-absent"}).err
	for _, cred := range []Credential{ta.keyCred(w), ta.keyCred(r)} {
		err := wantCode(t, ta.query(cred, GetPortfolioCardQuery{CardID: card.ID}), CodeNotFound)
		// A hidden card answers exactly like a card that does not exist.
		if *err != *absentGet {
			t.Fatalf("hidden card error %v differs from absent card error %v", err, absentGet)
		}
		mustNotMention(t, "not found error", err.Message, card.ID, card.Address)
	}
	absentPatch := ta.apply(w, &UpdatePortfolioCard{CardID: "card-absent", ExpectedVersion: card.Version}).err
	err := ta.mustFail(CodeNotFound, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("x")}})
	if *err != *absentPatch {
		t.Fatalf("hidden patch %v differs from absent patch %v", err, absentPatch)
	}
	// Even a stale version on a hidden card says only NOT_FOUND.
	ta.mustFail(CodeNotFound, w, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: "v0", CardFields: CardFields{Name: ptr("x")}})
	ta.mustFail(CodeNotFound, w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version})
	ta.mustFail(CodeNotFound, w, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: "v0"})
	// The owner still reaches it.
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version})
}

func TestEffectiveAccessIsTheLowerOfCapabilityAndGrant(t *testing.T) {
	levels := []Level{LevelNone, LevelRead, LevelWrite}
	for _, capability := range levels {
		for _, grant := range levels {
			want := capability
			if grant < want {
				want = grant
			}
			if got := EffectiveAccess(capability, grant); got != want {
				t.Fatalf("EffectiveAccess(%v, %v) = %v, want %v", capability, grant, got, want)
			}
		}
	}

	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	ids := map[Level]string{}
	for i, grant := range levels {
		c := ta.createCard(ta.owner, addrs[i])
		ta.setGrant(c.ID, grant)
		ids[grant] = c.ID
	}
	for _, key := range []Principal{w, r} {
		capability := ta.a.key(key.KeyID).Capability
		list := ta.listFor(ta.keyCred(key))
		seen := map[string]Level{}
		for _, c := range list.Cards {
			seen[c.ID] = c.EffectiveAccess
		}
		for _, grant := range levels {
			want := EffectiveAccess(capability, grant)
			got, listed := seen[ids[grant]]
			if want == LevelNone {
				if listed {
					t.Fatalf("%v key lists a %v card", capability, grant)
				}
				continue
			}
			if !listed || got != want {
				t.Fatalf("%v key on a %v card: listed %v access %v, want %v", capability, grant, listed, got, want)
			}
			one := cardOf(t, ta.mustQuery(ta.keyCred(key), GetPortfolioCardQuery{CardID: ids[grant]}))
			if one.EffectiveAccess != want {
				t.Fatalf("%v key GET on a %v card: %v, want %v", capability, grant, one.EffectiveAccess, want)
			}
		}
	}
	// The owner has write on everything and sees each grant.
	for _, c := range ta.listFor(ta.ownerCred()).Cards {
		if c.EffectiveAccess != LevelWrite || c.Grant == nil || *c.Grant != ta.card(c.ID).Grant {
			t.Fatalf("owner view %+v", c)
		}
	}
}

func TestCardIDMustBeFresh(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	ta.mustFail(CodeConflict, w, &CreatePortfolioCard{CardID: card.ID, Address: addrs[1]})
	ta.mustFail(CodeConflict, w, &CreatePortfolioCard{CardID: "", Address: addrs[1]})
	// Ids are unique across Portfolio and Spaces.
	ta.a.Spaces[0].Cards = append(ta.a.Spaces[0].Cards, &Card{ID: "bookmark-1", Version: ta.a.nextVersion(), Address: addrs[5]})
	ta.mustFail(CodeConflict, w, &CreatePortfolioCard{CardID: "bookmark-1", Address: addrs[1]})
	// A bookmark card's address does not block an Account card.
	ta.mustOK(w, &CreatePortfolioCard{CardID: "card-ok", Address: addrs[5]})
}

func TestOwnerEditsHiddenCards(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	card := ta.createCard(ta.owner, addrs[0])
	v := cardOf(t, ta.mustOK(ta.owner, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("mine")}}))
	if v.Name != "mine" || v.EffectiveAccess != LevelWrite {
		t.Fatalf("owner patch %+v", v)
	}
	// Owner edits do not change the agent grant.
	if ta.card(card.ID).Grant != LevelNone {
		t.Fatalf("grant %v after an owner edit", ta.card(card.ID).Grant)
	}
}

func TestCardPatchMustNameAFieldToChange(t *testing.T) {
	if err := (CardFields{}).RequireChange(); err == nil || err.Code != CodeValidation || !strings.Contains(err.Message, "name, note and color_key") {
		t.Fatalf("an empty PATCH: %v", err)
	}
	empty := ""
	for _, f := range []CardFields{{Name: &empty}, {Note: &empty}, {ColorKey: ptr("teal")}} {
		if err := f.RequireChange(); err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
	}
}

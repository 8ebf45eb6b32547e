package actors

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestMeCountsHiddenResourcesButListsOnlyAccessibleIDs(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	mine := ta.createCard(w, addrs[0])          // write
	hidden := ta.createCard(ta.owner, addrs[1]) // none
	shared := ta.createCard(ta.owner, addrs[2]) // read
	ta.setGrant(shared.ID, LevelRead)

	for _, key := range []Principal{w, r} {
		me := ta.meFor(ta.keyCred(key))
		if me.AccountID != ta.id || me.KeyID != key.KeyID || me.Capability != ta.a.key(key.KeyID).Capability || me.Plan != PlanBase {
			t.Fatalf("/me header %+v", me)
		}
		if me.PortfolioCards != (UsageView{Used: 3, Limit: 10}) || me.BookmarkSpaces != (UsageView{Used: 1, Limit: 1}) {
			t.Fatalf("/me usage cards %+v spaces %+v", me.PortfolioCards, me.BookmarkSpaces)
		}
		if !slices.Equal(me.AccessibleCardIDs, []string{mine.ID, shared.ID}) {
			t.Fatalf("/me card ids %v", me.AccessibleCardIDs)
		}
		if len(me.AccessibleSpaceIDs) != 0 {
			t.Fatalf("/me space ids %v for a space at none", me.AccessibleSpaceIDs)
		}
		body := bodyJSON(t, me)
		mustNotMention(t, "/me", body, hidden.ID, hidden.Address, testFirstSpaceID, "Bitcoin")
		if !strings.Contains(body, `"accessible_space_ids":[]`) {
			t.Fatalf("/me renders no accessible spaces as %s", body)
		}
	}
	owner := ta.meFor(ta.ownerCred())
	if len(owner.AccessibleCardIDs) != 3 || len(owner.AccessibleSpaceIDs) != 1 || owner.KeyID != "" || owner.Capability != LevelWrite {
		t.Fatalf("owner /me %+v", owner)
	}
}

func TestMeRateLimitRemainingIsNull(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	r := ta.addKey(LevelRead)
	b, err := json.Marshal(ta.mustQuery(ta.keyCred(r), MeQuery{}).Body)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		RateLimit  map[string]json.RawMessage `json:"rate_limit"`
		Capability string                     `json:"capability"`
		Plan       string                     `json:"plan"`
		Cards      struct {
			Used  *int `json:"used"`
			Limit *int `json:"limit"`
		} `json:"portfolio_cards"`
		Spaces struct {
			Used  *int `json:"used"`
			Limit *int `json:"limit"`
		} `json:"bookmark_spaces"`
		CardIDs  []string `json:"accessible_card_ids"`
		SpaceIDs []string `json:"accessible_space_ids"`
	}
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	raw, present := decoded.RateLimit["remaining"]
	if !present || string(raw) != "null" || len(decoded.RateLimit) != 1 {
		t.Fatalf("rate_limit is %s in %s", decoded.RateLimit, b)
	}
	if decoded.Capability != "read" || decoded.Plan != "extended" || decoded.Cards.Used == nil || decoded.Cards.Limit == nil || decoded.Spaces.Used == nil || *decoded.Spaces.Limit != 10 {
		t.Fatalf("/me JSON %s", b)
	}
	if decoded.CardIDs == nil || decoded.SpaceIDs == nil {
		t.Fatalf("/me id lists must be arrays, not null: %s", b)
	}
}

func TestListPortfolioScopeAndIncludedIDs(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)

	empty := ta.mustQuery(ta.keyCred(r), ListPortfolioQuery{})
	if got := bodyJSON(t, empty.Body); got != `{"cards":[],"scope":"accessible_portfolio","included_card_ids":[]}` {
		t.Fatalf("empty list %s", got)
	}

	a := ta.createCard(w, addrs[0])
	ta.createCard(ta.owner, addrs[1]) // hidden
	c := ta.createCard(ta.owner, addrs[2])
	ta.setGrant(c.ID, LevelRead)
	d := ta.createCard(w, addrs[3])
	ta.setGrant(d.ID, LevelNone)

	for _, key := range []Principal{w, r} {
		list := ta.listFor(ta.keyCred(key))
		if list.Scope != "accessible_portfolio" {
			t.Fatalf("scope %q", list.Scope)
		}
		var ids []string
		for _, card := range list.Cards {
			ids = append(ids, card.ID)
			if card.Grant != nil {
				t.Fatalf("agent list shows a grant")
			}
		}
		if !slices.Equal(ids, list.IncludedCardIDs) {
			t.Fatalf("included_card_ids %v but cards %v", list.IncludedCardIDs, ids)
		}
		if !slices.Equal(ids, []string{a.ID, c.ID}) {
			t.Fatalf("listed %v, want the accessible cards in stored order", ids)
		}
		if got := bodyJSON(t, list); strings.Contains(got, addrs[1]) || strings.Contains(got, addrs[3]) {
			t.Fatalf("list reveals a hidden address: %s", got)
		}
	}
	owner := ta.listFor(ta.ownerCred())
	if !slices.Equal(owner.IncludedCardIDs, ta.portfolioIDs()) || len(owner.Cards) != 4 {
		t.Fatalf("owner list %v, stored %v", owner.IncludedCardIDs, ta.portfolioIDs())
	}
}

func TestGetPortfolioCardQuery(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	res := ta.mustQuery(ta.keyCred(w), GetPortfolioCardQuery{CardID: card.ID})
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	if got := bodyJSON(t, res.Body); !strings.HasPrefix(got, `{"card":{"id":"`+card.ID+`"`) {
		t.Fatalf("single card response is not wrapped in card: %s", got)
	}
	wantCode(t, ta.query(ta.keyCred(w), GetPortfolioCardQuery{CardID: ""}), CodeNotFound)
}

func TestValidateCreateChangesNothing(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	before := ta.snapshot()
	for range 3 {
		res := ta.mustQuery(ta.keyCred(w), ValidateCreatePortfolioCardQuery{Card: CreatePortfolioCard{Address: addrs[0], CardFields: CardFields{Name: ptr("n"), ColorKey: ptr("blue")}}})
		if got := bodyJSON(t, res.Body); res.Status != 200 || got != `{"valid":true}` {
			t.Fatalf("validate result %d %s", res.Status, got)
		}
	}
	if !bytes.Equal(before, ta.snapshot()) {
		t.Fatalf("validation changed the account")
	}
	// Validation used no capacity: the create still works.
	ta.createCard(w, addrs[0])
}

// A blocked validation answers exactly like the blocked create.
func TestValidateCreateAnswersLikeTheCreate(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	for i := range 9 {
		ta.createCard(ta.owner, addrs[i])
	}
	type attempt struct {
		name string
		who  Principal
		card CreatePortfolioCard
		code Code
	}
	check := func(tc attempt) {
		t.Helper()
		q := ta.query(ta.keyCred(tc.who), ValidateCreatePortfolioCardQuery{Card: tc.card})
		create := tc.card
		create.CardID = "card-probe"
		c := ta.apply(tc.who, &create)
		if tc.code == "" {
			if q.err != nil || c.err != nil {
				t.Fatalf("%s: validate %v create %v, want both to pass", tc.name, q.err, c.err)
			}
			return
		}
		wantCode(t, q, tc.code)
		wantCode(t, c, tc.code)
		if *q.err != *c.err {
			t.Fatalf("%s: validate says %v, create says %v", tc.name, q.err, c.err)
		}
	}
	for _, tc := range []attempt{
		{"read-only key", r, CreatePortfolioCard{Address: addrs[9]}, CodeForbidden},
		{"duplicate of a hidden card", w, CreatePortfolioCard{Address: addrs[0]}, CodeDuplicateAddress},
		{"invalid address", w, CreatePortfolioCard{Address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"}, CodeValidation},
		{"bad color", w, CreatePortfolioCard{Address: addrs[9], CardFields: CardFields{ColorKey: ptr("red")}}, CodeValidation},
		{"bad name", w, CreatePortfolioCard{Address: addrs[9], CardFields: CardFields{Name: ptr("a\nb")}}, CodeValidation},
		{"under the limit", w, CreatePortfolioCard{Address: addrs[9]}, ""},
		{"full", w, CreatePortfolioCard{Address: addrs[10]}, CodeOverviewFull},
		{"read-only key when full", r, CreatePortfolioCard{Address: addrs[10]}, CodeForbidden},
	} {
		check(tc)
	}
}

func TestQueriesOnlyAuthenticateAndRead(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	ta.createCard(w, addrs[0])
	before := ta.snapshot()
	bad := ta.keyCred(w)
	bad.Hash = hashOf("wrong")
	for _, q := range []Query{AuthQuery{}, MeQuery{}, ListPortfolioQuery{}, GetPortfolioCardQuery{CardID: "x"}, ValidateCreatePortfolioCardQuery{}, ListKeysQuery{}, PasswordHashQuery{}} {
		wantCode(t, ta.query(bad, q), CodeUnauthorized)
		ta.query(ta.keyCred(w), q)
		ta.query(ta.ownerCred(), q)
	}
	if !bytes.Equal(before, ta.snapshot()) {
		t.Fatalf("queries changed the account")
	}
}

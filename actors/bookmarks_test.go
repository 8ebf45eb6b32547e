package actors

import (
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// altcoinAddrs holds one published valid address per listed coin (the
// vectors of chain/altcoin_test.go), each already in canonical form.
var altcoinAddrs = map[string]string{
	"bitcoin-cash": "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a",
	"dogecoin":     "DEQU7G2Chw4r1gSKZt2GfKBpGbkbQSwp3S",
	"ethereum":     "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
	"litecoin":     "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA",
	"solana":       "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
	"tron":         "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH",
	"xrp":          "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh",
}

// Every listed coin has a fixture here, and every fixture is valid and
// canonical, so the tests below cover the whole registry.
func TestAltcoinFixturesCoverTheRegistry(t *testing.T) {
	coins := chain.Coins()
	if len(coins) != len(altcoinAddrs) {
		t.Fatalf("registry lists %d coins, fixtures cover %d", len(coins), len(altcoinAddrs))
	}
	for _, c := range coins {
		a, listed := altcoinAddrs[c.ID]
		if !listed {
			t.Fatalf("no fixture for coin %s", c.ID)
		}
		if got, err := c.Validate(a); err != nil || got != a {
			t.Fatalf("fixture %s for %s: %q, %v", a, c.ID, got, err)
		}
	}
}

// bookmarkAccount is an extended-plan account with a write key, a read
// key, and three write-granted Spaces: the first (bitcoin), an altcoin and
// a sheet Space.
func bookmarkAccount(t *testing.T) (ta *testAccount, w, r Principal, alt, sheet string) {
	t.Helper()
	ta, w, r = extendedWithWriter(t)
	alt = ta.createSpace(w, "Alt", SpaceAltcoin).ID
	sheet = ta.createSpace(w, "Sheet", SpaceSheet).ID
	return ta, w, r, alt, sheet
}

func TestCreateBookmarkCardResult(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	before := ta.spaceVersion(testFirstSpaceID)
	res := ta.mustOK(w, &CreateBookmarkCard{CardID: "card-b", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: before, Address: strings.ToUpper(addrs[1]),
		CardFields: CardFields{Name: ptr("Cold"), Note: ptr("two\nlines"), ColorKey: ptr("teal")}})
	env := bodyAs[BookmarkEnvelope](t, res)
	card := ta.bookmarkCard(testFirstSpaceID, "card-b")
	want := CardView{ID: "card-b", Version: versionString(card.Version), EffectiveAccess: LevelWrite, Address: addrs[1], Name: "Cold", Note: "two\nlines", ColorKey: "teal"}
	if res.Status != 201 || env.Card != want {
		t.Fatalf("create: %d %+v, want %+v", res.Status, env.Card, want)
	}
	if env.Space != (SpaceRef{ID: testFirstSpaceID, Version: ta.spaceVersion(testFirstSpaceID)}) || env.Space.Version == before {
		t.Fatalf("envelope space %+v (was %s)", env.Space, before)
	}
	if card.Grant != LevelNone || card.CoinID != "" || card.CreatedAt != ta.at {
		t.Fatalf("stored card %+v", card)
	}
	if body := bodyJSON(t, res.Body); strings.Contains(body, `"grant"`) || strings.Contains(body, `"coin_id"`) {
		t.Fatalf("bitcoin bookmark body %s", body)
	}
	want = CardView{ID: "card-a", EffectiveAccess: LevelWrite, Address: altcoinAddrs["ethereum"], ColorKey: defaultColorKey, CoinID: "ethereum"}
	res = ta.mustOK(w, &CreateBookmarkCard{CardID: "card-a", SpaceID: alt, ExpectedSpaceVersion: ta.spaceVersion(alt), Address: strings.ToLower(altcoinAddrs["ethereum"]), CoinID: ptr("ethereum")})
	got := bodyAs[BookmarkEnvelope](t, res).Card
	want.Version = got.Version
	if got != want || !strings.Contains(bodyJSON(t, res.Body), `"coin_id":"ethereum"`) {
		t.Fatalf("altcoin create %+v, want %+v", got, want)
	}
	ev := lastEvent(t, ta)
	if ev.Kind != EventCardsChanged || ev.Resource != (ResourceRef{Kind: ResourceBookmarkCard, ID: "card-a", SpaceID: alt}) || ev.Principal != w {
		t.Fatalf("create event %+v", ev)
	}
	// Card ids are account-wide.
	p := ta.createCard(w, addrs[4])
	ta.mustFail(CodeConflict, w, &CreateBookmarkCard{CardID: p.ID, SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[5]})
	ta.mustFail(CodeConflict, w, &CreateBookmarkCard{CardID: "card-a", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[5]})
	ta.mustFail(CodeConflict, w, &CreateBookmarkCard{CardID: "", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[5]})
}

func TestListBookmarksCarriesTheSpaceVersion(t *testing.T) {
	ta, w, r, _, _ := bookmarkAccount(t)
	list := bodyAs[BookmarkListView](t, ta.mustQuery(ta.keyCred(w), ListBookmarksQuery{SpaceID: testFirstSpaceID}))
	if list.Space.Version != ta.spaceVersion(testFirstSpaceID) || list.Space.ID != testFirstSpaceID || len(list.Cards) != 0 || list.Cards == nil {
		t.Fatalf("empty list %+v", list)
	}
	if got := bodyJSON(t, list); !strings.Contains(got, `"cards":[]`) || !strings.Contains(got, `"space":{"id":"`+testFirstSpaceID+`","version":"`+list.Space.Version+`"`) {
		t.Fatalf("empty list encodes as %s", got)
	}
	c1 := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{Name: ptr("one")})
	c2 := ta.addBookmark(ta.owner, testFirstSpaceID, addrs[1], nil, CardFields{Name: ptr("two")})
	for _, tc := range []struct {
		cred   Credential
		access Level
	}{{ta.keyCred(w), LevelWrite}, {ta.keyCred(r), LevelRead}, {ta.ownerCred(), LevelWrite}} {
		list = bodyAs[BookmarkListView](t, ta.mustQuery(tc.cred, ListBookmarksQuery{SpaceID: testFirstSpaceID}))
		if list.Space.Version != ta.spaceVersion(testFirstSpaceID) || list.Space.EffectiveAccess != tc.access || len(list.Cards) != 2 {
			t.Fatalf("list %+v", list)
		}
		for i, want := range []CardView{c1, c2} {
			want.EffectiveAccess = tc.access
			if list.Cards[i] != want {
				t.Fatalf("listed card %+v, want %+v", list.Cards[i], want)
			}
		}
	}
	// The listed version is what the next create needs.
	ta.mustOK(w, &CreateBookmarkCard{CardID: "card-next", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: list.Space.Version, Address: addrs[2]})
}

func TestCreateBookmarkNeedsTheCurrentSpaceVersion(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	stale := ta.spaceVersion(testFirstSpaceID)
	ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	for _, v := range []string{stale, "", "v0", ta.spaceVersion(alt)} {
		c := CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: v, Address: addrs[1]}
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeStaleVersion, p, &c)
		}
		wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeStaleVersion)
	}
	// Another Space's change does not make this one stale.
	current := ta.spaceVersion(testFirstSpaceID)
	ta.addBookmark(w, alt, "x", ptr(chain.UnknownCoinID), CardFields{})
	ta.mustOK(w, &CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: current, Address: addrs[1]})
}

func TestBitcoinSpaceTakesBitcoinAddressesOnly(t *testing.T) {
	ta, w, _, _, _ := bookmarkAccount(t)
	create := func(address string, coin *string) CreateBookmarkCard {
		return CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: address, CoinID: coin}
	}
	bad := []string{"", "garbage", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", " " + addrs[0]}
	for _, a := range altcoinAddrs {
		bad = append(bad, a)
	}
	for _, a := range bad {
		c := create(a, nil)
		err := ta.mustFail(CodeValidation, w, &c)
		if a != "" {
			mustNotMention(t, "bitcoin address error", err.Message, strings.TrimSpace(a))
		}
		wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeValidation)
	}
	// A coin_id is refused in a bitcoin Space, whatever its value.
	for _, coin := range []string{"bitcoin", chain.UnknownCoinID, "ethereum", ""} {
		c := create(addrs[0], ptr(coin))
		ta.mustFail(CodeValidation, w, &c)
		ta.mustFail(CodeValidation, ta.owner, &c)
		wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeValidation)
	}
	// Every kind of mainnet address, stored canonically: bech32 in any
	// single case, base58 exactly as written (its case is significant).
	for _, a := range addrs[:4] {
		in := a
		if strings.HasPrefix(a, "bc1") {
			in = strings.ToUpper(a)
		}
		v := ta.addBookmark(w, testFirstSpaceID, in, nil, CardFields{})
		if v.Address != a || ta.bookmarkCard(testFirstSpaceID, v.ID).Address != a {
			t.Fatalf("address %s stored as %s", in, v.Address)
		}
	}
	c := create(strings.ToUpper(addrs[4]), nil) // upper-cased base58 is another (invalid) string
	ta.mustFail(CodeValidation, w, &c)
}

func TestAltcoinSpaceCards(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	create := func(address string, coin *string) CreateBookmarkCard {
		return CreateBookmarkCard{CardID: "card-x", SpaceID: alt, ExpectedSpaceVersion: ta.spaceVersion(alt), Address: address, CoinID: coin}
	}
	refuse := func(what string, c CreateBookmarkCard) {
		t.Helper()
		t.Logf("refuse: %s", what)
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeValidation, p, &c)
		}
		wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeValidation)
	}
	// coin_id is required.
	refuse("no coin", create(altcoinAddrs["ethereum"], nil))
	refuse("no coin, bitcoin address", create(addrs[0], nil))
	// Unsupported coin ids.
	for _, coin := range []string{"bitcoin", "btc", "Ethereum", "ETHEREUM", "eth", "monero", "", " ethereum", "unknown ", "Unknown"} {
		refuse("coin "+coin, create(altcoinAddrs["ethereum"], ptr(coin)))
	}
	// Invalid addresses for a listed coin, including other coins' addresses.
	for _, c := range chain.Coins() {
		for other, a := range altcoinAddrs {
			if other != c.ID {
				refuse(c.ID+" with a "+other+" address", create(a, ptr(c.ID)))
			}
		}
		refuse(c.ID+" with a bitcoin address", create(addrs[0], ptr(c.ID)))
		refuse(c.ID+" empty", create("", ptr(c.ID)))
		refuse(c.ID+" padded", create(" "+altcoinAddrs[c.ID], ptr(c.ID)))
	}
	refuse("ethereum bad checksum", create("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", ptr("ethereum")))
	// "unknown" needs safe text.
	for _, text := range []string{"", " lead", "trail ", "<script>", "a&b", `q"uote`, "back`tick", `back\slash`, "new\nline", "tab\there", "zero\u200bwidth", "bidi\u202e", strings.Repeat("x", 129), "bad\xff"} {
		refuse("unknown "+text, create(text, ptr(chain.UnknownCoinID)))
	}

	// Each listed coin with a valid address is accepted and keeps its coin.
	for _, c := range chain.Coins() {
		v := ta.addBookmark(w, alt, altcoinAddrs[c.ID], ptr(c.ID), CardFields{Name: ptr(c.Name)})
		stored := ta.bookmarkCard(alt, v.ID)
		if v.CoinID != c.ID || v.Address != altcoinAddrs[c.ID] || stored.CoinID != c.ID || stored.Address != altcoinAddrs[c.ID] {
			t.Fatalf("%s card %+v stored %+v", c.ID, v, stored)
		}
	}
	// "unknown" with safe text, kept as given.
	alt2 := ta.createSpace(w, "Alt 2", SpaceAltcoin).ID
	for _, text := range []string{"kaspa:qz0c-some-address", "Zcash zs1 shielded", "адрес-1", strings.Repeat("y", 128), "a"} {
		v := ta.addBookmark(w, alt2, text, ptr(chain.UnknownCoinID), CardFields{})
		if v.CoinID != chain.UnknownCoinID || v.Address != text {
			t.Fatalf("unknown card %+v", v)
		}
	}
	// Validation passes for a fresh valid card, too.
	res := ta.mustQuery(ta.keyCred(w), ValidateBookmarkQuery{Card: create("something-new", ptr(chain.UnknownCoinID))})
	if bodyJSON(t, res.Body) != `{"valid":true}` {
		t.Fatalf("validate %s", bodyJSON(t, res.Body))
	}
}

func TestSheetSpaceRefusesCards(t *testing.T) {
	ta, w, _, _, sheet := bookmarkAccount(t)
	for _, coin := range []*string{nil, ptr("ethereum"), ptr(chain.UnknownCoinID)} {
		for _, a := range []string{addrs[0], altcoinAddrs["ethereum"]} {
			c := CreateBookmarkCard{CardID: "card-x", SpaceID: sheet, ExpectedSpaceVersion: ta.spaceVersion(sheet), Address: a, CoinID: coin}
			ta.mustFail(CodeValidation, w, &c)
			ta.mustFail(CodeValidation, ta.owner, &c)
			wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeValidation)
		}
	}
}

func TestDuplicateAddressWithinASpace(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	second := ta.createSpace(w, "Second", SpaceBitcoin).ID
	alt2 := ta.createSpace(ta.owner, "Alt hidden", SpaceAltcoin).ID // grant none

	ta.addBookmark(w, testFirstSpaceID, addrs[1], nil, CardFields{Name: ptr("Vault")})
	for _, a := range []string{addrs[1], strings.ToUpper(addrs[1])} {
		c := CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: a}
		err := ta.mustFail(CodeDuplicateAddress, w, &c)
		mustNotMention(t, "duplicate error", err.Message, addrs[1], "Vault")
		ta.mustFail(CodeDuplicateAddress, ta.owner, &c)
		wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeDuplicateAddress)
	}
	// The same address in another Space, and in Portfolio, is fine.
	ta.addBookmark(w, second, addrs[1], nil, CardFields{})
	ta.createCard(w, addrs[1])

	ta.addBookmark(w, alt, altcoinAddrs["ethereum"], ptr("ethereum"), CardFields{})
	ta.addBookmark(w, alt, "same-text", ptr(chain.UnknownCoinID), CardFields{})
	for _, tc := range []struct{ coin, address string }{
		{"ethereum", altcoinAddrs["ethereum"]},
		{"ethereum", strings.ToLower(altcoinAddrs["ethereum"])}, // same canonical form
		{chain.UnknownCoinID, "same-text"},
	} {
		c := CreateBookmarkCard{CardID: "card-x", SpaceID: alt, ExpectedSpaceVersion: ta.spaceVersion(alt), Address: tc.address, CoinID: ptr(tc.coin)}
		ta.mustFail(CodeDuplicateAddress, w, &c)
		wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeDuplicateAddress)
	}
	ta.addBookmark(ta.owner, alt2, altcoinAddrs["ethereum"], ptr("ethereum"), CardFields{})
	ta.addBookmark(ta.owner, alt2, "same-text", ptr(chain.UnknownCoinID), CardFields{})
	// A duplicate is the same coin and address: the same text under
	// another coin is another card.
	ta.addBookmark(w, alt, altcoinAddrs["ethereum"], ptr(chain.UnknownCoinID), CardFields{})
}

func TestBookmarkFull(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	limit := PlanExtended.limits().spaceCardsMax
	if limit != 10 {
		t.Fatalf("space card limit %d, the spec says 10", limit)
	}
	for i := range limit {
		p := w
		if i%2 == 0 {
			p = ta.owner
		}
		ta.addBookmark(p, testFirstSpaceID, addrs[i], nil, CardFields{})
	}
	c := CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[limit]}
	ta.mustFail(CodeBookmarkFull, w, &c)
	ta.mustFail(CodeBookmarkFull, ta.owner, &c)
	wantCode(t, ta.query(ta.keyCred(w), ValidateBookmarkQuery{Card: c}), CodeBookmarkFull)
	// A full Space does not limit another one.
	ta.addBookmark(w, alt, "x", ptr(chain.UnknownCoinID), CardFields{})
	// Deleting a card makes room.
	first := ta.storedSpace(testFirstSpaceID).Cards[0]
	ta.mustOK(w, &DeleteBookmarkCard{SpaceID: testFirstSpaceID, CardID: first.ID, ExpectedVersion: versionString(first.Version)})
	ta.addBookmark(w, testFirstSpaceID, addrs[limit], nil, CardFields{})
	ta.mustFail(CodeBookmarkFull, w, &CreateBookmarkCard{CardID: "card-y", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[limit+1]})
	// The same on the base plan.
	tb := newTestAccount(t, PlanBase)
	for i := range limit {
		tb.addBookmark(tb.owner, testFirstSpaceID, addrs[i], nil, CardFields{})
	}
	tb.mustFail(CodeBookmarkFull, tb.owner, &CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: tb.spaceVersion(testFirstSpaceID), Address: addrs[limit]})
}

func TestBookmarkCardsInheritTheSpaceGrant(t *testing.T) {
	ta, w, r, _, _ := bookmarkAccount(t)
	card := ta.addBookmark(ta.owner, testFirstSpaceID, addrs[0], nil, CardFields{Name: ptr("Secret")})
	get := GetBookmarkQuery{SpaceID: testFirstSpaceID, CardID: card.ID}
	list := ListBookmarksQuery{SpaceID: testFirstSpaceID}
	writes := func() []Payload {
		v := ta.bookmarkCard(testFirstSpaceID, card.ID)
		return []Payload{
			&CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[1]},
			&UpdateBookmarkCard{SpaceID: testFirstSpaceID, CardID: card.ID, ExpectedVersion: versionString(v.Version), CardFields: CardFields{Name: ptr("x")}},
			&DeleteBookmarkCard{SpaceID: testFirstSpaceID, CardID: card.ID, ExpectedVersion: versionString(v.Version)},
		}
	}
	validate := ValidateBookmarkQuery{Card: CreateBookmarkCard{SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[1]}}

	// write: the write key sees write, the read key read.
	for _, tc := range []struct {
		key    Principal
		access Level
	}{{w, LevelWrite}, {r, LevelRead}} {
		if got := bodyAs[BookmarkEnvelope](t, ta.mustQuery(ta.keyCred(tc.key), get)); got.Card.EffectiveAccess != tc.access || got.Card.Name != "Secret" {
			t.Fatalf("%s sees %+v", tc.key.KeyID, got.Card)
		}
	}
	for _, p := range writes() {
		ta.mustFail(CodeForbidden, r, p)
	}
	wantCode(t, ta.query(ta.keyCred(r), validate), CodeForbidden)

	// read: both keys read; writes are refused with 403.
	ta.grantSpace(testFirstSpaceID, LevelRead)
	for _, key := range []Principal{w, r} {
		got := bodyAs[BookmarkEnvelope](t, ta.mustQuery(ta.keyCred(key), get))
		l := bodyAs[BookmarkListView](t, ta.mustQuery(ta.keyCred(key), list))
		if got.Card.EffectiveAccess != LevelRead || len(l.Cards) != 1 || l.Cards[0].EffectiveAccess != LevelRead || l.Space.EffectiveAccess != LevelRead {
			t.Fatalf("%s at read: %+v %+v", key.KeyID, got, l)
		}
		for _, p := range writes() {
			ta.mustFail(CodeForbidden, key, p)
		}
		wantCode(t, ta.query(ta.keyCred(key), validate), CodeForbidden)
	}

	// none: hidden (404) for the write key; the read-only key is refused
	// any write first (403).
	ta.grantSpace(testFirstSpaceID, LevelNone)
	for _, key := range []Principal{w, r} {
		wantCode(t, ta.query(ta.keyCred(key), get), CodeNotFound)
		wantCode(t, ta.query(ta.keyCred(key), list), CodeNotFound)
	}
	for _, p := range writes() {
		ta.mustFail(CodeNotFound, w, p)
		ta.mustFail(CodeForbidden, r, p)
	}
	wantCode(t, ta.query(ta.keyCred(w), validate), CodeNotFound)
	wantCode(t, ta.query(ta.keyCred(r), validate), CodeForbidden)

	// The owner needs no grant.
	ta.mustQuery(ta.ownerCred(), get)
	for _, p := range writes()[:2] {
		ta.mustOK(ta.owner, p)
	}
	// An unknown card, or a card asked for under another Space, is absent.
	ta.grantSpace(testFirstSpaceID, LevelWrite)
	wantCode(t, ta.query(ta.keyCred(w), GetBookmarkQuery{SpaceID: testFirstSpaceID, CardID: "card-unknown"}), CodeNotFound)
	other := ta.createSpace(w, "Other", SpaceBitcoin)
	wantCode(t, ta.query(ta.keyCred(w), GetBookmarkQuery{SpaceID: other.ID, CardID: card.ID}), CodeNotFound)
	ta.mustFail(CodeNotFound, w, &UpdateBookmarkCard{SpaceID: other.ID, CardID: card.ID, ExpectedVersion: versionString(ta.bookmarkCard(testFirstSpaceID, card.ID).Version), CardFields: CardFields{Name: ptr("x")}})
}

func TestValidateBookmarkChangesNothing(t *testing.T) {
	ta, w, r, alt, sheet := bookmarkAccount(t)
	ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	hidden := ta.createSpace(ta.owner, "Hidden", SpaceBitcoin).ID
	readOnly := ta.createSpace(ta.owner, "Read", SpaceBitcoin).ID
	ta.grantSpace(readOnly, LevelRead)
	full := ta.createSpace(w, "Full", SpaceBitcoin).ID
	for i := range 10 {
		ta.addBookmark(w, full, addrs[i], nil, CardFields{})
	}
	v := func(space, address string, coin *string) CreateBookmarkCard {
		return CreateBookmarkCard{SpaceID: space, ExpectedSpaceVersion: ta.spaceVersion(space), Address: address, CoinID: coin}
	}
	stale := v(testFirstSpaceID, addrs[1], nil)
	stale.ExpectedSpaceVersion = "v1"
	cases := []struct {
		key  Principal
		card CreateBookmarkCard
		code Code
	}{
		{w, v(testFirstSpaceID, addrs[1], nil), ""},
		{w, v(alt, altcoinAddrs["xrp"], ptr("xrp")), ""},
		{r, v(testFirstSpaceID, addrs[1], nil), CodeForbidden},
		{w, v(hidden, addrs[1], nil), CodeNotFound},
		{w, CreateBookmarkCard{SpaceID: "space-unknown", Address: addrs[1]}, CodeNotFound},
		{w, v(readOnly, addrs[1], nil), CodeForbidden},
		{w, stale, CodeStaleVersion},
		{w, v(testFirstSpaceID, "nope", nil), CodeValidation},
		{w, v(testFirstSpaceID, addrs[1], ptr("ethereum")), CodeValidation},
		{w, v(alt, altcoinAddrs["xrp"], nil), CodeValidation},
		{w, v(alt, altcoinAddrs["xrp"], ptr("ripple")), CodeValidation},
		{w, v(sheet, addrs[1], nil), CodeValidation},
		{w, CreateBookmarkCard{SpaceID: testFirstSpaceID, ExpectedSpaceVersion: ta.spaceVersion(testFirstSpaceID), Address: addrs[1], CardFields: CardFields{ColorKey: ptr("black")}}, CodeValidation},
		{w, v(testFirstSpaceID, addrs[0], nil), CodeDuplicateAddress},
		{w, v(full, addrs[11], nil), CodeBookmarkFull},
	}
	before := ta.snapshot()
	for i, tc := range cases {
		res := ta.query(ta.keyCred(tc.key), ValidateBookmarkQuery{Card: tc.card})
		if tc.code == "" {
			if res.err != nil || res.Status != 200 || bodyJSON(t, res.Body) != `{"valid":true}` {
				t.Fatalf("case %d: validate %+v", i, res)
			}
		} else {
			wantCode(t, res, tc.code)
		}
		if after := ta.snapshot(); string(after) != string(before) {
			t.Fatalf("case %d: validation changed the account", i)
		}
		// The matching write answers the same.
		c := tc.card
		c.CardID = "card-write"
		if tc.code == "" {
			continue
		}
		ta.mustFail(tc.code, tc.key, &c)
		before = ta.snapshot()
	}
}

func TestPatchBookmarkCard(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	card := ta.addBookmark(w, alt, altcoinAddrs["solana"], ptr("solana"), CardFields{Name: ptr("old")})
	spaceBefore := ta.spaceVersion(alt)
	for _, v := range []string{"", "v0", spaceBefore} {
		ta.mustFail(CodeStaleVersion, w, &UpdateBookmarkCard{SpaceID: alt, CardID: card.ID, ExpectedVersion: v, CardFields: CardFields{Name: ptr("new")}})
	}
	ta.mustFail(CodeValidation, w, &UpdateBookmarkCard{SpaceID: alt, CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{ColorKey: ptr("black")}})
	ta.mustFail(CodeValidation, w, &UpdateBookmarkCard{SpaceID: alt, CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("a\x00b")}})
	ta.mustFail(CodeNotFound, w, &UpdateBookmarkCard{SpaceID: alt, CardID: "card-unknown", ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("new")}})

	res := ta.mustOK(w, &UpdateBookmarkCard{SpaceID: alt, CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("new"), Note: ptr("note"), ColorKey: ptr("pink")}})
	env := bodyAs[BookmarkEnvelope](t, res)
	want := CardView{ID: card.ID, Version: versionString(ta.bookmarkCard(alt, card.ID).Version), EffectiveAccess: LevelWrite, Address: card.Address, Name: "new", Note: "note", ColorKey: "pink", CoinID: "solana"}
	if res.Status != 200 || env.Card != want || env.Card.Version == card.Version {
		t.Fatalf("patch %d %+v, want %+v", res.Status, env.Card, want)
	}
	if env.Space.Version == spaceBefore || env.Space.Version != ta.spaceVersion(alt) {
		t.Fatalf("patch left space version %s (was %s)", env.Space.Version, spaceBefore)
	}
	ev := lastEvent(t, ta)
	if ev.Kind != EventCardsChanged || ev.Resource != (ResourceRef{Kind: ResourceBookmarkCard, ID: card.ID, SpaceID: alt}) {
		t.Fatalf("patch event %+v", ev)
	}
	// The old version is now stale; only sent fields change.
	ta.mustFail(CodeStaleVersion, w, &UpdateBookmarkCard{SpaceID: alt, CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("again")}})
	ta.mustOK(ta.owner, &UpdateBookmarkCard{SpaceID: alt, CardID: card.ID, ExpectedVersion: env.Card.Version, CardFields: CardFields{Note: ptr("")}})
	if c := ta.bookmarkCard(alt, card.ID); c.Name != "new" || c.Note != "" || c.ColorKey != "pink" || c.CoinID != "solana" || c.Address != card.Address {
		t.Fatalf("after a note-only patch %+v", c)
	}
}

func TestDeleteBookmarkCard(t *testing.T) {
	ta, w, _, _, _ := bookmarkAccount(t)
	card := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	keep := ta.addBookmark(w, testFirstSpaceID, addrs[1], nil, CardFields{})
	spaceBefore := ta.spaceVersion(testFirstSpaceID)
	for _, v := range []string{"", "v0", spaceBefore, keep.Version} {
		ta.mustFail(CodeStaleVersion, w, &DeleteBookmarkCard{SpaceID: testFirstSpaceID, CardID: card.ID, ExpectedVersion: v})
	}
	n := len(ta.a.Audit)
	res := ta.mustOK(w, &DeleteBookmarkCard{SpaceID: testFirstSpaceID, CardID: card.ID, ExpectedVersion: card.Version})
	spaceAfter := ta.spaceVersion(testFirstSpaceID)
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != `{"deleted":true}` {
		t.Fatalf("delete %d %s", res.Status, got)
	}
	if spaceAfter == spaceBefore || ta.bookmarkCard(testFirstSpaceID, card.ID) != nil || ta.bookmarkCard(testFirstSpaceID, keep.ID) == nil {
		t.Fatalf("delete: space version %s→%s, cards %+v", spaceBefore, spaceAfter, ta.storedSpace(testFirstSpaceID).Cards)
	}
	if len(ta.a.Audit) != n+1 || lastEvent(t, ta).Kind != EventCardsChanged {
		t.Fatalf("delete events %+v", ta.a.Audit[n:])
	}
	wantCode(t, ta.query(ta.keyCred(w), GetBookmarkQuery{SpaceID: testFirstSpaceID, CardID: card.ID}), CodeNotFound)
	ta.mustFail(CodeNotFound, w, &DeleteBookmarkCard{SpaceID: testFirstSpaceID, CardID: card.ID, ExpectedVersion: card.Version})
	// The freed address may be added again.
	ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
}

func TestSpaceVersionChangesWithEveryCardChange(t *testing.T) {
	ta, w, _, alt, _ := bookmarkAccount(t)
	seen := map[string]bool{}
	check := func(what string) {
		t.Helper()
		v := ta.spaceVersion(testFirstSpaceID)
		if seen[v] {
			t.Fatalf("%s kept or reused space version %s", what, v)
		}
		seen[v] = true
	}
	check("start")
	altVersion := ta.spaceVersion(alt)
	c := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	check("create")
	res := ta.mustOK(w, &UpdateBookmarkCard{SpaceID: testFirstSpaceID, CardID: c.ID, ExpectedVersion: c.Version, CardFields: CardFields{Name: ptr("n")}})
	check("patch")
	c = bodyAs[BookmarkEnvelope](t, res).Card
	res = ta.mustOK(ta.owner, &UpdateBookmarkCard{SpaceID: testFirstSpaceID, CardID: c.ID, ExpectedVersion: c.Version, CardFields: CardFields{}})
	check("empty patch")
	c = bodyAs[BookmarkEnvelope](t, res).Card
	ta.mustOK(w, &DeleteBookmarkCard{SpaceID: testFirstSpaceID, CardID: c.ID, ExpectedVersion: c.Version})
	check("delete")
	if ta.spaceVersion(alt) != altVersion {
		t.Fatalf("another Space's version changed")
	}
	// Failed writes leave it alone (mustFail compares the whole account).
	ta.mustFail(CodeStaleVersion, w, &CreateBookmarkCard{CardID: "card-x", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: "v1", Address: addrs[1]})
}

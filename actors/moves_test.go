package actors

import (
	"fmt"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

type moveDirection string

const (
	spaceToSpace     moveDirection = "space-to-space"
	portfolioToSpace moveDirection = "portfolio-to-space"
	spaceToPortfolio moveDirection = "space-to-portfolio"
)

var allLevels = []Level{LevelNone, LevelRead, LevelWrite}

// moveSourceFields are the editable fields every moved card carries.
var moveSourceFields = CardFields{Name: ptr("Cold vault"), Note: ptr("keep\nsafe"), ColorKey: ptr("teal")}

// moveFixture is an extended-plan account with a bitcoin source Space (the
// first), a bitcoin destination Space, and one owner-created card at the
// source of the given direction, with the given grants.
type moveFixture struct {
	ta       *testAccount
	dir      moveDirection
	src      CardView
	srcSpace string // "" for Portfolio
	dstSpace string // "" for Portfolio
}

const moveDstSpaceID = "space-dst"

func newMoveFixture(t *testing.T, dir moveDirection, srcGrant, dstGrant Level) *moveFixture {
	t.Helper()
	ta := newTestAccount(t, PlanExtended)
	ta.mustOK(ta.owner, &CreateSpace{SpaceID: moveDstSpaceID, ExpectedBookmarkRevision: ta.revision(), Name: "Destination", Type: SpaceBitcoin})
	f := &moveFixture{ta: ta, dir: dir}
	switch dir {
	case spaceToSpace:
		f.srcSpace, f.dstSpace = testFirstSpaceID, moveDstSpaceID
		f.src = ta.addBookmark(ta.owner, testFirstSpaceID, addrs[0], nil, moveSourceFields)
		ta.grantSpace(testFirstSpaceID, srcGrant)
		ta.grantSpace(moveDstSpaceID, dstGrant)
	case portfolioToSpace:
		f.dstSpace = moveDstSpaceID
		res := ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: ta.nextCardID(), Address: addrs[0], CardFields: moveSourceFields})
		f.src = cardOf(t, res)
		ta.setGrant(f.src.ID, srcGrant)
		ta.grantSpace(moveDstSpaceID, dstGrant)
	case spaceToPortfolio:
		f.srcSpace = testFirstSpaceID
		f.src = ta.addBookmark(ta.owner, testFirstSpaceID, addrs[0], nil, moveSourceFields)
		ta.grantSpace(testFirstSpaceID, srcGrant)
		// Portfolio has no grant of its own; vary the grant of a card
		// already there to show it plays no part.
		other := ta.createCard(ta.owner, addrs[1])
		ta.setGrant(other.ID, dstGrant)
	}
	f.src.Version = f.srcVersion()
	return f
}

// srcVersion is the source card's current stored version.
func (f *moveFixture) srcVersion() string {
	if f.srcSpace == "" {
		return versionString(f.ta.card(f.src.ID).Version)
	}
	return versionString(f.ta.bookmarkCard(f.srcSpace, f.src.ID).Version)
}

// move is the move request with current versions.
func (f *moveFixture) move() *MoveCard {
	m := &MoveCard{NewCardID: "card-moved", SourceID: f.src.ID, ExpectedSourceVersion: f.srcVersion()}
	if f.srcSpace == "" {
		m.SourceKind = LocationPortfolio
	} else {
		m.SourceKind, m.SourceSpaceID = LocationBookmark, f.srcSpace
	}
	if f.dstSpace == "" {
		m.DestinationKind = LocationPortfolio
	} else {
		m.DestinationKind, m.DestinationSpaceID = LocationBookmark, f.dstSpace
		m.ExpectedDestinationVersion = ptr(f.ta.spaceVersion(f.dstSpace))
	}
	return m
}

// expectedMoveCode is the spec's answer for an agent's move: a read-only
// key is refused every write (403); then the source is checked (hidden
// 404, read-only 403), then a Space destination (hidden 404, read-only
// 403). Portfolio as a destination needs nothing more.
func expectedMoveCode(dir moveDirection, src, dst, capability Level) Code {
	switch {
	case capability < LevelWrite:
		return CodeForbidden
	case src == LevelNone:
		return CodeNotFound
	case src == LevelRead:
		return CodeForbidden
	case dir == spaceToPortfolio:
		return ""
	case dst == LevelNone:
		return CodeNotFound
	case dst == LevelRead:
		return CodeForbidden
	}
	return ""
}

// checkMoved asserts a successful move: the old ID is gone everywhere, the
// new card is at the destination with every field kept, the versions and
// the response agree.
func (f *moveFixture) checkMoved(t *testing.T, who Principal, res Result, mv *MoveCard, wantAccess Level) MoveView {
	t.Helper()
	ta := f.ta
	if res.Status != 200 {
		t.Fatalf("move status %d", res.Status)
	}
	v := bodyAs[MoveView](t, res)
	if v.OldID != f.src.ID || v.NewID != mv.NewCardID || v.NewID == v.OldID {
		t.Fatalf("move ids old %s new %s", v.OldID, v.NewID)
	}
	if ta.a.cardIDTaken(f.src.ID) {
		t.Fatalf("old id %s still stored", f.src.ID)
	}
	var stored *Card
	if f.dstSpace == "" {
		stored = ta.card(v.NewID)
		if v.Location != (MoveLocation{Kind: LocationPortfolio}) {
			t.Fatalf("location %+v", v.Location)
		}
	} else {
		stored = ta.bookmarkCard(f.dstSpace, v.NewID)
		if v.Location != (MoveLocation{Kind: LocationBookmark, SpaceID: f.dstSpace, SpaceVersion: ta.spaceVersion(f.dstSpace)}) {
			t.Fatalf("location %+v (space version %s)", v.Location, ta.spaceVersion(f.dstSpace))
		}
		if v.Location.SpaceVersion == *mv.ExpectedDestinationVersion {
			t.Fatalf("destination space version did not change")
		}
	}
	if stored == nil {
		t.Fatalf("moved card %s not at the destination", v.NewID)
	}
	if stored.Address != f.src.Address || stored.Name != f.src.Name || stored.Note != f.src.Note || stored.ColorKey != f.src.ColorKey || stored.CoinID != f.src.CoinID {
		t.Fatalf("moved card %+v lost fields of %+v", stored, f.src)
	}
	if v.Card == nil {
		t.Fatalf("move response lacks the card")
	}
	want := CardView{ID: v.NewID, Version: versionString(stored.Version), EffectiveAccess: wantAccess, Address: f.src.Address, Name: f.src.Name, Note: f.src.Note, ColorKey: f.src.ColorKey, CoinID: f.src.CoinID}
	got := *v.Card
	got.Grant = nil
	if got != want {
		t.Fatalf("move card %+v, want %+v", got, want)
	}
	// Only the owner sees a grant, and only Account cards have one.
	if (v.Card.Grant != nil) != (!who.isAgent() && f.dstSpace == "") {
		t.Fatalf("move card grant field %v for %+v", v.Card.Grant, who)
	}
	return v
}

// The full permission matrix: each direction × source grant × destination
// grant × key capability, plus the owner, who needs no grant.
func TestMovePermissionMatrix(t *testing.T) {
	for _, dir := range []moveDirection{spaceToSpace, portfolioToSpace, spaceToPortfolio} {
		for _, src := range allLevels {
			for _, dst := range allLevels {
				for _, capability := range []Level{LevelRead, LevelWrite, LevelNone} { // LevelNone stands for the owner
					who := "key-" + capability.String()
					if capability == LevelNone {
						who = "owner"
					}
					t.Run(fmt.Sprintf("%s/src-%s/dst-%s/%s", dir, src, dst, who), func(t *testing.T) {
						f := newMoveFixture(t, dir, src, dst)
						ta := f.ta
						p, cred := ta.owner, ta.ownerCred()
						want := Code("")
						if capability != LevelNone {
							p = ta.addKey(capability)
							cred = ta.keyCred(p)
							want = expectedMoveCode(dir, src, dst, capability)
						}
						mv := f.move()
						before := ta.snapshot()
						vres := ta.query(cred, ValidateMoveQuery{Move: *mv})
						if want == "" {
							if vres.err != nil || bodyJSON(t, vres.Body) != `{"valid":true}` {
								t.Fatalf("validate: %+v", vres)
							}
						} else {
							wantCode(t, vres, want)
						}
						if string(ta.snapshot()) != string(before) {
							t.Fatalf("validate changed the account")
						}
						if want != "" {
							err := ta.mustFail(want, p, mv)
							mustNotMention(t, "move error", err.Message, f.src.Address, f.src.Name)
							return
						}
						res := ta.mustOK(p, mv)
						access := LevelWrite // the owner, or a write key on a write destination
						f.checkMoved(t, p, res, mv, access)
						// The old ID is absent to the mover; the new one is readable.
						if f.srcSpace == "" {
							wantCode(t, ta.query(cred, GetPortfolioCardQuery{CardID: f.src.ID}), CodeNotFound)
						} else {
							wantCode(t, ta.query(cred, GetBookmarkQuery{SpaceID: f.srcSpace, CardID: f.src.ID}), CodeNotFound)
						}
						if f.dstSpace == "" {
							ta.mustQuery(cred, GetPortfolioCardQuery{CardID: mv.NewCardID})
						} else {
							ta.mustQuery(cred, GetBookmarkQuery{SpaceID: f.dstSpace, CardID: mv.NewCardID})
						}
						// Retrying without a token finds the old ID gone.
						ta.mustFail(CodeNotFound, p, &MoveCard{NewCardID: "card-again", SourceKind: mv.SourceKind, SourceID: mv.SourceID, SourceSpaceID: mv.SourceSpaceID,
							DestinationKind: mv.DestinationKind, DestinationSpaceID: mv.DestinationSpaceID, ExpectedSourceVersion: mv.ExpectedSourceVersion, ExpectedDestinationVersion: mv.ExpectedDestinationVersion})
					})
				}
			}
		}
	}
}

func TestMoveIntoPortfolioGrant(t *testing.T) {
	// By an agent: the new Account card starts at write.
	f := newMoveFixture(t, spaceToPortfolio, LevelWrite, LevelNone)
	w := f.ta.addKey(LevelWrite)
	mv := f.move()
	v := f.checkMoved(t, w, f.ta.mustOK(w, mv), mv, LevelWrite)
	if c := f.ta.card(v.NewID); c.Grant != LevelWrite {
		t.Fatalf("agent move into Portfolio: grant %v", c.Grant)
	}
	r := f.ta.addKey(LevelRead)
	if got := cardOf(t, f.ta.mustQuery(f.ta.keyCred(r), GetPortfolioCardQuery{CardID: v.NewID})); got.EffectiveAccess != LevelRead {
		t.Fatalf("read key sees %+v", got)
	}

	// By the owner: it starts at none, and the agent cannot see it.
	f = newMoveFixture(t, spaceToPortfolio, LevelWrite, LevelNone)
	w = f.ta.addKey(LevelWrite)
	mv = f.move()
	v = f.checkMoved(t, f.ta.owner, f.ta.mustOK(f.ta.owner, mv), mv, LevelWrite)
	if c := f.ta.card(v.NewID); c.Grant != LevelNone || v.Card.Grant == nil || *v.Card.Grant != LevelNone {
		t.Fatalf("owner move into Portfolio: grant %v view %v", c.Grant, v.Card.Grant)
	}
	wantCode(t, f.ta.query(f.ta.keyCred(w), GetPortfolioCardQuery{CardID: v.NewID}), CodeNotFound)

	// Into a Space the card has no grant of its own: it inherits the
	// Space's, whatever the Portfolio card had.
	f = newMoveFixture(t, portfolioToSpace, LevelWrite, LevelRead)
	f.ta.grantSpace(moveDstSpaceID, LevelWrite)
	w = f.ta.addKey(LevelWrite)
	mv = f.move()
	v = f.checkMoved(t, w, f.ta.mustOK(w, mv), mv, LevelWrite)
	if c := f.ta.bookmarkCard(moveDstSpaceID, v.NewID); c.Grant != LevelNone {
		t.Fatalf("bookmark card carries grant %v", c.Grant)
	}
	f.ta.grantSpace(moveDstSpaceID, LevelRead)
	if got := bodyAs[BookmarkEnvelope](t, f.ta.mustQuery(f.ta.keyCred(w), GetBookmarkQuery{SpaceID: moveDstSpaceID, CardID: v.NewID})); got.Card.EffectiveAccess != LevelRead {
		t.Fatalf("moved card access %v under a read Space", got.Card.EffectiveAccess)
	}
}

func TestMoveResponseShape(t *testing.T) {
	f := newMoveFixture(t, spaceToSpace, LevelWrite, LevelWrite)
	w := f.ta.addKey(LevelWrite)
	mv := f.move()
	res := f.ta.mustOK(w, mv)
	stored := f.ta.bookmarkCard(moveDstSpaceID, "card-moved")
	want := `{"old_id":"` + f.src.ID + `","new_id":"card-moved","location":{"kind":"bookmark","space_id":"space-dst","space_version":"` + f.ta.spaceVersion(moveDstSpaceID) + `"},` +
		`"card":{"id":"card-moved","version":"` + versionString(stored.Version) + `","effective_access":"write","address":"` + addrs[0] + `","name":"Cold vault","note":"keep\nsafe","color_key":"teal"}}`
	if got := bodyJSON(t, res.Body); got != want {
		t.Fatalf("move body\n got %s\nwant %s", got, want)
	}

	f = newMoveFixture(t, spaceToPortfolio, LevelWrite, LevelNone)
	w = f.ta.addKey(LevelWrite)
	res = f.ta.mustOK(w, f.move())
	if got := bodyJSON(t, res.Body); !strings.Contains(got, `"location":{"kind":"portfolio"},"card":{"id":"card-moved"`) || strings.Contains(got, "space_version") {
		t.Fatalf("move into Portfolio body %s", got)
	}
}

func TestMoveChangesBothSpaceVersions(t *testing.T) {
	f := newMoveFixture(t, spaceToSpace, LevelWrite, LevelWrite)
	w := f.ta.addKey(LevelWrite)
	srcBefore, dstBefore := f.ta.spaceVersion(testFirstSpaceID), f.ta.spaceVersion(moveDstSpaceID)
	revision := f.ta.revision()
	f.ta.mustOK(w, f.move())
	if f.ta.spaceVersion(testFirstSpaceID) == srcBefore || f.ta.spaceVersion(moveDstSpaceID) == dstBefore {
		t.Fatalf("space versions after a move: %s→%s, %s→%s", srcBefore, f.ta.spaceVersion(testFirstSpaceID), dstBefore, f.ta.spaceVersion(moveDstSpaceID))
	}
	if f.ta.revision() != revision {
		t.Fatalf("a card move changed the Space set revision")
	}
	// Moving back needs the new versions; the old destination version is stale.
	back := &MoveCard{NewCardID: "card-back", SourceKind: LocationBookmark, SourceID: "card-moved", SourceSpaceID: moveDstSpaceID,
		DestinationKind: LocationBookmark, DestinationSpaceID: testFirstSpaceID, ExpectedSourceVersion: versionString(f.ta.bookmarkCard(moveDstSpaceID, "card-moved").Version),
		ExpectedDestinationVersion: ptr(srcBefore)}
	f.ta.mustFail(CodeStaleVersion, w, back)
	back.ExpectedDestinationVersion = ptr(f.ta.spaceVersion(testFirstSpaceID))
	f.ta.mustOK(w, back)
	if f.ta.bookmarkCard(testFirstSpaceID, "card-back") == nil || len(f.ta.storedSpace(moveDstSpaceID).Cards) != 0 {
		t.Fatalf("move back did not land")
	}
}

// There is no source-Space version: a change elsewhere in the source Space
// does not block a move of an unchanged card.
func TestMoveNeedsNoSourceSpaceVersion(t *testing.T) {
	f := newMoveFixture(t, spaceToSpace, LevelWrite, LevelWrite)
	w := f.ta.addKey(LevelWrite)
	mv := f.move()
	f.ta.addBookmark(w, testFirstSpaceID, addrs[3], nil, CardFields{})
	f.ta.mustOK(w, mv)
}

func TestMoveStaleVersions(t *testing.T) {
	for _, dir := range []moveDirection{spaceToSpace, portfolioToSpace, spaceToPortfolio} {
		f := newMoveFixture(t, dir, LevelWrite, LevelWrite)
		ta := f.ta
		w := ta.addKey(LevelWrite)
		for _, p := range []Principal{w, ta.owner} {
			for _, v := range []string{"", "v0", "v999999"} {
				mv := f.move()
				mv.ExpectedSourceVersion = v
				ta.mustFail(CodeStaleVersion, p, mv)
				wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *mv}), CodeStaleVersion)
			}
		}
		// The card changed since it was read.
		mv := f.move()
		if f.srcSpace == "" {
			ta.mustOK(w, &UpdatePortfolioCard{CardID: f.src.ID, ExpectedVersion: mv.ExpectedSourceVersion, CardFields: CardFields{Note: ptr("changed")}})
		} else {
			ta.mustOK(w, &UpdateBookmarkCard{SpaceID: f.srcSpace, CardID: f.src.ID, ExpectedVersion: mv.ExpectedSourceVersion, CardFields: CardFields{Note: ptr("changed")}})
		}
		ta.mustFail(CodeStaleVersion, w, mv)
		if f.dstSpace == "" {
			continue
		}
		// The destination Space changed since it was read.
		mv = f.move()
		ta.addBookmark(w, f.dstSpace, addrs[6], nil, CardFields{})
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeStaleVersion, p, mv)
			wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *mv}), CodeStaleVersion)
		}
		for _, v := range []string{"", "v0", f.src.Version} {
			mv = f.move()
			mv.ExpectedDestinationVersion = ptr(v)
			ta.mustFail(CodeStaleVersion, w, mv)
		}
		ta.mustOK(w, f.move())
	}
}

func TestMoveRequestShape(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	dst := ta.createSpace(w, "Dst", SpaceBitcoin).ID
	bm := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	pc := ta.createCard(w, addrs[1])
	dv := func() *string { return ptr(ta.spaceVersion(dst)) }
	cases := map[string]*MoveCard{
		"bookmark source without source_space_id":                 {SourceKind: LocationBookmark, SourceID: bm.ID, DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedSourceVersion: bm.Version, ExpectedDestinationVersion: dv()},
		"bookmark source without source_space_id, into Portfolio": {SourceKind: LocationBookmark, SourceID: bm.ID, DestinationKind: LocationPortfolio, ExpectedSourceVersion: bm.Version},
		"portfolio source with a source_space_id":                 {SourceKind: LocationPortfolio, SourceID: pc.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedSourceVersion: pc.Version, ExpectedDestinationVersion: dv()},
		"space destination without destination_space_id":          {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationBookmark, ExpectedSourceVersion: bm.Version, ExpectedDestinationVersion: dv()},
		"portfolio source, space destination without its id":      {SourceKind: LocationPortfolio, SourceID: pc.ID, DestinationKind: LocationBookmark, ExpectedSourceVersion: pc.Version, ExpectedDestinationVersion: dv()},
		"portfolio destination with a destination_space_id":       {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationPortfolio, DestinationSpaceID: dst, ExpectedSourceVersion: bm.Version},
		"space destination without expected_destination_version":  {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedSourceVersion: bm.Version},
		"portfolio destination with expected_destination_version": {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationPortfolio, ExpectedSourceVersion: bm.Version, ExpectedDestinationVersion: ptr(ta.spaceVersion(testFirstSpaceID))},
		"portfolio destination with empty destination version":    {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationPortfolio, ExpectedSourceVersion: bm.Version, ExpectedDestinationVersion: ptr("")},
		"same Space":               {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationBookmark, DestinationSpaceID: testFirstSpaceID, ExpectedSourceVersion: bm.Version, ExpectedDestinationVersion: ptr(ta.spaceVersion(testFirstSpaceID))},
		"portfolio to portfolio":   {SourceKind: LocationPortfolio, SourceID: pc.ID, DestinationKind: LocationPortfolio, ExpectedSourceVersion: pc.Version},
		"missing source_id":        {SourceKind: LocationBookmark, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationPortfolio, ExpectedSourceVersion: bm.Version},
		"unknown source_kind":      {SourceKind: "space", SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, DestinationKind: LocationPortfolio, ExpectedSourceVersion: bm.Version},
		"missing destination_kind": {SourceKind: LocationBookmark, SourceID: bm.ID, SourceSpaceID: testFirstSpaceID, ExpectedSourceVersion: bm.Version},
	}
	for name, mv := range cases {
		t.Logf("shape case: %s", name)
		mv.NewCardID = "card-x"
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeValidation, p, mv)
		}
		wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *mv}), CodeValidation)
	}
}

func TestCrossTypeMove(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	btc2 := ta.createSpace(w, "Btc 2", SpaceBitcoin).ID
	alt := ta.createSpace(w, "Alt", SpaceAltcoin).ID
	alt2 := ta.createSpace(w, "Alt 2", SpaceAltcoin).ID
	sheet := ta.createSpace(w, "Sheet", SpaceSheet).ID
	btcCard := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	altCard := ta.addBookmark(w, alt, altcoinAddrs["ethereum"], ptr("ethereum"), CardFields{})
	// An "unknown" card whose text happens to be a Bitcoin address is
	// still an altcoin card.
	lookalike := ta.addBookmark(w, alt, addrs[2], ptr(chain.UnknownCoinID), CardFields{})
	pc := ta.createCard(w, addrs[1])

	fromSpace := func(space string, c CardView, dst string) *MoveCard {
		m := &MoveCard{NewCardID: "card-x", SourceKind: LocationBookmark, SourceID: c.ID, SourceSpaceID: space, ExpectedSourceVersion: c.Version}
		if dst == "" {
			m.DestinationKind = LocationPortfolio
		} else {
			m.DestinationKind, m.DestinationSpaceID, m.ExpectedDestinationVersion = LocationBookmark, dst, ptr(ta.spaceVersion(dst))
		}
		return m
	}
	fromPortfolio := func(dst string) *MoveCard {
		return &MoveCard{NewCardID: "card-x", SourceKind: LocationPortfolio, SourceID: pc.ID, ExpectedSourceVersion: pc.Version,
			DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedDestinationVersion: ptr(ta.spaceVersion(dst))}
	}
	cases := map[string]*MoveCard{
		"bitcoin space to altcoin space": fromSpace(testFirstSpaceID, btcCard, alt),
		"bitcoin space to sheet space":   fromSpace(testFirstSpaceID, btcCard, sheet),
		"altcoin space to bitcoin space": fromSpace(alt, altCard, testFirstSpaceID),
		"altcoin space to sheet space":   fromSpace(alt, altCard, sheet),
		"altcoin space to Portfolio":     fromSpace(alt, altCard, ""),
		"unknown lookalike to bitcoin":   fromSpace(alt, lookalike, btc2),
		"unknown lookalike to Portfolio": fromSpace(alt, lookalike, ""),
		"Portfolio to altcoin space":     fromPortfolio(alt),
		"Portfolio to sheet space":       fromPortfolio(sheet),
	}
	for name, mv := range cases {
		t.Logf("cross-type case: %s", name)
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeCrossTypeMove, p, mv)
		}
		wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *mv}), CodeCrossTypeMove)
	}
	// Same-type moves are fine.
	ta.mustOK(w, fromSpace(testFirstSpaceID, btcCard, btc2))
	same := fromSpace(alt, lookalike, alt2)
	same.NewCardID = "card-y"
	ta.mustOK(w, same)
}

func TestAltcoinToAltcoinKeepsTheCoin(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	from := ta.createSpace(w, "From", SpaceAltcoin).ID
	to := ta.createSpace(w, "To", SpaceAltcoin).ID
	type entry struct{ coin, address string }
	entries := []entry{{chain.UnknownCoinID, "some chain: addr-1"}}
	for _, c := range chain.Coins() {
		entries = append(entries, entry{c.ID, altcoinAddrs[c.ID]})
	}
	for i, e := range entries {
		c := ta.addBookmark(w, from, e.address, ptr(e.coin), CardFields{Name: ptr("n" + e.coin), Note: ptr("note"), ColorKey: ptr(ColorKeys[i%len(ColorKeys)])})
		res := ta.mustOK(w, &MoveCard{NewCardID: fmt.Sprintf("moved-%d", i), SourceKind: LocationBookmark, SourceID: c.ID, SourceSpaceID: from, ExpectedSourceVersion: c.Version,
			DestinationKind: LocationBookmark, DestinationSpaceID: to, ExpectedDestinationVersion: ptr(ta.spaceVersion(to))})
		v := bodyAs[MoveView](t, res)
		stored := ta.bookmarkCard(to, v.NewID)
		if stored == nil || stored.CoinID != e.coin || stored.Address != e.address || v.Card.CoinID != e.coin || stored.Name != c.Name || stored.ColorKey != c.ColorKey || stored.Note != "note" {
			t.Fatalf("moved %s card %+v, view %+v", e.coin, stored, v.Card)
		}
		if ta.bookmarkCard(from, c.ID) != nil {
			t.Fatalf("source card %s still there", c.ID)
		}
	}
}

func TestMoveDuplicateAtDestination(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	dst := ta.createSpace(w, "Dst", SpaceBitcoin).ID
	alt := ta.createSpace(w, "Alt", SpaceAltcoin).ID
	alt2 := ta.createSpace(w, "Alt 2", SpaceAltcoin).ID
	src := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	ta.addBookmark(w, dst, addrs[0], nil, CardFields{})
	toDst := &MoveCard{NewCardID: "card-x", SourceKind: LocationBookmark, SourceID: src.ID, SourceSpaceID: testFirstSpaceID, ExpectedSourceVersion: src.Version,
		DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedDestinationVersion: ptr(ta.spaceVersion(dst))}
	ta.mustFail(CodeDuplicateAddress, w, toDst)
	wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *toDst}), CodeDuplicateAddress)

	// Into Portfolio, where the same address is on a card the key cannot see.
	ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "card-hidden", Address: addrs[0], CardFields: CardFields{Name: ptr("Hidden vault")}})
	toPortfolio := &MoveCard{NewCardID: "card-x", SourceKind: LocationBookmark, SourceID: src.ID, SourceSpaceID: testFirstSpaceID, ExpectedSourceVersion: src.Version, DestinationKind: LocationPortfolio}
	err := ta.mustFail(CodeDuplicateAddress, w, toPortfolio)
	mustNotMention(t, "duplicate move error", err.Message, "card-hidden", "Hidden vault", addrs[0])
	wantCode(t, ta.query(ta.keyCred(w), GetPortfolioCardQuery{CardID: "card-hidden"}), CodeNotFound)

	// From Portfolio into a Space that holds the address.
	pc := ta.createCard(w, addrs[1])
	ta.addBookmark(w, dst, addrs[1], nil, CardFields{})
	ta.mustFail(CodeDuplicateAddress, w, &MoveCard{NewCardID: "card-x", SourceKind: LocationPortfolio, SourceID: pc.ID, ExpectedSourceVersion: pc.Version,
		DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedDestinationVersion: ptr(ta.spaceVersion(dst))})

	// Altcoin: the same coin and address is a duplicate; another coin is not.
	a1 := ta.addBookmark(w, alt, "shared-text", ptr(chain.UnknownCoinID), CardFields{})
	ta.addBookmark(w, alt2, "shared-text", ptr(chain.UnknownCoinID), CardFields{})
	ta.mustFail(CodeDuplicateAddress, w, &MoveCard{NewCardID: "card-x", SourceKind: LocationBookmark, SourceID: a1.ID, SourceSpaceID: alt, ExpectedSourceVersion: a1.Version,
		DestinationKind: LocationBookmark, DestinationSpaceID: alt2, ExpectedDestinationVersion: ptr(ta.spaceVersion(alt2))})
}

func TestMoveIntoAFullDestination(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	dst := ta.createSpace(w, "Dst", SpaceBitcoin).ID
	for i := range 10 {
		ta.addBookmark(ta.owner, dst, addrs[i], nil, CardFields{})
	}
	src := ta.addBookmark(w, testFirstSpaceID, addrs[10], nil, CardFields{})
	toDst := &MoveCard{NewCardID: "card-x", SourceKind: LocationBookmark, SourceID: src.ID, SourceSpaceID: testFirstSpaceID, ExpectedSourceVersion: src.Version,
		DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedDestinationVersion: ptr(ta.spaceVersion(dst))}
	for _, p := range []Principal{w, ta.owner} {
		ta.mustFail(CodeBookmarkFull, p, toDst)
	}
	wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *toDst}), CodeBookmarkFull)
	pc := ta.createCard(w, addrs[11])
	ta.mustFail(CodeBookmarkFull, w, &MoveCard{NewCardID: "card-x", SourceKind: LocationPortfolio, SourceID: pc.ID, ExpectedSourceVersion: pc.Version,
		DestinationKind: LocationBookmark, DestinationSpaceID: dst, ExpectedDestinationVersion: ptr(ta.spaceVersion(dst))})

	// Portfolio full of cards, most of them hidden from the key.
	for len(ta.a.Portfolio) < 10 {
		ta.createCard(ta.owner, addrs[len(ta.a.Portfolio)-1])
	}
	toPortfolio := &MoveCard{NewCardID: "card-x", SourceKind: LocationBookmark, SourceID: src.ID, SourceSpaceID: testFirstSpaceID, ExpectedSourceVersion: src.Version, DestinationKind: LocationPortfolio}
	for _, p := range []Principal{w, ta.owner} {
		ta.mustFail(CodeOverviewFull, p, toPortfolio)
	}
	wantCode(t, ta.query(ta.keyCred(w), ValidateMoveQuery{Move: *toPortfolio}), CodeOverviewFull)
}

func TestMoveNewCardIDMustBeFresh(t *testing.T) {
	f := newMoveFixture(t, spaceToSpace, LevelWrite, LevelWrite)
	w := f.ta.addKey(LevelWrite)
	other := f.ta.createCard(w, addrs[5])
	for _, id := range []string{"", other.ID, f.src.ID} {
		mv := f.move()
		mv.NewCardID = id
		f.ta.mustFail(CodeConflict, w, mv)
	}
}

func TestValidateMoveChangesNothing(t *testing.T) {
	for _, dir := range []moveDirection{spaceToSpace, portfolioToSpace, spaceToPortfolio} {
		f := newMoveFixture(t, dir, LevelWrite, LevelWrite)
		w := f.ta.addKey(LevelWrite)
		r := f.ta.addKey(LevelRead)
		before := f.ta.snapshot()
		mv := f.move()
		for range 3 {
			res := f.ta.query(f.ta.keyCred(w), ValidateMoveQuery{Move: *mv})
			if res.err != nil || res.Status != 200 || bodyJSON(t, res.Body) != `{"valid":true}` {
				t.Fatalf("%s validate %+v", dir, res)
			}
		}
		// The validate endpoints need a write-capable key.
		wantCode(t, f.ta.query(f.ta.keyCred(r), ValidateMoveQuery{Move: *mv}), CodeForbidden)
		if string(f.ta.snapshot()) != string(before) {
			t.Fatalf("%s validation changed the account", dir)
		}
		// And the move it validated still applies.
		f.checkMoved(t, w, f.ta.mustOK(w, mv), mv, LevelWrite)
	}
}

func TestIdempotentMoveReplay(t *testing.T) {
	for _, dir := range []moveDirection{spaceToSpace, portfolioToSpace, spaceToPortfolio} {
		f := newMoveFixture(t, dir, LevelWrite, LevelWrite)
		ta := f.ta
		w := ta.addKey(LevelWrite)
		mv := f.move()
		req := &IdempotencyRequest{Token: token1, Method: "POST", Path: "/v1/cards/move", BodyHash: hashOf("move " + string(dir))}
		first := ta.idem(w, req, mv)
		if first.err != nil {
			t.Fatalf("%s: %v", dir, first.err)
		}
		v := f.checkMoved(t, w, first, mv, LevelWrite)
		after := ta.snapshot()
		seq, events := ta.a.Seq, len(ta.a.Audit)
		for i := range 3 {
			retry := *mv
			retry.NewCardID = fmt.Sprintf("card-retry-%d", i) // the edge makes a fresh id per request
			again := ta.idem(w, req, &retry)
			if again.err != nil || again.Status != first.Status || bodyJSON(t, again.Body) != bodyJSON(t, first.Body) {
				t.Fatalf("%s replay %d: %+v, first %s", dir, i, again, bodyJSON(t, first.Body))
			}
			if got := bodyAs[MoveView](t, again); got.NewID != v.NewID || got.OldID != v.OldID {
				t.Fatalf("%s replay names %s→%s", dir, got.OldID, got.NewID)
			}
		}
		if string(ta.snapshot()) != string(after) || ta.a.Seq != seq || len(ta.a.Audit) != events {
			t.Fatalf("%s: a replay changed the account", dir)
		}
		// Another request under the same token conflicts.
		other := &IdempotencyRequest{Token: token1, Method: "POST", Path: "/v1/cards/move", BodyHash: hashOf("another body")}
		wantCode(t, ta.idem(w, other, mv), CodeIdempotencyConflict)
		// Without the token the retry is new, and the old ID is gone.
		ta.mustFail(CodeNotFound, w, mv)
		// Once the moved card is hidden, the replay reveals nothing.
		if f.dstSpace != "" {
			ta.grantSpace(f.dstSpace, LevelNone)
		} else {
			ta.setGrant(v.NewID, LevelNone)
		}
		hidden := ta.idem(w, req, mv)
		err := wantCode(t, hidden, CodeNotFound)
		if hidden.Body != nil {
			t.Fatalf("withheld replay carries %v", hidden.Body)
		}
		mustNotMention(t, "withheld move replay", err.Message, v.NewID, f.src.Address, f.src.Name)
	}
}

// AuditEvent.Seq is unique and increasing; a move records two events.
func TestMoveEventsKeepSeqUniqueAndIncreasing(t *testing.T) {
	for _, dir := range []moveDirection{spaceToSpace, portfolioToSpace, spaceToPortfolio} {
		f := newMoveFixture(t, dir, LevelWrite, LevelWrite)
		w := f.ta.addKey(LevelWrite)
		n := len(f.ta.a.Audit)
		f.ta.mustOK(w, f.move())
		events := f.ta.a.Audit[n:]
		if len(events) != 2 {
			t.Fatalf("%s recorded %d events", dir, len(events))
		}
		checkAuditSeqs(t, f.ta)
	}
}

func TestMoveRecordsChangeEvents(t *testing.T) {
	for _, dir := range []moveDirection{spaceToSpace, portfolioToSpace, spaceToPortfolio} {
		f := newMoveFixture(t, dir, LevelWrite, LevelWrite)
		w := f.ta.addKey(LevelWrite)
		n := len(f.ta.a.Audit)
		f.ta.mustOK(w, f.move())
		var want []ResourceRef
		if f.srcSpace == "" {
			want = append(want, ResourceRef{Kind: ResourcePortfolioCard, ID: f.src.ID})
		} else {
			want = append(want, ResourceRef{Kind: ResourceBookmarkCard, ID: f.src.ID, SpaceID: f.srcSpace})
		}
		if f.dstSpace == "" {
			want = append(want, ResourceRef{Kind: ResourcePortfolioCard, ID: "card-moved"})
		} else {
			want = append(want, ResourceRef{Kind: ResourceBookmarkCard, ID: "card-moved", SpaceID: f.dstSpace})
		}
		events := f.ta.a.Audit[n:]
		for i, ev := range events {
			kind := EventCardsChanged
			if want[i].Kind == ResourcePortfolioCard {
				kind = EventPortfolioChanged
			}
			if ev.Resource != want[i] || ev.Kind != kind || ev.Principal != w || ev.At != f.ta.at {
				t.Fatalf("%s event %d %+v, want %s on %+v", dir, i, ev, kind, want[i])
			}
		}
	}
}

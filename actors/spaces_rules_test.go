package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Helpers shared by the Space, bookmark card and move tests.

// bodyAs extracts a result body of type T, whether it is the typed body of
// a fresh result or the raw JSON of an idempotent replay.
func bodyAs[T any](t *testing.T, res Result) T {
	t.Helper()
	if res.err != nil {
		t.Fatalf("result is an error: %v", res.err)
	}
	if v, isT := res.Body.(T); isT {
		return v
	}
	var v T
	raw, isRaw := res.Body.(json.RawMessage)
	if !isRaw {
		t.Fatalf("result body is %T, want %T", res.Body, v)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	return v
}

func (ta *testAccount) nextSpaceID() string {
	ta.seq++
	return fmt.Sprintf("space-g%d", ta.seq)
}

// revision is the account's current bookmark_revision as the API shows it.
func (ta *testAccount) revision() string { return versionString(ta.a.BookmarkRevision) }

func (ta *testAccount) storedSpace(id string) *Space {
	_, s := ta.a.space(id)
	return s
}

// spaceVersion is the current version of a stored Space.
func (ta *testAccount) spaceVersion(id string) string {
	ta.t.Helper()
	s := ta.storedSpace(id)
	if s == nil {
		ta.t.Fatalf("space %s does not exist", id)
	}
	return versionString(s.Version)
}

// grantSpace sets the agent grant on a Space as the owner.
func (ta *testAccount) grantSpace(id string, level Level) {
	ta.t.Helper()
	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: id, Level: level})
}

// createSpace creates a Space that must succeed and returns its view.
func (ta *testAccount) createSpace(p Principal, name string, typ SpaceType) SpaceView {
	ta.t.Helper()
	res := ta.mustOK(p, &CreateSpace{SpaceID: ta.nextSpaceID(), ExpectedBookmarkRevision: ta.revision(), Name: name, Type: typ})
	if res.Status != 201 {
		ta.t.Fatalf("create space: status %d, want 201", res.Status)
	}
	return bodyAs[SpaceEnvelope](ta.t, res).Space
}

// addBookmark creates a bookmark card that must succeed and returns its view.
func (ta *testAccount) addBookmark(p Principal, spaceID, address string, coin *string, f CardFields) CardView {
	ta.t.Helper()
	res := ta.mustOK(p, &CreateBookmarkCard{CardID: ta.nextCardID(), SpaceID: spaceID, ExpectedSpaceVersion: ta.spaceVersion(spaceID), Address: address, CoinID: coin, CardFields: f})
	if res.Status != 201 {
		ta.t.Fatalf("create bookmark: status %d, want 201", res.Status)
	}
	return bodyAs[BookmarkEnvelope](ta.t, res).Card
}

// bookmarkCard is the stored bookmark card, or nil.
func (ta *testAccount) bookmarkCard(spaceID, cardID string) *Card {
	s := ta.storedSpace(spaceID)
	if s == nil {
		return nil
	}
	for _, c := range s.Cards {
		if c.ID == cardID {
			return c
		}
	}
	return nil
}

// spacesJSON is the encoding of every stored Space, cards and Sheets
// included.
func (ta *testAccount) spacesJSON() string {
	ta.t.Helper()
	b, err := json.Marshal(ta.a.Spaces)
	if err != nil {
		ta.t.Fatalf("marshal spaces: %v", err)
	}
	return string(b)
}

// extendedWithWriter is an extended-plan account whose first Space is
// write-granted, with a write key and a read key.
func extendedWithWriter(t *testing.T) (ta *testAccount, w, r Principal) {
	t.Helper()
	ta = newTestAccount(t, PlanExtended)
	w = ta.addKey(LevelWrite)
	r = ta.addKey(LevelRead)
	ta.grantSpace(testFirstSpaceID, LevelWrite)
	return ta, w, r
}

// ---- Space create ----

func TestCreateSpaceReadOnlyKeyIsForbidden(t *testing.T) {
	ta, _, r := extendedWithWriter(t)
	ta.mustFail(CodeForbidden, r, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
	// Even a bad body is refused as a write first.
	ta.mustFail(CodeForbidden, r, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: "v0", Name: "", Type: "nope"})
}

func TestCreateSpaceOnBasePlanIsSpaceFull(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	// The owner needs no grant, but the base plan holds one Space.
	ta.mustFail(CodeSpaceFull, ta.owner, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
	// An agent without a write-granted Space is refused before capacity.
	ta.mustFail(CodeForbidden, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
	ta.grantSpace(testFirstSpaceID, LevelWrite)
	for _, typ := range []SpaceType{SpaceBitcoin, SpaceAltcoin, SpaceSheet} {
		ta.mustFail(CodeSpaceFull, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: typ})
		wantCode(t, ta.apply(ta.owner, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: typ}), CodeSpaceFull)
	}
}

func TestCreateSpaceNeedsAWriteGrantedSpaceForAgents(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	w := ta.addKey(LevelWrite)
	create := func() *CreateSpace {
		return &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin}
	}
	ta.mustFail(CodeForbidden, w, create())
	ta.grantSpace(testFirstSpaceID, LevelRead)
	ta.mustFail(CodeForbidden, w, create())

	// The owner needs no grant at all.
	ta.grantSpace(testFirstSpaceID, LevelNone)
	owned := ta.createSpace(ta.owner, "Owner's", SpaceAltcoin)
	if owned.EffectiveAccess != LevelWrite || owned.Grant == nil || *owned.Grant != LevelNone {
		t.Fatalf("owner-created space view %+v", owned)
	}
	// A write grant on any Space, not only the first, is a foothold.
	ta.mustFail(CodeForbidden, w, create())
	ta.grantSpace(owned.ID, LevelWrite)
	v := bodyAs[SpaceEnvelope](t, ta.mustOK(w, create())).Space
	if v.ID != "space-x" || v.EffectiveAccess != LevelWrite || v.Grant != nil {
		t.Fatalf("agent-created space view %+v", v)
	}
}

func TestCreateSpaceStaleRevisionAndSpaceFullAreDistinct(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	stale := ta.revision()
	ta.createSpace(w, "Two", SpaceBitcoin)
	if ta.revision() == stale {
		t.Fatalf("creating a Space kept the bookmark revision %s", stale)
	}
	// Stale alone: STALE_VERSION.
	for _, p := range []Principal{w, ta.owner} {
		ta.mustFail(CodeStaleVersion, p, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: stale, Name: "X", Type: SpaceBitcoin})
		ta.mustFail(CodeStaleVersion, p, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: "", Name: "X", Type: SpaceBitcoin})
	}
	for len(ta.a.Spaces) < 10 {
		ta.createSpace(w, fmt.Sprintf("S%d", len(ta.a.Spaces)), SpaceBitcoin)
	}
	// Full alone: SPACE_FULL.
	full := ta.mustFail(CodeSpaceFull, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
	// Both at once: the code answers the stale revision first, so a client
	// re-reads, retries and then learns about capacity.
	both := ta.mustFail(CodeStaleVersion, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: stale, Name: "X", Type: SpaceBitcoin})
	if full.Message == both.Message {
		t.Fatalf("SPACE_FULL and STALE_VERSION share the message %q", full.Message)
	}
	ta.mustFail(CodeStaleVersion, ta.owner, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: stale, Name: "X", Type: SpaceBitcoin})
}

func TestCreateSpaceLimitCountsHiddenSpaces(t *testing.T) {
	ta, w, r := extendedWithWriter(t)
	// The owner fills the plan with Spaces the key cannot see.
	for i := 2; i <= 10; i++ {
		ta.createSpace(ta.owner, fmt.Sprintf("Hidden %d", i), SpaceBitcoin)
	}
	me := ta.meFor(ta.keyCred(w))
	if len(me.AccessibleSpaceIDs) != 1 || me.BookmarkSpaces.Used != 10 || me.BookmarkSpaces.Limit != 10 {
		t.Fatalf("/me with nine hidden spaces: %+v", me)
	}
	if list := bodyAs[SpaceListView](t, ta.mustQuery(ta.keyCred(r), ListSpacesQuery{})); len(list.Spaces) != 1 {
		t.Fatalf("read key lists %d spaces", len(list.Spaces))
	}
	for _, typ := range []SpaceType{SpaceBitcoin, SpaceAltcoin, SpaceSheet} {
		ta.mustFail(CodeSpaceFull, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: typ})
		ta.mustFail(CodeSpaceFull, ta.owner, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: typ})
	}
	// Deleting one (a hidden one, by the owner) makes room again.
	last := ta.a.Spaces[9]
	ta.mustOK(ta.owner, &DeleteSpace{SpaceID: last.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: versionString(last.Version), ConfirmDeleteCards: true})
	ta.createSpace(w, "Tenth", SpaceSheet)
	ta.mustFail(CodeSpaceFull, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
}

func TestCreateSpaceAfterDowngradeIsSpaceFull(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	ta.createSpace(w, "Two", SpaceAltcoin)
	ta.createSpace(ta.owner, "Three", SpaceSheet)
	ta.mustOK(ta.owner, &SetPlan{Plan: PlanBase})
	if me := ta.meFor(ta.keyCred(w)); me.BookmarkSpaces.Used != 3 || me.BookmarkSpaces.Limit != 1 {
		t.Fatalf("/me after downgrade %+v", me.BookmarkSpaces)
	}
	// The first Space is still write-granted, so the agent has its
	// foothold; the hidden Spaces still count toward the plan.
	ta.mustFail(CodeSpaceFull, w, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
	ta.mustFail(CodeSpaceFull, ta.owner, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
}

func TestCreateSpaceNames(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	bad := []struct{ name, value string }{
		{"empty", ""},
		{"41 ASCII", strings.Repeat("a", 41)},
		{"41 accented", strings.Repeat("é", 41)},
		{"41 CJK", strings.Repeat("日", 41)},
		{"newline", "two\nlines"},
		{"tab", "tab\there"},
		{"carriage return", "cr\r"},
		{"NUL", "nul\x00"},
		{"DEL", "del\x7f"},
		{"escape", "\x1b[31mred"},
		{"C1 control", "c1\u0085"},
		{"zero-width", "zero\u200bwidth"},
		{"bidi override", "\u202eevil"},
		{"invalid UTF-8", "bad\xff"},
	}
	for _, tc := range bad {
		t.Logf("name case %q", tc.name)
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeValidation, p, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: tc.value, Type: SpaceBitcoin})
		}
	}
	good := []string{
		strings.Repeat("a", 40),
		strings.Repeat("é", 40), // 80 bytes, 40 characters
		strings.Repeat("日", 40), // 120 bytes
		"x",
		"Café ☕ — Мои кошельки",
		"Cold storage (2026)",
		"😀 emoji",
	}
	for i, name := range good {
		p := w
		if i%2 == 1 {
			p = ta.owner
		}
		v := ta.createSpace(p, name, SpaceBitcoin)
		if v.Name != name || ta.storedSpace(v.ID).Name != name {
			t.Fatalf("name %q stored as %q", name, ta.storedSpace(v.ID).Name)
		}
	}
}

func TestCreateSpaceTypes(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	for _, typ := range []SpaceType{"", "Bitcoin", "SHEET", "portfolio", "bookmark", "ethereum", "unknown", " bitcoin"} {
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeValidation, p, &CreateSpace{SpaceID: "space-x", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: typ})
		}
	}
	for _, p := range []Principal{w, ta.owner} {
		for _, typ := range []SpaceType{SpaceBitcoin, SpaceAltcoin, SpaceSheet} {
			v := ta.createSpace(p, "T "+string(typ), typ)
			s := ta.storedSpace(v.ID)
			if v.Type != typ || s.Type != typ || s.Cards == nil || len(s.Cards) != 0 {
				t.Fatalf("created %s space: view %+v stored %+v", typ, v, s)
			}
			if typ != SpaceSheet {
				if s.Sheet != nil {
					t.Fatalf("%s space has a Sheet", typ)
				}
				continue
			}
			// A new Sheet: the four locked headings, "Notes", revision 0, no rows.
			want := [5]string{"Address", "Blockchain", "Transaction ID", "Date", "Notes"}
			if s.Sheet == nil || s.Sheet.Headers != want || s.Sheet.Revision != 0 || s.Sheet.Rows == nil || len(s.Sheet.Rows) != 0 {
				t.Fatalf("new sheet %+v", s.Sheet)
			}
			if got := bodyJSON(t, s.Sheet); got != `{"headers":["Address","Blockchain","Transaction ID","Date","Notes"],"revision":0,"rows":[]}` {
				t.Fatalf("new sheet encodes as %s", got)
			}
		}
	}
}

func TestCreateSpaceGrantDependsOnTheCreator(t *testing.T) {
	ta, w, r := extendedWithWriter(t)
	res := ta.mustOK(w, &CreateSpace{SpaceID: "space-agent", ExpectedBookmarkRevision: ta.revision(), Name: "Agent's", Type: SpaceAltcoin})
	env := bodyAs[SpaceEnvelope](t, res)
	want := SpaceView{ID: "space-agent", Version: ta.spaceVersion("space-agent"), Type: SpaceAltcoin, Name: "Agent's", EffectiveAccess: LevelWrite}
	if res.Status != 201 || env.Space != want || env.BookmarkRevision != ta.revision() {
		t.Fatalf("agent create: %d %+v, want %+v revision %s", res.Status, env, want, ta.revision())
	}
	if body := bodyJSON(t, res.Body); strings.Contains(body, `"grant"`) {
		t.Fatalf("agent sees a grant: %s", body)
	}
	if s := ta.storedSpace("space-agent"); s.Grant != LevelWrite || s.CreatedAt != ta.at {
		t.Fatalf("agent-created space stored %+v", s)
	}
	// Visible to every key within its ceiling.
	if got := bodyAs[SpaceEnvelope](t, ta.mustQuery(ta.keyCred(r), GetSpaceQuery{SpaceID: "space-agent"})); got.Space.EffectiveAccess != LevelRead {
		t.Fatalf("read key sees %+v", got)
	}
	w2 := ta.addKey(LevelWrite)
	if got := bodyAs[SpaceEnvelope](t, ta.mustQuery(ta.keyCred(w2), GetSpaceQuery{SpaceID: "space-agent"})); got.Space.EffectiveAccess != LevelWrite {
		t.Fatalf("another write key sees %+v", got)
	}

	owned := bodyAs[SpaceEnvelope](t, ta.mustOK(ta.owner, &CreateSpace{SpaceID: "space-owner", ExpectedBookmarkRevision: ta.revision(), Name: "Mine", Type: SpaceBitcoin}))
	if owned.Space.Grant == nil || *owned.Space.Grant != LevelNone || owned.Space.EffectiveAccess != LevelWrite {
		t.Fatalf("owner create view %+v", owned.Space)
	}
	if ta.storedSpace("space-owner").Grant != LevelNone {
		t.Fatalf("owner-created space grant %v", ta.storedSpace("space-owner").Grant)
	}
	for _, key := range []Principal{w, r} {
		wantCode(t, ta.query(ta.keyCred(key), GetSpaceQuery{SpaceID: "space-owner"}), CodeNotFound)
		if me := ta.meFor(ta.keyCred(key)); contains(me.AccessibleSpaceIDs, "space-owner") {
			t.Fatalf("%s reaches an owner-created space", key.KeyID)
		}
	}
}

func TestCreateSpaceRecordsBookmarkChanged(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	for _, p := range []Principal{w, ta.owner} {
		n := len(ta.a.Audit)
		v := ta.createSpace(p, "Audited", SpaceSheet)
		if len(ta.a.Audit) != n+1 {
			t.Fatalf("create recorded %d events", len(ta.a.Audit)-n)
		}
		want := AuditEvent{Seq: ta.a.AuditSeq, At: ta.at, Kind: EventBookmarkChanged, Resource: ResourceRef{Kind: ResourceSpace, ID: v.ID}, Principal: p}
		if ev := lastEvent(t, ta); ev != want {
			t.Fatalf("event %+v, want %+v", ev, want)
		}
	}
}

func TestCreateSpaceIDMustBeFresh(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	ta.mustFail(CodeConflict, w, &CreateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
	ta.mustFail(CodeConflict, w, &CreateSpace{SpaceID: "", ExpectedBookmarkRevision: ta.revision(), Name: "X", Type: SpaceBitcoin})
}

// ---- bookmark_revision and Space versions ----

func TestBookmarkRevisionChangesWithTheSpaceSet(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	seen := map[string]bool{ta.revision(): true}
	step := func(what string, got string) {
		t.Helper()
		if got != ta.revision() {
			t.Fatalf("%s returned revision %s, stored %s", what, got, ta.revision())
		}
		if seen[got] {
			t.Fatalf("%s kept or reused bookmark revision %s", what, got)
		}
		seen[got] = true
	}
	versions := map[string]bool{ta.spaceVersion(testFirstSpaceID): true}
	newVersion := func(what, id string) {
		t.Helper()
		v := ta.spaceVersion(id)
		if versions[v] {
			t.Fatalf("%s kept or reused space version %s", what, v)
		}
		versions[v] = true
	}

	res := ta.mustOK(w, &CreateSpace{SpaceID: "space-b", ExpectedBookmarkRevision: ta.revision(), Name: "B", Type: SpaceBitcoin})
	step("create", bodyAs[SpaceEnvelope](t, res).BookmarkRevision)
	newVersion("create", "space-b")

	res = ta.mustOK(w, &UpdateSpace{SpaceID: "space-b", ExpectedBookmarkRevision: ta.revision(), Name: ptr("B renamed")})
	env := bodyAs[SpaceEnvelope](t, res)
	step("rename", env.BookmarkRevision)
	newVersion("rename", "space-b")
	if env.Space.Version != ta.spaceVersion("space-b") || env.Space.Name != "B renamed" {
		t.Fatalf("rename view %+v", env.Space)
	}

	res = ta.mustOK(ta.owner, &UpdateSpace{SpaceID: "space-b", ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceAltcoin)})
	step("type change", bodyAs[SpaceEnvelope](t, res).BookmarkRevision)
	newVersion("type change", "space-b")

	res = ta.mustOK(ta.owner, &DeleteSpace{SpaceID: "space-b", ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion("space-b"), ConfirmDeleteCards: true})
	step("delete", bodyAs[SpaceDeletedView](t, res).BookmarkRevision)

	// The list and single reads carry the current revision.
	if list := bodyAs[SpaceListView](t, ta.mustQuery(ta.keyCred(w), ListSpacesQuery{})); list.BookmarkRevision != ta.revision() {
		t.Fatalf("list revision %s, want %s", list.BookmarkRevision, ta.revision())
	}
	if one := bodyAs[SpaceEnvelope](t, ta.mustQuery(ta.keyCred(w), GetSpaceQuery{SpaceID: testFirstSpaceID})); one.BookmarkRevision != ta.revision() || one.Space.Version != ta.spaceVersion(testFirstSpaceID) {
		t.Fatalf("single read %+v", one)
	}
}

// ---- Rename and type change ----

func TestRenameSpace(t *testing.T) {
	ta, w, r := extendedWithWriter(t)
	b := ta.createSpace(w, "B", SpaceBitcoin)
	stale := ta.revision()
	ta.createSpace(w, "C", SpaceBitcoin)

	ta.mustFail(CodeStaleVersion, w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: stale, Name: ptr("B2")})
	ta.mustFail(CodeStaleVersion, ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: stale, Name: ptr("B2")})
	ta.mustFail(CodeForbidden, r, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("B2")})
	ta.mustFail(CodeNotFound, w, &UpdateSpace{SpaceID: "space-unknown", ExpectedBookmarkRevision: ta.revision(), Name: ptr("B2")})
	ta.mustFail(CodeValidation, w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision()})
	for _, name := range []string{"", strings.Repeat("n", 41), "a\nb", "\u200b"} {
		ta.mustFail(CodeValidation, w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr(name)})
	}

	ta.grantSpace(b.ID, LevelRead)
	ta.mustFail(CodeForbidden, w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("B2")})
	ta.grantSpace(b.ID, LevelNone)
	ta.mustFail(CodeNotFound, w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("B2")})
	ta.grantSpace(b.ID, LevelWrite)

	before := ta.spaceVersion(b.ID)
	res := ta.mustOK(w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr(strings.Repeat("é", 40))})
	env := bodyAs[SpaceEnvelope](t, res)
	s := ta.storedSpace(b.ID)
	if res.Status != 200 || s.Name != strings.Repeat("é", 40) || env.Space.Name != s.Name || s.Grant != LevelWrite || s.Type != SpaceBitcoin {
		t.Fatalf("rename: %d %+v stored %+v", res.Status, env, s)
	}
	if env.Space.Version == before || env.Space.Version != ta.spaceVersion(b.ID) {
		t.Fatalf("rename version %s (was %s, stored %s)", env.Space.Version, before, ta.spaceVersion(b.ID))
	}
	ev := lastEvent(t, ta)
	if ev.Kind != EventBookmarkChanged || ev.Resource != (ResourceRef{Kind: ResourceSpace, ID: b.ID}) || ev.Principal != w {
		t.Fatalf("rename event %+v", ev)
	}
}

func TestAgentCannotChangeASpaceType(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	for _, typ := range []SpaceType{SpaceAltcoin, SpaceSheet, SpaceBitcoin, "nope"} {
		ta.mustFail(CodeValidation, w, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(typ)})
		ta.mustFail(CodeValidation, w, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("ok"), Type: ptr(typ)})
	}
}

// The spec: a read-only key attempting a change returns 403. The edge
// refuses read-only keys before proposing, so this is defence in depth.
func TestRenameByReadOnlyKeyIsForbiddenEvenWithType(t *testing.T) {
	ta, _, r := extendedWithWriter(t)
	ta.mustFail(CodeForbidden, r, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("x")})
	ta.mustFail(CodeForbidden, r, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceAltcoin)})
}

func TestOwnerTypeChangeClearsTheGrant(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	b := ta.createSpace(w, "B", SpaceBitcoin)
	if ta.storedSpace(b.ID).Grant != LevelWrite {
		t.Fatal("agent-created space is not at write")
	}
	changes := []struct {
		to    SpaceType
		sheet bool
	}{{SpaceSheet, true}, {SpaceAltcoin, false}, {SpaceBitcoin, false}, {SpaceAltcoin, false}}
	for _, ch := range changes {
		ta.grantSpace(b.ID, LevelWrite)
		before := ta.spaceVersion(b.ID)
		n := len(ta.a.Audit)
		res := ta.mustOK(ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(ch.to)})
		env := bodyAs[SpaceEnvelope](t, res)
		s := ta.storedSpace(b.ID)
		if s.Type != ch.to || env.Space.Type != ch.to || s.Grant != LevelNone || env.Space.Grant == nil || *env.Space.Grant != LevelNone {
			t.Fatalf("type change to %s: stored %+v view %+v", ch.to, s, env.Space)
		}
		if (s.Sheet != nil) != ch.sheet || (ch.sheet && (len(s.Sheet.Rows) != 0 || s.Sheet.Headers[4] != "Notes")) {
			t.Fatalf("type change to %s: sheet %+v", ch.to, s.Sheet)
		}
		if s.Name != "B" || env.Space.Version == before || env.Space.Version != ta.spaceVersion(b.ID) {
			t.Fatalf("type change to %s: name %q version %s (was %s)", ch.to, s.Name, env.Space.Version, before)
		}
		events := ta.a.Audit[n:]
		kinds := map[EventKind]int{}
		for _, ev := range events {
			if ev.Resource != (ResourceRef{Kind: ResourceSpace, ID: b.ID}) || ev.Principal != ta.owner {
				t.Fatalf("type change event %+v", ev)
			}
			kinds[ev.Kind]++
		}
		if kinds[EventScopeChanged] != 1 || kinds[EventBookmarkChanged] != 1 || len(events) != 2 {
			t.Fatalf("type change recorded %+v", events)
		}
		// The agent must be granted again.
		wantCode(t, ta.query(ta.keyCred(w), GetSpaceQuery{SpaceID: b.ID}), CodeNotFound)
		ta.mustFail(CodeNotFound, w, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("x")})
	}
	// Renaming together with a type change applies both.
	ta.mustOK(ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("Now bitcoin"), Type: ptr(SpaceBitcoin)})
	if s := ta.storedSpace(b.ID); s.Name != "Now bitcoin" || s.Type != SpaceBitcoin {
		t.Fatalf("rename with type change: %+v", s)
	}
	// Sending the current type changes no grant.
	ta.grantSpace(b.ID, LevelWrite)
	ta.mustOK(ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceBitcoin)})
	if ta.storedSpace(b.ID).Grant != LevelWrite {
		t.Fatalf("the same type cleared the grant")
	}
	ta.mustFail(CodeValidation, ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceType("Sheet"))})
	ta.mustFail(CodeStaleVersion, ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: "v1", Type: ptr(SpaceSheet)})
}

// AuditEvent.Seq is unique and increasing, also across a type change.
func TestTypeChangeEventsKeepSeqUniqueAndIncreasing(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	b := ta.createSpace(w, "B", SpaceBitcoin) // records an event at the current Seq
	ta.mustOK(ta.owner, &UpdateSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceSheet)})
	checkAuditSeqs(t, ta)
}

func checkAuditSeqs(t *testing.T, ta *testAccount) {
	t.Helper()
	for i := 1; i < len(ta.a.Audit); i++ {
		prev, ev := ta.a.Audit[i-1], ta.a.Audit[i]
		if ev.Seq <= prev.Seq {
			t.Errorf("audit event %d %+v has Seq %d after %+v", i, ev, ev.Seq, prev)
		}
	}
	if last := ta.a.Audit[len(ta.a.Audit)-1]; last.Seq != ta.a.AuditSeq {
		t.Errorf("last event Seq %d, account AuditSeq %d", last.Seq, ta.a.AuditSeq)
	}
}

func TestTypeChangeOfANonEmptySpaceConflicts(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{})
	for _, typ := range []SpaceType{SpaceAltcoin, SpaceSheet} {
		ta.mustFail(CodeConflict, ta.owner, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(typ)})
	}
	alt := ta.createSpace(w, "Alt", SpaceAltcoin)
	ta.addBookmark(w, alt.ID, "some-coin-address", ptr("unknown"), CardFields{})
	ta.mustFail(CodeConflict, ta.owner, &UpdateSpace{SpaceID: alt.ID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceBitcoin)})

	sheet := ta.createSpace(w, "Sheet", SpaceSheet)
	ta.storedSpace(sheet.ID).Sheet.Rows = []*SheetRow{{Index: 3, Cells: [5]string{addrs[0], "bitcoin", "", "", "n"}}}
	ta.mustFail(CodeConflict, ta.owner, &UpdateSpace{SpaceID: sheet.ID, ExpectedBookmarkRevision: ta.revision(), Type: ptr(SpaceBitcoin)})
	// Renaming a non-empty Space is fine.
	ta.mustOK(ta.owner, &UpdateSpace{SpaceID: sheet.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("Still a sheet")})
	if s := ta.storedSpace(sheet.ID); len(s.Sheet.Rows) != 1 || s.Type != SpaceSheet {
		t.Fatalf("rename touched the sheet: %+v", s.Sheet)
	}
}

// ---- Delete ----

func TestDeleteSpace(t *testing.T) {
	ta, w, r := extendedWithWriter(t)
	b := ta.createSpace(w, "B", SpaceBitcoin)
	for i := range 3 {
		ta.addBookmark(w, b.ID, addrs[i], nil, CardFields{})
	}
	del := func(confirm bool) *DeleteSpace {
		return &DeleteSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(b.ID), ConfirmDeleteCards: confirm}
	}
	for _, p := range []Principal{w, ta.owner} {
		ta.mustFail(CodeValidation, p, del(false))
		stale := del(true)
		stale.ExpectedBookmarkRevision = "v1"
		ta.mustFail(CodeStaleVersion, p, stale)
		stale = del(true)
		stale.ExpectedVersion = "v1"
		ta.mustFail(CodeStaleVersion, p, stale)
		stale = del(true)
		stale.ExpectedBookmarkRevision, stale.ExpectedVersion = "", ""
		ta.mustFail(CodeStaleVersion, p, stale)
	}
	// A revision that went stale through another Space's rename.
	oldRev := ta.revision()
	ta.mustOK(w, &UpdateSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("First")})
	ta.mustFail(CodeStaleVersion, w, &DeleteSpace{SpaceID: b.ID, ExpectedBookmarkRevision: oldRev, ExpectedVersion: ta.spaceVersion(b.ID), ConfirmDeleteCards: true})
	// A Space version that went stale through a card change.
	oldVersion := ta.spaceVersion(b.ID)
	ta.addBookmark(w, b.ID, addrs[3], nil, CardFields{})
	ta.mustFail(CodeStaleVersion, w, &DeleteSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: oldVersion, ConfirmDeleteCards: true})

	ta.mustFail(CodeForbidden, r, del(true))
	ta.grantSpace(b.ID, LevelRead)
	ta.mustFail(CodeForbidden, w, del(true))
	ta.grantSpace(b.ID, LevelNone)
	ta.mustFail(CodeNotFound, w, del(true))
	ta.mustFail(CodeNotFound, w, &DeleteSpace{SpaceID: "space-unknown", ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: "v1", ConfirmDeleteCards: true})
	ta.grantSpace(b.ID, LevelWrite)

	cardIDs := []string{}
	for _, c := range ta.storedSpace(b.ID).Cards {
		cardIDs = append(cardIDs, c.ID)
	}
	n := len(ta.a.Audit)
	res := ta.mustOK(w, del(true))
	if got := bodyJSON(t, res.Body); res.Status != 200 || got != `{"deleted":true,"deleted_card_count":4,"bookmark_revision":"`+ta.revision()+`"}` {
		t.Fatalf("delete result %d %s", res.Status, got)
	}
	if ta.storedSpace(b.ID) != nil || len(ta.a.Spaces) != 1 {
		t.Fatalf("space still stored")
	}
	for _, id := range cardIDs {
		if ta.cardIDTakenNow(id) {
			t.Fatalf("card %s survived its Space", id)
		}
	}
	wantCode(t, ta.query(ta.keyCred(w), GetSpaceQuery{SpaceID: b.ID}), CodeNotFound)
	wantCode(t, ta.query(ta.keyCred(w), ListBookmarksQuery{SpaceID: b.ID}), CodeNotFound)
	if len(ta.a.Audit) != n+1 {
		t.Fatalf("delete recorded %d events", len(ta.a.Audit)-n)
	}
	want := AuditEvent{Seq: ta.a.AuditSeq, At: ta.at, Kind: EventBookmarkChanged, Resource: ResourceRef{Kind: ResourceSpace, ID: b.ID}, Principal: w, Removed: true, Granted: LevelWrite}
	if ev := lastEvent(t, ta); ev != want {
		t.Fatalf("delete event %+v, want %+v", ev, want)
	}
}

func (ta *testAccount) cardIDTakenNow(id string) bool { return ta.a.cardIDTaken(id) }

func TestDeleteSpaceReturnsTheCardCount(t *testing.T) {
	for _, n := range []int{0, 1, 10} {
		ta, w, _ := extendedWithWriter(t)
		b := ta.createSpace(w, "B", SpaceAltcoin)
		for i := range n {
			ta.addBookmark(w, b.ID, fmt.Sprintf("addr-%d", i), ptr("unknown"), CardFields{})
		}
		res := ta.mustOK(ta.owner, &DeleteSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(b.ID), ConfirmDeleteCards: true})
		if v := bodyAs[SpaceDeletedView](t, res); !v.Deleted || v.DeletedCardCount != n {
			t.Fatalf("%d cards: delete view %+v", n, v)
		}
	}
}

func TestDeleteTheLastSpaceConflicts(t *testing.T) {
	for _, plan := range []Plan{PlanBase, PlanExtended} {
		ta := newTestAccount(t, plan)
		w := ta.addKey(LevelWrite)
		ta.grantSpace(testFirstSpaceID, LevelWrite)
		for _, p := range []Principal{w, ta.owner} {
			ta.mustFail(CodeConflict, p, &DeleteSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(testFirstSpaceID), ConfirmDeleteCards: true})
		}
		if plan == PlanBase {
			continue
		}
		// With two, either may go, but then the other is the last.
		b := ta.createSpace(w, "B", SpaceBitcoin)
		ta.mustOK(w, &DeleteSpace{SpaceID: testFirstSpaceID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(testFirstSpaceID), ConfirmDeleteCards: true})
		ta.mustFail(CodeConflict, w, &DeleteSpace{SpaceID: b.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(b.ID), ConfirmDeleteCards: true})
	}
}

func TestDeleteSheetSpaceWithStoredRowsConflicts(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	sheet := ta.createSpace(w, "Sheet", SpaceSheet)
	s := ta.storedSpace(sheet.ID)
	s.Sheet.Rows = []*SheetRow{{Index: 999, Cells: [5]string{"", "", "", "", "only a note"}}}
	s.Sheet.Revision = 7
	before := ta.spacesJSON()
	for _, p := range []Principal{w, ta.owner} {
		ta.mustFail(CodeConflict, p, &DeleteSpace{SpaceID: sheet.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(sheet.ID), ConfirmDeleteCards: true})
	}
	if ta.spacesJSON() != before {
		t.Fatalf("a refused delete changed the spaces")
	}
	// A custom fifth heading does not block: only rows do.
	s.Sheet.Rows = []*SheetRow{}
	s.Sheet.Headers[4] = "Memo"
	res := ta.mustOK(w, &DeleteSpace{SpaceID: sheet.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(sheet.ID), ConfirmDeleteCards: true})
	if v := bodyAs[SpaceDeletedView](t, res); !v.Deleted || v.DeletedCardCount != 0 || ta.storedSpace(sheet.ID) != nil {
		t.Fatalf("sheet delete %+v", v)
	}
}

// ---- Plans ----

func TestDowngradeKeepsSpacesAndCardsAndUpgradeRestoresThem(t *testing.T) {
	ta, w, r := extendedWithWriter(t)
	first := ta.addBookmark(w, testFirstSpaceID, addrs[0], nil, CardFields{Name: ptr("first")})
	alt := ta.createSpace(w, "Alt", SpaceAltcoin)
	altCard := ta.addBookmark(w, alt.ID, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", ptr("ethereum"), CardFields{Note: ptr("eth")})
	sheet := ta.createSpace(w, "Sheet", SpaceSheet)
	ta.storedSpace(sheet.ID).Sheet.Rows = []*SheetRow{{Index: 0, Cells: [5]string{"a", "b", "c", "d", "e"}}}
	btc := ta.createSpace(ta.owner, "Btc", SpaceBitcoin)
	ta.grantSpace(btc.ID, LevelWrite)
	btcCard := ta.addBookmark(ta.owner, btc.ID, addrs[1], nil, CardFields{})
	portfolio := ta.createCard(w, addrs[2])

	before := ta.spacesJSON()
	altVersion := ta.spaceVersion(alt.ID)
	ta.mustOK(ta.owner, &SetPlan{Plan: PlanBase})
	if ta.spacesJSON() != before {
		t.Fatalf("downgrade changed the stored spaces")
	}

	for _, cred := range []Credential{ta.keyCred(w), ta.keyCred(r), ta.ownerCred()} {
		me := ta.mustQuery(cred, MeQuery{}).Body.(MeView)
		if len(me.AccessibleSpaceIDs) != 1 || me.AccessibleSpaceIDs[0] != testFirstSpaceID || me.BookmarkSpaces.Used != 4 || me.BookmarkSpaces.Limit != 1 {
			t.Fatalf("/me after downgrade: %+v", me)
		}
		if me.BookmarkSpaces.Used <= me.BookmarkSpaces.Limit {
			t.Fatalf("used %d does not exceed limit %d", me.BookmarkSpaces.Used, me.BookmarkSpaces.Limit)
		}
		list := bodyAs[SpaceListView](t, ta.mustQuery(cred, ListSpacesQuery{}))
		if len(list.Spaces) != 1 || list.Spaces[0].ID != testFirstSpaceID {
			t.Fatalf("list after downgrade %+v", list.Spaces)
		}
		// The first Space and its card stay readable.
		ta.mustQuery(cred, GetSpaceQuery{SpaceID: testFirstSpaceID})
		ta.mustQuery(cred, GetBookmarkQuery{SpaceID: testFirstSpaceID, CardID: first.ID})
		for _, hidden := range []struct{ space, card string }{{alt.ID, altCard.ID}, {btc.ID, btcCard.ID}, {sheet.ID, ""}} {
			wantCode(t, ta.query(cred, GetSpaceQuery{SpaceID: hidden.space}), CodeNotFound)
			wantCode(t, ta.query(cred, ListBookmarksQuery{SpaceID: hidden.space}), CodeNotFound)
			if hidden.card != "" {
				wantCode(t, ta.query(cred, GetBookmarkQuery{SpaceID: hidden.space, CardID: hidden.card}), CodeNotFound)
			}
		}
	}
	// Writes into hidden Spaces are absent (404) for the write key and
	// for the owner alike.
	for _, p := range []Principal{w, ta.owner} {
		cred := ta.ownerCred()
		if p == w {
			cred = ta.keyCred(w)
		}
		ta.mustFail(CodeNotFound, p, &CreateBookmarkCard{CardID: "card-x", SpaceID: btc.ID, ExpectedSpaceVersion: ta.spaceVersion(btc.ID), Address: addrs[5]})
		wantCode(t, ta.query(cred, ValidateBookmarkQuery{Card: CreateBookmarkCard{SpaceID: btc.ID, ExpectedSpaceVersion: ta.spaceVersion(btc.ID), Address: addrs[5]}}), CodeNotFound)
		ta.mustFail(CodeNotFound, p, &UpdateBookmarkCard{SpaceID: btc.ID, CardID: btcCard.ID, ExpectedVersion: btcCard.Version, CardFields: CardFields{Name: ptr("x")}})
		ta.mustFail(CodeNotFound, p, &DeleteBookmarkCard{SpaceID: alt.ID, CardID: altCard.ID, ExpectedVersion: altCard.Version})
		ta.mustFail(CodeNotFound, p, &UpdateSpace{SpaceID: alt.ID, ExpectedBookmarkRevision: ta.revision(), Name: ptr("x")})
		ta.mustFail(CodeNotFound, p, &DeleteSpace{SpaceID: btc.ID, ExpectedBookmarkRevision: ta.revision(), ExpectedVersion: ta.spaceVersion(btc.ID), ConfirmDeleteCards: true})
		ta.mustFail(CodeNotFound, p, &MoveCard{NewCardID: "card-m", SourceKind: LocationBookmark, SourceID: btcCard.ID, SourceSpaceID: btc.ID,
			DestinationKind: LocationBookmark, DestinationSpaceID: testFirstSpaceID, ExpectedSourceVersion: btcCard.Version, ExpectedDestinationVersion: ptr(ta.spaceVersion(testFirstSpaceID))})
		ta.mustFail(CodeNotFound, p, &MoveCard{NewCardID: "card-m", SourceKind: LocationBookmark, SourceID: first.ID, SourceSpaceID: testFirstSpaceID,
			DestinationKind: LocationBookmark, DestinationSpaceID: btc.ID, ExpectedSourceVersion: first.Version, ExpectedDestinationVersion: ptr(ta.spaceVersion(btc.ID))})
		ta.mustFail(CodeNotFound, p, &MoveCard{NewCardID: "card-m", SourceKind: LocationPortfolio, SourceID: portfolio.ID,
			DestinationKind: LocationBookmark, DestinationSpaceID: btc.ID, ExpectedSourceVersion: portfolio.Version, ExpectedDestinationVersion: ptr(ta.spaceVersion(btc.ID))})
		ta.mustFail(CodeNotFound, p, &MoveCard{NewCardID: "card-m", SourceKind: LocationBookmark, SourceID: btcCard.ID, SourceSpaceID: btc.ID,
			DestinationKind: LocationPortfolio, ExpectedSourceVersion: btcCard.Version})
	}

	ta.mustOK(ta.owner, &SetPlan{Plan: PlanExtended})
	if ta.spacesJSON() != before {
		t.Fatalf("downgrade and upgrade changed the stored spaces:\nbefore %s\nafter  %s", before, ta.spacesJSON())
	}
	me := ta.meFor(ta.keyCred(w))
	if len(me.AccessibleSpaceIDs) != 4 || me.BookmarkSpaces.Used != 4 || me.BookmarkSpaces.Limit != 10 {
		t.Fatalf("/me after upgrade %+v", me)
	}
	got := bodyAs[BookmarkEnvelope](t, ta.mustQuery(ta.keyCred(w), GetBookmarkQuery{SpaceID: alt.ID, CardID: altCard.ID}))
	if got.Card != altCard {
		t.Fatalf("card after upgrade %+v, want %+v", got.Card, altCard)
	}
	if got.Space.Version != altVersion {
		t.Fatalf("space version after upgrade %s, before the downgrade %s", got.Space.Version, altVersion)
	}
	if len(ta.storedSpace(sheet.ID).Sheet.Rows) != 1 {
		t.Fatalf("sheet rows lost")
	}
	// Everything is writable again with the same versions as before.
	ta.mustOK(w, &UpdateBookmarkCard{SpaceID: btc.ID, CardID: btcCard.ID, ExpectedVersion: btcCard.Version, CardFields: CardFields{Name: ptr("back")}})
}

func TestSpaceJSONRoundTripWithSheet(t *testing.T) {
	ta, w, _ := extendedWithWriter(t)
	ta.createSpace(w, "Sheet", SpaceSheet)
	ta.createSpace(w, "Alt", SpaceAltcoin)
	b := ta.snapshot()
	var back Account
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("spaces do not survive a JSON round trip:\n%s\n%s", b, b2)
	}
}

package actors

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
)

// A rendered answer is exactly the JSON of the view the query answers
// (what the edge wrote before answers were rendered in the actor), for
// every principal; a kept one is that same answer, and Forget drops it, so
// that a change applied after it is seen by the next read.
func TestARenderedAnswerIsTheViewsJSONKeptUntilForget(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	agent := ta.addKey(LevelRead)
	c1 := ta.createCard(ta.owner, addrs[0])
	ta.createCard(ta.owner, addrs[1])
	ta.setGrant(c1.ID, LevelRead)
	var kept RenderCache
	for _, cred := range []Credential{ta.ownerCred(), ta.keyCred(agent)} {
		for _, q := range []Query{MeQuery{}, ListPortfolioQuery{}} {
			want, err := json.Marshal(ta.mustQuery(cred, q).Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, kept := range []*RenderCache{nil, &kept, &kept} { // fresh, then rendered and kept, then the kept one
				cred.Now = ta.at
				res := runQuery(ta.a, cred, Render(q), kept)
				if got, rendered := res.Body.(Rendered); !rendered || string(got) != string(want) {
					t.Errorf("%T for %v: rendered %q (%T), want %s", q, cred.Kind, res.Body, res.Body, want)
				}
			}
		}
	}
	ta.setGrant(c1.ID, LevelNone)
	kept.Forget()
	res := runQuery(ta.a, ta.keyCred(agent), Render(ListPortfolioQuery{}), &kept)
	var v PortfolioListView
	if err := json.Unmarshal(res.Body.(Rendered), &v); err != nil || len(v.IncludedCardIDs) != 0 {
		t.Errorf("after the grant went and Forget, the key's list is %s (%v), want no card", res.Body, err)
	}
}

// Only a query whose answer depends on nothing but the state, the
// principal and its capability is rendered: anything else (a Sheet read
// with its own parameters and a time, an authorization) stays as it is;
// and a refusal is never kept.
func TestRenderWrapsOnlyQueriesAnsweredFromStateAlone(t *testing.T) {
	for _, q := range []Query{MeQuery{}, ListPortfolioQuery{}, SheetQuery{SpaceID: "s"}} {
		if _, rendered := Render(q).(RenderedQuery); !rendered {
			t.Errorf("Render(%T) is not rendered", q)
		}
	}
	for _, q := range []Query{AuthQuery{}, GetPortfolioCardQuery{CardID: "x"}, ListKeysQuery{}} {
		if Render(q) != q {
			t.Errorf("Render(%T) changed it", q)
		}
	}
	ta := newTestAccount(t, PlanExtended)
	agent := ta.addKey(LevelRead)
	var kept RenderCache
	wrong := ta.keyCred(agent)
	wrong.Hash = hashOf("not the secret")
	if res := runQuery(ta.a, wrong, Render(MeQuery{}), &kept); res.err == nil || res.err.Code != CodeUnauthorized || kept.size() != 0 {
		t.Errorf("a wrong secret: %+v, %d kept", res, kept.size())
	}
}

// A Sheet read is kept by its filters' values, not by the addresses of
// the strings the edge parsed them into: the same filter asked again is
// the same answer, another filter is another.
func TestASheetReadIsKeptByItsFiltersValues(t *testing.T) {
	a1, a2, other := "bc1qsame", "bc1qsame", "bc1qother"
	same := func(q1, q2 SheetQuery) bool { return q1.keptAs() == q2.keptAs() }
	if !same(SheetQuery{SpaceID: "s", Address: &a1}, SheetQuery{SpaceID: "s", Address: &a2}) {
		t.Error("the same address filter in two strings is kept twice")
	}
	for _, q := range []SheetQuery{
		{SpaceID: "s", Address: &other},
		{SpaceID: "s"},
		{SpaceID: "s", Chain: &a1},
		{SpaceID: "s", Address: &a1, Offset: 1},
		{SpaceID: "t", Address: &a1},
		{SpaceID: "s", Address: &a1, Sparse: true},
		{SpaceID: "s", Address: &a1, Limit: 5},
	} {
		if same(SheetQuery{SpaceID: "s", Address: &a1}, q) {
			t.Errorf("%+v is kept as the read filtered by address %q alone", q, a1)
		}
	}
}

// A long Sheet page comes back as its view, for the edge to render outside
// the actor; a short one (a row looked up by address) is rendered.
func TestALongSheetPageIsNotRenderedInTheActor(t *testing.T) {
	rows := make([]SheetRowView, renderRowsMax+1)
	res := render(Result{Status: 200, Body: SheetView{Rows: rows[:1]}})
	if _, rendered := res.Body.(Rendered); !rendered {
		t.Fatalf("a one-row page came back as %T", res.Body)
	}
	if got := (RenderedQuery{q: fixedSheet{SheetView{Rows: rows}}}).run(nil, Principal{}, LevelRead, 0); !isSheetView(got.Body) {
		t.Errorf("a %d-row page came back as %T, not its view", len(rows), got.Body)
	}
	if got := (RenderedQuery{q: fixedSheet{SheetView{Rows: rows[:renderRowsMax]}}}).run(nil, Principal{}, LevelRead, 0); isSheetView(got.Body) {
		t.Errorf("a %d-row page was not rendered", renderRowsMax)
	}
}

// fixedSheet answers its view whatever the state.
type fixedSheet struct{ v SheetView }

func (f fixedSheet) run(*Account, Principal, Level, int64) Result { return ok(f.v) }
func (f fixedSheet) keptAs() any                                  { return "fixed" }

func isSheetView(body any) bool { _, is := body.(SheetView); return is }

// A kept answer is found by every parameter of its query: a field added
// to a kept query must be added to what it is kept as, or two different
// reads would share one answer. This test names the fields each kept
// query has today, so that adding one fails here first.
func TestKeptQueriesHaveTheFieldsTheirKeysHold(t *testing.T) {
	for q, fields := range map[sameFromState][]string{
		MeQuery{}:            nil,
		ListPortfolioQuery{}: nil,
		SheetQuery{}:         {"SpaceID", "Offset", "Limit", "Sparse", "Address", "Chain"}, // all in sheetKept
	} {
		typ := reflect.TypeOf(q)
		var got []string
		for f := range typ.Fields() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, fields) {
			t.Errorf("%s has the fields %v, its key holds %v: add the new one to its keptAs", typ, got, fields)
		}
		if !reflect.TypeOf(q.keptAs()).Comparable() {
			t.Errorf("%s is kept as a %T, which cannot be a map key", typ, q.keptAs())
		}
	}
}

// size is how many answers are kept.
func (c *RenderCache) size() int {
	if kept := c.kept.Load(); kept != nil {
		return len(kept.answers)
	}
	return 0
}

// A kept answer is given only to the credential that asked for it, as
// Authenticate would judge it against the state it was rendered from: the
// same secret (another secret under the same key ID is refused, not
// answered from what the real key kept), the same kind, and a session
// only until it expires, though the account applied nothing since.
func TestAKeptAnswerIsGivenOnlyToItsOwnCredential(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	agent := ta.addKey(LevelRead)
	expires := ta.at + int64(time.Hour)
	ta.mustOK(systemP, &CreateSession{SessionID: "s1", Hash: hashOf("tok1"), ExpiresAt: expires, PasswordHash: testPasswordHash})
	session := Credential{Kind: CredentialSession, AccountID: ta.id, ID: "s1", Hash: hashOf("tok1"), Now: expires - 1}
	var kept RenderCache
	me := Render(MeQuery{}).(RenderedQuery)
	for _, cred := range []Credential{ta.keyCred(agent), ta.ownerCred(), session} {
		if res := runQuery(ta.a, cred, me, &kept); res.err != nil {
			t.Fatalf("%v: %v", cred.Kind, res.err)
		}
		if _, found := kept.Kept(cred, me); !found {
			t.Errorf("%v's answer was not kept", cred.Kind)
		}
	}
	wrong := ta.keyCred(agent)
	wrong.Hash = hashOf("not the secret")
	if _, found := kept.Kept(wrong, me); found {
		t.Error("another secret under the key's ID was given the key's kept answer")
	}
	if res := runQuery(ta.a, wrong, me, &kept); res.err == nil || res.err.Code != CodeUnauthorized {
		t.Errorf("another secret under the key's ID: %+v, want unauthorized", res)
	}
	asOwner := ta.keyCred(agent)
	asOwner.Kind = CredentialOwnerSecret
	if _, found := kept.Kept(asOwner, me); found {
		t.Error("the key's secret presented as the owner's was given a kept answer")
	}
	late := session
	late.Now = expires
	if _, found := kept.Kept(late, me); found {
		t.Error("an expired session was given its kept answer")
	}
	if res := runQuery(ta.a, late, me, &kept); res.err == nil || res.err.Code != CodeUnauthorized {
		t.Errorf("an expired session: %+v, want unauthorized", res)
	}
	system := Credential{Kind: CredentialSystem, AccountID: ta.id, Now: ta.at}
	runQuery(ta.a, system, me, &kept)
	if _, found := kept.Kept(system, me); found {
		t.Error("the system's read was kept: it authenticates without a secret")
	}
}

// An account keeps at most renderCacheAnswersMax answers: past that it
// starts again, so that keeping one more never copies more than that.
func TestAnAccountKeepsABoundedNumberOfAnswers(t *testing.T) {
	var kept RenderCache
	res := Result{Status: 200, Body: Rendered(`{}`)}
	for i := range renderCacheAnswersMax + 1 {
		kept.keep(renderKey{q: i, kind: CredentialAPIKey, id: "k"}, keptAnswer{res: res}, 2)
		if got, want := kept.size(), i%renderCacheAnswersMax+1; got != want {
			t.Fatalf("after %d answers %d are kept, want %d", i+1, got, want)
		}
	}
}

package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/addrwatch/addrwatch/internal/testaddr"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSpacesEndToEnd drives the Space routes (/v1/bookmark-spaces and
// /owner/v1/bookmark-spaces, with their owner-only grant, plan and type
// controls) over real HTTP: shapes, the create rules (plan, foothold
// grant, revision, capacity), rename, the owner's type change, delete,
// plan downgrade and upgrade, Idempotency-Key, OPTIONS/405 and bad input.
// One server; each subtest has its own account.
func TestSpacesEndToEnd(t *testing.T) {
	t.Parallel()
	s := spStartServer(t)

	t.Run("list_and_get", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "")
		ag, ow := e.agent(e.write), e.owner()
		if l := ag.list(t); len(l.spaces) != 0 {
			t.Fatalf("the first Space starts at grant none, yet the agent lists it: %s", l.raw)
		}
		spCheck(t, "GET ungranted Space", ag.do(t, "GET", "/bookmark-spaces/"+e.first, nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "GET ungranted Space's cards", ag.do(t, "GET", "/bookmark-spaces/"+e.first+"/cards", nil), http.StatusNotFound, "NOT_FOUND")
		if me := e.me(t, e.write); len(spStrings(t, me["accessible_space_ids"], "accessible_space_ids")) != 0 {
			t.Fatalf("/me lists an ungranted Space: %v", me)
		}

		ol := ow.list(t)
		spFields(t, "owner's first Space", ol.spaces[0], map[string]any{"id": e.first, "type": "bitcoin", "grant": "none", "effective_access": "write"})

		e.grant(t, e.first, "read")
		for _, key := range []string{e.write, e.read} {
			l := e.agent(key).list(t)
			if len(l.spaces) != 1 {
				t.Fatalf("agent lists %d Spaces after a read grant: %s", len(l.spaces), l.raw)
			}
			sp := l.spaces[0]
			spFields(t, "listed Space", sp, map[string]any{"id": e.first, "type": "bitcoin", "effective_access": "read", "name": ol.spaces[0]["name"], "version": ol.spaces[0]["version"]})
			if l.rev != ol.rev {
				t.Errorf("bookmark_revision is account-wide, yet the agent sees %q and the owner %q", l.rev, ol.rev)
			}
			got, rev := e.agent(key).get(t, e.first)
			if !reflect.DeepEqual(got, sp) {
				t.Fatalf("GET Space %v, want the listed %v", got, sp)
			}
			if rev != l.rev {
				t.Errorf("GET Space carries bookmark_revision %q, the list %q", rev, l.rev)
			}
		}
		e.grant(t, e.first, "write")
		spFields(t, "write key", e.agent(e.write).list(t).spaces[0], map[string]any{"effective_access": "write"})
		spFields(t, "read key (capability is a ceiling)", e.agent(e.read).list(t).spaces[0], map[string]any{"effective_access": "read"})
		me := e.me(t, e.write)
		spSameSet(t, "accessible_space_ids", spStrings(t, me["accessible_space_ids"], "accessible_space_ids"), []string{e.first})
		if used, limit := spUsage(t, me, "bookmark_spaces"); used != 1 || limit != 1 {
			t.Errorf("base plan bookmark_spaces = %d/%d, want 1/1", used, limit)
		}

		spCheck(t, "GET absent Space", ag.do(t, "GET", "/bookmark-spaces/no-such-space", nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "owner GET absent Space", ow.do(t, "GET", "/bookmark-spaces/no-such-space", nil), http.StatusNotFound, "NOT_FOUND")

		// Each API accepts only its own credential.
		for _, p := range []string{"/bookmark-spaces", "/bookmark-spaces/" + e.first, "/bookmark-spaces/" + e.first + "/cards"} {
			spCheck(t, "no key on /v1"+p, do(t, "GET", s.URL+"/v1"+p, "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
			spCheck(t, "owner secret on /v1"+p, do(t, "GET", s.URL+"/v1"+p, e.acct.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
			spCheck(t, "API key on /owner/v1"+p, do(t, "GET", s.URL+"/owner/v1"+p, e.write, nil), http.StatusUnauthorized, "UNAUTHORIZED")
		}
	})

	t.Run("create_needs_extended_plan", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		rev := ag.list(t).rev
		body := map[string]any{"expected_bookmark_revision": rev, "name": "Second", "type": "bitcoin"}
		spCheck(t, "create on the base plan", ag.do(t, "POST", "/bookmark-spaces", body), http.StatusConflict, "SPACE_FULL")
		spCheck(t, "owner create on the base plan", e.owner().do(t, "POST", "/bookmark-spaces", body), http.StatusConflict, "SPACE_FULL")
		if l := e.owner().list(t); len(l.spaces) != 1 || l.rev != rev {
			t.Fatalf("a refused create changed the Space set: %s", l.raw)
		}

		e.setPlan(t, "extended")
		if used, limit := spUsage(t, e.me(t, e.write), "bookmark_spaces"); used != 1 || limit != 10 {
			t.Errorf("extended plan bookmark_spaces = %d/%d, want 1/10", used, limit)
		}
		r := ag.do(t, "POST", "/bookmark-spaces", body)
		expect(t, r, http.StatusCreated, "")
		m := r.JSON(t)
		sp := spObject(t, m, "space")
		spKeys(t, "created Space", sp, spAgentSpaceKeys)
		spFields(t, "created Space", sp, map[string]any{"name": "Second", "type": "bitcoin", "effective_access": "write"})
		if spStr(sp, "id") == "" || spStr(sp, "version") == "" || spStr(sp, "id") == e.first {
			t.Fatalf("created Space lacks a fresh id or a version: %s", r.Body)
		}
		newRev, _ := m["bookmark_revision"].(string)
		if newRev == "" || newRev == rev {
			t.Fatalf("bookmark_revision after a create is %q, was %q", newRev, rev)
		}
		if got := ag.list(t); got.rev != newRev {
			t.Errorf("list bookmark_revision %q, the create answered %q", got.rev, newRev)
		}
		// Created by an agent: write, account-wide, within each key's ceiling.
		if got, _ := ag.get(t, spID(sp)); !reflect.DeepEqual(got, sp) {
			t.Errorf("GET new Space %v, want %v", got, sp)
		}
		spFields(t, "second write key", spFind(t, e.agent(e.write2).list(t), spID(sp)), map[string]any{"effective_access": "write"})
		spFields(t, "read key", spFind(t, e.agent(e.read).list(t), spID(sp)), map[string]any{"effective_access": "read"})
		spFields(t, "owner", spFind(t, e.owner().list(t), spID(sp)), map[string]any{"grant": "write"})
		if used, _ := spUsage(t, e.me(t, e.read), "bookmark_spaces"); used != 2 {
			t.Errorf("bookmark_spaces.used = %d after a create, want 2", used)
		}
	})

	t.Run("create_needs_a_write_granted_space", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "")
		ag := e.agent(e.write)
		try := func(what, key string, status int, code string) response {
			t.Helper()
			r := e.agent(key).do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": "Foothold", "type": "bitcoin"})
			spCheck(t, what, r, status, code)
			return r
		}
		try("no granted Space", e.write, http.StatusForbidden, "FORBIDDEN")
		e.grant(t, e.first, "read")
		try("only a read-granted Space", e.write, http.StatusForbidden, "FORBIDDEN")
		e.grant(t, e.first, "write")
		try("read-only key", e.read, http.StatusForbidden, "FORBIDDEN")
		if l := e.owner().list(t); len(l.spaces) != 1 {
			t.Fatalf("refused creates made a Space: %s", l.raw)
		}
		try("write-granted Space", e.write, http.StatusCreated, "")
		// A hidden Space does not give a foothold either, but an owner
		// needs none: the owner's Space starts at grant none.
		e.grant(t, e.first, "none")
		r := e.owner().do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": e.owner().list(t).rev, "name": "Owner's", "type": "altcoin"})
		expect(t, r, http.StatusCreated, "")
		spFields(t, "owner-created Space", spObject(t, r.JSON(t), "space"), map[string]any{"grant": "none", "effective_access": "write", "type": "altcoin", "name": "Owner's"})
		if l := ag.list(t); len(l.spaces) != 1 {
			t.Fatalf("agent should see only its own Space, got %s", l.raw)
		}
	})

	t.Run("create_stale_revision_vs_space_full", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag, ow := e.agent(e.write), e.owner()
		rev0 := ag.list(t).rev
		r := ag.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": rev0, "name": "One", "type": "bitcoin"})
		expect(t, r, http.StatusCreated, "")
		for _, stale := range []string{rev0, "v0", "garbage", ""} {
			r := ag.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": stale, "name": "Two", "type": "bitcoin"})
			spCheck(t, fmt.Sprintf("create with revision %q", stale), r, http.StatusConflict, "STALE_VERSION")
		}
		// Hidden Spaces count toward the limit: 1 + 1 + 4 owner + 4 agent = 10.
		for i := range 4 {
			ow.createSpace(t, fmt.Sprintf("Hidden %d", i), "bitcoin")
		}
		for i := range 4 {
			ag.createSpace(t, fmt.Sprintf("Agent %d", i), "altcoin")
		}
		if l := ag.list(t); len(l.spaces) != 6 {
			t.Fatalf("agent sees %d Spaces, want 6 (the first, five of its own): %s", len(l.spaces), l.raw)
		}
		me := e.me(t, e.write)
		if used, limit := spUsage(t, me, "bookmark_spaces"); used != 10 || limit != 10 {
			t.Fatalf("bookmark_spaces = %d/%d, want 10/10 (hidden Spaces count)", used, limit)
		}
		before := e.state(t)
		for _, typ := range []string{"bitcoin", "altcoin", "sheet"} {
			r := ag.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": "Eleventh", "type": typ})
			spCheck(t, "agent create of an 11th "+typ+" Space", r, http.StatusConflict, "SPACE_FULL")
			r = ow.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": ow.list(t).rev, "name": "Eleventh", "type": typ})
			spCheck(t, "owner create of an 11th "+typ+" Space", r, http.StatusConflict, "SPACE_FULL")
		}
		if after := e.state(t); after != before {
			t.Fatalf("SPACE_FULL changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("create_names_and_types", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		before := e.state(t)
		bad := []struct{ what, name, typ string }{
			{"empty name", "", "bitcoin"},
			{"41 characters", strings.Repeat("n", 41), "bitcoin"},
			{"41 two-byte characters", strings.Repeat("é", 41), "bitcoin"},
			{"newline", "two\nlines", "bitcoin"},
			{"tab", "a\tb", "bitcoin"},
			{"NUL", "a\x00b", "bitcoin"},
			{"DEL", "a\x7fb", "bitcoin"},
			{"zero-width space", "a\u200bb", "bitcoin"},
			{"bidi override", "a\u202eb", "bitcoin"},
			{"no-break space", "a\u00a0b", "bitcoin"},
			{"empty type", "Fine", ""},
			{"capitalised type", "Fine", "Bitcoin"},
			{"portfolio type", "Fine", "portfolio"},
			{"plural type", "Fine", "sheets"},
		}
		for _, c := range bad {
			r := ag.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": c.name, "type": c.typ})
			spCheck(t, c.what, r, http.StatusUnprocessableEntity, "VALIDATION")
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused creates changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// Limits count code points; each type is accepted.
		for _, c := range []struct{ name, typ string }{
			{strings.Repeat("n", 40), "bitcoin"},
			{strings.Repeat("é", 40), "altcoin"},
			{strings.Repeat("😀", 40), "sheet"},
			{"x", "bitcoin"},
			{"Spaces & <symbols> 'ok'", "altcoin"},
		} {
			sp := ag.createSpace(t, c.name, c.typ)
			spFields(t, "created Space", sp, map[string]any{"name": c.name, "type": c.typ, "effective_access": "write"})
		}
	})

	t.Run("rename", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag, ow := e.agent(e.write), e.owner()
		sp := ag.createSpace(t, "Before", "bitcoin")
		id, v0 := spID(sp), spStr(sp, "version")
		rev0 := ag.list(t).rev

		r := ag.do(t, "PATCH", "/bookmark-spaces/"+id, map[string]any{"expected_bookmark_revision": rev0, "name": "After"})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		renamed := spObject(t, m, "space")
		spFields(t, "renamed Space", renamed, map[string]any{"id": id, "name": "After", "type": "bitcoin", "effective_access": "write"})
		rev1, _ := m["bookmark_revision"].(string)
		if v := spStr(renamed, "version"); v == "" || v == v0 {
			t.Fatalf("Space version after rename %q, was %q", v, v0)
		}
		if rev1 == "" || rev1 == rev0 {
			t.Fatalf("bookmark_revision after rename %q, was %q", rev1, rev0)
		}
		if got, _ := ag.get(t, id); !reflect.DeepEqual(got, renamed) {
			t.Fatalf("GET after rename %v, want %v", got, renamed)
		}

		before := e.state(t)
		cases := []struct {
			what   string
			c      spClient
			id     string
			body   map[string]any
			status int
			code   string
		}{
			{"stale revision", ag, id, map[string]any{"expected_bookmark_revision": rev0, "name": "Stale"}, http.StatusConflict, "STALE_VERSION"},
			{"empty name", ag, id, map[string]any{"expected_bookmark_revision": rev1, "name": ""}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"41-character name", ag, id, map[string]any{"expected_bookmark_revision": rev1, "name": strings.Repeat("x", 41)}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"control character", ag, id, map[string]any{"expected_bookmark_revision": rev1, "name": "a\nb"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"nothing to change", ag, id, map[string]any{"expected_bookmark_revision": rev1}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"agent type change", ag, id, map[string]any{"expected_bookmark_revision": rev1, "type": "altcoin"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"agent type change to the same type", ag, id, map[string]any{"expected_bookmark_revision": rev1, "type": "bitcoin"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"agent rename with type", ag, id, map[string]any{"expected_bookmark_revision": rev1, "name": "Typed", "type": "sheet"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"read-only key", e.agent(e.read), id, map[string]any{"expected_bookmark_revision": rev1, "name": "Read"}, http.StatusForbidden, "FORBIDDEN"},
			{"absent Space", ag, "no-such-space", map[string]any{"expected_bookmark_revision": rev1, "name": "Nope"}, http.StatusNotFound, "NOT_FOUND"},
			{"owner stale revision", ow, id, map[string]any{"expected_bookmark_revision": rev0, "name": "Stale"}, http.StatusConflict, "STALE_VERSION"},
		}
		for _, c := range cases {
			spCheck(t, c.what, c.c.do(t, "PATCH", "/bookmark-spaces/"+c.id, c.body), c.status, c.code)
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused renames changed the account:\nbefore %s\nafter  %s", before, after)
		}

		// Grants: a read-granted Space refuses (403), a hidden one is absent (404).
		ro := ow.createSpace(t, "Read only", "bitcoin")
		hidden := ow.createSpace(t, "Hidden", "bitcoin")
		e.grant(t, spID(ro), "read")
		rev := ag.list(t).rev
		spCheck(t, "rename read-granted Space", ag.do(t, "PATCH", "/bookmark-spaces/"+spID(ro), map[string]any{"expected_bookmark_revision": rev, "name": "X"}), http.StatusForbidden, "FORBIDDEN")
		spCheck(t, "rename hidden Space", ag.do(t, "PATCH", "/bookmark-spaces/"+spID(hidden), map[string]any{"expected_bookmark_revision": rev, "name": "X"}), http.StatusNotFound, "NOT_FOUND")

		// The owner renames any Space.
		r = ow.do(t, "PATCH", "/bookmark-spaces/"+spID(hidden), map[string]any{"expected_bookmark_revision": ow.list(t).rev, "name": "Renamed by owner"})
		expect(t, r, http.StatusOK, "")
		spFields(t, "owner rename", spObject(t, r.JSON(t), "space"), map[string]any{"name": "Renamed by owner", "grant": "none"})
	})

	t.Run("owner_type_change_clears_grant", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag, ow := e.agent(e.write), e.owner()
		sp := ag.createSpace(t, "Typed", "bitcoin")
		id := spID(sp)

		spCheck(t, "owner unknown type", ow.do(t, "PATCH", "/bookmark-spaces/"+id, map[string]any{"expected_bookmark_revision": ow.list(t).rev, "type": "dogecoin"}), http.StatusUnprocessableEntity, "VALIDATION")
		r := ow.do(t, "PATCH", "/bookmark-spaces/"+id, map[string]any{"expected_bookmark_revision": ow.list(t).rev, "type": "altcoin"})
		expect(t, r, http.StatusOK, "")
		spFields(t, "Space after the owner's type change", spObject(t, r.JSON(t), "space"), map[string]any{"id": id, "type": "altcoin", "grant": "none", "name": "Typed"})

		// The grant is cleared: the Space is gone for every key, at once.
		for _, key := range []string{e.write, e.read} {
			a := e.agent(key)
			spCheck(t, "GET retyped Space", a.do(t, "GET", "/bookmark-spaces/"+id, nil), http.StatusNotFound, "NOT_FOUND")
			spCheck(t, "GET retyped Space's cards", a.do(t, "GET", "/bookmark-spaces/"+id+"/cards", nil), http.StatusNotFound, "NOT_FOUND")
			if l := a.list(t); slices.Contains(spIDs(l.spaces), id) {
				t.Fatalf("retyped Space still listed: %s", l.raw)
			}
			if ids := spStrings(t, e.me(t, key)["accessible_space_ids"], "accessible_space_ids"); slices.Contains(ids, id) {
				t.Fatalf("/me still lists the retyped Space: %v", ids)
			}
		}
		r = ag.do(t, "POST", "/bookmark-spaces/"+id+"/cards", map[string]any{"expected_space_version": "v1", "coin_id": "ethereum", "address": spEthMixed1})
		spCheck(t, "create a card in the retyped Space", r, http.StatusNotFound, "NOT_FOUND")

		// Granted again, it is back with its new type.
		e.grant(t, id, "write")
		got, _ := ag.get(t, id)
		spFields(t, "re-granted Space", got, map[string]any{"id": id, "type": "altcoin", "effective_access": "write"})
		ag.addCard(t, id, map[string]any{"coin_id": "ethereum", "address": spEthMixed1})

		// A Space with cards cannot change type; nothing changes.
		before := e.state(t)
		r = ow.do(t, "PATCH", "/bookmark-spaces/"+id, map[string]any{"expected_bookmark_revision": ow.list(t).rev, "type": "bitcoin"})
		spCheck(t, "type change of a Space with cards", r, http.StatusConflict, "CONFLICT")
		if after := e.state(t); after != before {
			t.Fatalf("refused type change changed the account:\nbefore %s\nafter  %s", before, after)
		}
		if got, _ := ag.get(t, id); got["effective_access"] != "write" {
			t.Fatalf("refused type change cleared the grant: %v", got)
		}
	})

	t.Run("delete", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		sp := ag.createSpace(t, "Doomed", "bitcoin")
		id := spID(sp)
		c1 := ag.addCard(t, id, map[string]any{"address": spAddress("delete-1")})
		staleVersion := ag.version(t, id)
		ag.addCard(t, id, map[string]any{"address": spAddress("delete-2")})
		rev, v := ag.list(t).rev, ag.version(t, id)
		url := "/bookmark-spaces/" + id

		before := e.state(t)
		cases := []struct {
			what   string
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"confirm false", e.write, map[string]any{"expected_bookmark_revision": rev, "expected_version": v, "confirm_delete_cards": false}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"stale revision", e.write, map[string]any{"expected_bookmark_revision": "v1", "expected_version": v, "confirm_delete_cards": true}, http.StatusConflict, "STALE_VERSION"},
			{"stale Space version", e.write, map[string]any{"expected_bookmark_revision": rev, "expected_version": staleVersion, "confirm_delete_cards": true}, http.StatusConflict, "STALE_VERSION"},
			{"card version as Space version", e.write, map[string]any{"expected_bookmark_revision": rev, "expected_version": spStr(c1, "version"), "confirm_delete_cards": true}, http.StatusConflict, "STALE_VERSION"},
			{"read-only key", e.read, map[string]any{"expected_bookmark_revision": rev, "expected_version": v, "confirm_delete_cards": true}, http.StatusForbidden, "FORBIDDEN"},
		}
		for _, c := range cases {
			spCheck(t, c.what, e.agent(c.key).do(t, "DELETE", url, c.body), c.status, c.code)
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused deletes changed the account:\nbefore %s\nafter  %s", before, after)
		}

		r := ag.do(t, "DELETE", url, map[string]any{"expected_bookmark_revision": rev, "expected_version": v, "confirm_delete_cards": true})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if n, isNumber := m["deleted_card_count"].(float64); !isNumber || n != 2 {
			t.Fatalf("deleted_card_count = %v, want 2: %s", m["deleted_card_count"], r.Body)
		}
		if newRev, _ := m["bookmark_revision"].(string); newRev != "" && newRev == rev {
			t.Errorf("bookmark_revision did not change with the delete: %s", r.Body)
		}
		if got := ag.list(t); got.rev == rev || slices.Contains(spIDs(got.spaces), id) {
			t.Fatalf("after delete the list still holds the Space or the old revision: %s", got.raw)
		}
		spCheck(t, "GET deleted Space", ag.do(t, "GET", url, nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "GET deleted Space's cards", ag.do(t, "GET", url+"/cards", nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "GET a deleted Space's card", ag.do(t, "GET", url+"/cards/"+spID(c1), nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "owner GET deleted Space", e.owner().do(t, "GET", url, nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "delete again", ag.do(t, "DELETE", url, map[string]any{"expected_bookmark_revision": ag.list(t).rev, "expected_version": v, "confirm_delete_cards": true}), http.StatusNotFound, "NOT_FOUND")
		if used, _ := spUsage(t, e.me(t, e.write), "bookmark_spaces"); used != 1 {
			t.Fatalf("bookmark_spaces.used = %d after the delete, want 1", used)
		}
		// The deleted cards' addresses are free again elsewhere.
		ag.addCard(t, e.first, map[string]any{"address": spAddress("delete-1")})

		// An empty Sheet Space deletes with a count of 0.
		sheet := ag.createSpace(t, "Grid", "sheet")
		r = ag.do(t, "DELETE", "/bookmark-spaces/"+spID(sheet), map[string]any{"expected_bookmark_revision": ag.list(t).rev, "expected_version": ag.version(t, spID(sheet)), "confirm_delete_cards": true})
		expect(t, r, http.StatusOK, "")
		if n := r.JSON(t)["deleted_card_count"]; n != float64(0) {
			t.Fatalf("empty Sheet Space deleted_card_count = %v", n)
		}
	})

	t.Run("delete_grants_and_last_space", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag, ow := e.agent(e.write), e.owner()
		ro := ow.createSpace(t, "Read only", "bitcoin")
		hidden := ow.createSpace(t, "Hidden", "bitcoin")
		e.grant(t, spID(ro), "read")
		del := func(c spClient, id string) response {
			t.Helper()
			return c.do(t, "DELETE", "/bookmark-spaces/"+id, map[string]any{"expected_bookmark_revision": ow.list(t).rev, "expected_version": ow.version(t, id), "confirm_delete_cards": true})
		}
		before := e.state(t)
		spCheck(t, "delete read-granted Space", del(ag, spID(ro)), http.StatusForbidden, "FORBIDDEN")
		spCheck(t, "delete hidden Space", del(ag, spID(hidden)), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("refused deletes changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// The owner deletes any Space but the last.
		expect(t, del(ow, spID(ro)), http.StatusOK, "")
		expect(t, del(ow, spID(hidden)), http.StatusOK, "")
		before = e.state(t)
		spCheck(t, "agent deletes the last Space", del(ag, e.first), http.StatusConflict, "CONFLICT")
		spCheck(t, "owner deletes the last Space", del(ow, e.first), http.StatusConflict, "CONFLICT")
		if after := e.state(t); after != before {
			t.Fatalf("refused last-Space delete changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// With a second Space the first may go; then the second is last.
		second := ag.createSpace(t, "Second", "altcoin")
		expect(t, del(ag, e.first), http.StatusOK, "")
		spCheck(t, "delete the remaining Space", del(ag, spID(second)), http.StatusConflict, "CONFLICT")
		if l := ag.list(t); !slices.Equal(spIDs(l.spaces), []string{spID(second)}) {
			t.Fatalf("want only the second Space left, got %s", l.raw)
		}
	})

	t.Run("plan_downgrade_and_upgrade", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		second := spID(ag.createSpace(t, "Second", "bitcoin"))
		third := spID(ag.createSpace(t, "Third", "altcoin"))
		ag.addCard(t, e.first, map[string]any{"address": spAddress("plan-first"), "name": "first card"})
		c2 := ag.addCard(t, second, map[string]any{"address": spAddress("plan-second"), "name": "second card", "note": "kept", "color_key": "cyan"})
		ag.addCard(t, second, map[string]any{"address": spAddress("plan-second-2")})
		ag.addCard(t, third, map[string]any{"coin_id": "litecoin", "address": spLtcP2PKH})
		snap := func() map[string]string {
			out := map[string]string{}
			for _, id := range []string{e.first, second, third} {
				out[id] = string(ag.do(t, "GET", "/bookmark-spaces/"+id+"/cards", nil).Body)
			}
			return out
		}
		beforeCards := snap()
		beforeList := ag.list(t)

		e.setPlan(t, "base")
		for _, key := range []string{e.write, e.read} {
			l := e.agent(key).list(t)
			if !slices.Equal(spIDs(l.spaces), []string{e.first}) {
				t.Fatalf("after a downgrade only the first Space is accessible, got %s", l.raw)
			}
			me := e.me(t, key)
			if used, limit := spUsage(t, me, "bookmark_spaces"); used != 3 || limit != 1 {
				t.Errorf("after a downgrade bookmark_spaces = %d/%d, want 3/1 (used may exceed limit)", used, limit)
			}
			spSameSet(t, "accessible_space_ids after a downgrade", spStrings(t, me["accessible_space_ids"], "accessible_space_ids"), []string{e.first})
		}
		for _, id := range []string{second, third} {
			spCheck(t, "GET a Space past the plan", ag.do(t, "GET", "/bookmark-spaces/"+id, nil), http.StatusNotFound, "NOT_FOUND")
			spCheck(t, "list cards of a Space past the plan", ag.do(t, "GET", "/bookmark-spaces/"+id+"/cards", nil), http.StatusNotFound, "NOT_FOUND")
			spCheck(t, "owner GET a Space past the plan", e.owner().do(t, "GET", "/bookmark-spaces/"+id, nil), http.StatusNotFound, "NOT_FOUND")
		}
		spCheck(t, "GET a card past the plan", ag.do(t, "GET", "/bookmark-spaces/"+second+"/cards/"+spID(c2), nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "PATCH a card past the plan", ag.do(t, "PATCH", "/bookmark-spaces/"+second+"/cards/"+spID(c2), map[string]any{"expected_version": c2["version"], "name": "x"}), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "create a card past the plan", ag.do(t, "POST", "/bookmark-spaces/"+second+"/cards", map[string]any{"expected_space_version": "v1", "address": spAddress("plan-new")}), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "rename past the plan", ag.do(t, "PATCH", "/bookmark-spaces/"+second, map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": "x"}), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "create a Space on the base plan", ag.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": "Fourth", "type": "bitcoin"}), http.StatusConflict, "SPACE_FULL")
		// The first Space keeps working.
		firstCards, _ := ag.cards(t, e.first)
		r := ag.do(t, "POST", "/cards/move/validate", map[string]any{"source_kind": "bookmark", "source_id": spID(firstCards[0]), "source_space_id": e.first,
			"destination_kind": "bookmark", "destination_space_id": second, "expected_source_version": firstCards[0]["version"], "expected_destination_version": "v1"})
		spCheck(t, "move into a Space past the plan", r, http.StatusNotFound, "NOT_FOUND")
		if got := ag.do(t, "GET", "/bookmark-spaces/"+e.first+"/cards", nil); string(got.Body) != beforeCards[e.first] {
			t.Errorf("the first Space changed during the downgrade:\nbefore %s\nafter  %s", beforeCards[e.first], got.Body)
		}

		e.setPlan(t, "extended")
		if after := snap(); !reflect.DeepEqual(after, beforeCards) {
			t.Fatalf("an upgrade did not restore the cards untouched:\nbefore %v\nafter  %v", beforeCards, after)
		}
		if after := ag.list(t); !bytes.Equal(after.raw, beforeList.raw) {
			t.Fatalf("an upgrade did not restore the Spaces untouched:\nbefore %s\nafter  %s", beforeList.raw, after.raw)
		}
		if used, limit := spUsage(t, e.me(t, e.write), "bookmark_spaces"); used != 3 || limit != 10 {
			t.Errorf("after the upgrade bookmark_spaces = %d/%d, want 3/10", used, limit)
		}
	})

	t.Run("owner_counterparts", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "")
		ow := e.owner()
		l := ow.list(t)
		spKeys(t, "owner's listed Space", l.spaces[0], spOwnerSpaceKeys)
		got, rev := ow.get(t, e.first)
		if !reflect.DeepEqual(got, l.spaces[0]) || rev != l.rev {
			t.Fatalf("owner GET %v (revision %s), want %v (revision %s)", got, rev, l.spaces[0], l.rev)
		}
		sp := ow.createSpace(t, "Owner space", "bitcoin")
		spFields(t, "owner-created Space", sp, map[string]any{"grant": "none", "effective_access": "write"})
		r := ow.do(t, "PATCH", "/bookmark-spaces/"+spID(sp), map[string]any{"expected_bookmark_revision": ow.list(t).rev, "name": "Renamed"})
		expect(t, r, http.StatusOK, "")
		ow.addCard(t, spID(sp), map[string]any{"address": spAddress("owner-space-card")})
		if l := e.agent(e.write).list(t); len(l.spaces) != 0 {
			t.Fatalf("agent sees Spaces it was never granted: %s", l.raw)
		}
		r = ow.do(t, "DELETE", "/bookmark-spaces/"+spID(sp), map[string]any{"expected_bookmark_revision": ow.list(t).rev, "expected_version": ow.version(t, spID(sp)), "confirm_delete_cards": true})
		expect(t, r, http.StatusOK, "")
		if n := r.JSON(t)["deleted_card_count"]; n != float64(1) {
			t.Fatalf("owner delete deleted_card_count = %v, want 1", n)
		}
		spCheck(t, "owner confirm false", ow.do(t, "DELETE", "/bookmark-spaces/"+e.first, map[string]any{"expected_bookmark_revision": ow.list(t).rev, "expected_version": ow.version(t, e.first), "confirm_delete_cards": false}), http.StatusUnprocessableEntity, "VALIDATION")
		// Grants and plan: owner-only bodies and errors.
		spCheck(t, "grant an absent Space", do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/no-such-space", e.acct.OwnerSecret, map[string]any{"level": "read"}), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "agent sets a grant", do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+e.first, e.write, map[string]any{"level": "write"}), http.StatusUnauthorized, "UNAUTHORIZED")
		spCheck(t, "agent sets the plan", do(t, "PUT", s.URL+"/owner/v1/plan", e.write, map[string]any{"plan": "base"}), http.StatusUnauthorized, "UNAUTHORIZED")
		r = do(t, "PUT", s.URL+"/owner/v1/plan", e.acct.OwnerSecret, map[string]any{"plan": "extended"})
		expect(t, r, http.StatusOK, "")
		if p := r.JSON(t)["plan"]; p != "extended" {
			t.Errorf("PUT plan answered %s", r.Body)
		}
	})

	t.Run("concurrent_creates_one_wins", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		rev := ag.list(t).rev
		bodies := make([][]byte, 8)
		for i := range bodies {
			bodies[i] = []byte(fmt.Sprintf(`{"expected_bookmark_revision":%q,"name":"Racer %d","type":"bitcoin"}`, rev, i))
		}
		got := spConcurrent(t, "POST", s.URL+"/v1/bookmark-spaces", e.write, bodies, nil)
		won := 0
		for i, r := range got {
			switch r.Status {
			case http.StatusCreated:
				won++
			default:
				spCheck(t, fmt.Sprintf("racer %d", i), r, http.StatusConflict, "STALE_VERSION")
			}
		}
		if won != 1 {
			t.Fatalf("%d creates with one revision succeeded, want exactly 1", won)
		}
		if n := len(e.owner().list(t).spaces); n != 2 {
			t.Fatalf("account holds %d Spaces after the race, want 2", n)
		}
	})

	t.Run("idempotent_create", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		const token = "space-create-0001"
		body := map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": "Once", "type": "altcoin"}
		first := ag.do(t, "POST", "/bookmark-spaces", body, spIdem, token)
		expect(t, first, http.StatusCreated, "")
		for _, replay := range []any{body, spReformat(t, body)} {
			r := ag.do(t, "POST", "/bookmark-spaces", replay, spIdem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Fatalf("replay answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
			}
		}
		if n := len(e.owner().list(t).spaces); n != 2 {
			t.Fatalf("replays created Spaces: %d, want 2", n)
		}
		before := e.state(t)
		other := map[string]any{"expected_bookmark_revision": body["expected_bookmark_revision"], "name": "Twice", "type": "altcoin"}
		spCheck(t, "same token, different body", ag.do(t, "POST", "/bookmark-spaces", other, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		spCheck(t, "same token, another route", ag.do(t, "DELETE", "/bookmark-spaces/"+e.first, map[string]any{"expected_bookmark_revision": "v1", "expected_version": "v1", "confirm_delete_cards": true}, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		// Without the header, or with another key's namespace, it is a new request.
		spCheck(t, "retry without the header", ag.do(t, "POST", "/bookmark-spaces", body), http.StatusConflict, "STALE_VERSION")
		spCheck(t, "same token, another key", e.agent(e.write2).do(t, "POST", "/bookmark-spaces", body, spIdem, token), http.StatusConflict, "STALE_VERSION")
		if after := e.state(t); after != before {
			t.Fatalf("refused requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// Access is checked again on replay.
		id := spID(spObject(t, first.JSON(t), "space"))
		e.grant(t, id, "none")
		spCheck(t, "replay after the grant was removed", ag.do(t, "POST", "/bookmark-spaces", body, spIdem, token), http.StatusNotFound, "NOT_FOUND")
		e.grant(t, id, "write")
		if r := ag.do(t, "POST", "/bookmark-spaces", body, spIdem, token); !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("replay after re-grant answered %d %s", r.Status, r.Body)
		}
		// A failed request is not recorded: the token still works.
		const token2 = "space-create-0002"
		stale := map[string]any{"expected_bookmark_revision": "v1", "name": "Later", "type": "bitcoin"}
		spCheck(t, "stale create with a token", ag.do(t, "POST", "/bookmark-spaces", stale, spIdem, token2), http.StatusConflict, "STALE_VERSION")
		fresh := map[string]any{"expected_bookmark_revision": ag.list(t).rev, "name": "Later", "type": "bitcoin"}
		expect(t, ag.do(t, "POST", "/bookmark-spaces", fresh, spIdem, token2), http.StatusCreated, "")
		for _, bad := range []string{"short", strings.Repeat("a", 129), "has space in it!!"} {
			spCheck(t, "malformed token "+bad, ag.do(t, "POST", "/bookmark-spaces", fresh, spIdem, bad), http.StatusUnprocessableEntity, "VALIDATION")
		}
	})

	t.Run("idempotent_delete", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		const token = "space-delete-0001"
		sp := ag.createSpace(t, "Doomed", "bitcoin")
		ag.addCard(t, spID(sp), map[string]any{"address": spAddress("idem-delete")})
		sp2 := ag.createSpace(t, "Other", "bitcoin")
		body := map[string]any{"expected_bookmark_revision": ag.list(t).rev, "expected_version": ag.version(t, spID(sp)), "confirm_delete_cards": true}
		first := ag.do(t, "DELETE", "/bookmark-spaces/"+spID(sp), body, spIdem, token)
		expect(t, first, http.StatusOK, "")
		for _, replay := range []any{body, spReformat(t, body)} {
			r := ag.do(t, "DELETE", "/bookmark-spaces/"+spID(sp), replay, spIdem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Fatalf("replay answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
			}
		}
		if ids := spIDs(e.owner().list(t).spaces); !slices.Equal(ids, []string{e.first, spID(sp2)}) {
			t.Fatalf("Spaces after delete and replays: %v", ids)
		}
		before := e.state(t)
		other := map[string]any{"expected_bookmark_revision": ag.list(t).rev, "expected_version": ag.version(t, spID(sp2)), "confirm_delete_cards": true}
		spCheck(t, "same token, another Space", ag.do(t, "DELETE", "/bookmark-spaces/"+spID(sp2), other, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		changed := map[string]any{"expected_bookmark_revision": body["expected_bookmark_revision"], "expected_version": body["expected_version"], "confirm_delete_cards": false}
		spCheck(t, "same token, different body", ag.do(t, "DELETE", "/bookmark-spaces/"+spID(sp), changed, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		spCheck(t, "retry without the header", ag.do(t, "DELETE", "/bookmark-spaces/"+spID(sp), body), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "same token, another key", e.agent(e.write2).do(t, "DELETE", "/bookmark-spaces/"+spID(sp), body, spIdem, token), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("refused requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("options_and_405", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		spCheckRoutes(t, s, e, []spRoute{
			{"/bookmark-spaces", []string{"GET", "POST"}},
			{"/bookmark-spaces/" + e.first, []string{"GET", "PATCH", "DELETE"}},
		}, []spRoute{
			{"/owner/v1/grants/bookmark-spaces/" + e.first, []string{"PUT"}},
			{"/owner/v1/plan", []string{"PUT"}},
		})
		// The refused methods never ran.
		if l := e.owner().list(t); len(l.spaces) != 1 || l.spaces[0]["name"] != "Bitcoin" {
			t.Fatalf("a refused method changed the Spaces: %s", l.raw)
		}
	})

	t.Run("bad_input", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		sp := ag.createSpace(t, "Target", "bitcoin")
		ag.addCard(t, spID(sp), map[string]any{"address": spAddress("bad-space-card")})
		rev, v := ag.list(t).rev, ag.version(t, spID(sp))
		routes := []spBadRoute{
			{
				name: "create Space", method: "POST", path: "/bookmark-spaces",
				valid: `{"expected_bookmark_revision":"` + rev + `","name":"N","type":"bitcoin"`,
				wrongTypes: []string{
					`{"expected_bookmark_revision":7,"name":"N","type":"bitcoin"}`,
					`{"expected_bookmark_revision":"` + rev + `","name":42,"type":"bitcoin"}`,
					`{"expected_bookmark_revision":"` + rev + `","name":"N","type":true}`,
					`{"expected_bookmark_revision":"` + rev + `","name":["N"],"type":"bitcoin"}`,
				},
				missing: []string{
					`{"name":"N","type":"bitcoin"}`,
					`{"expected_bookmark_revision":"` + rev + `","type":"bitcoin"}`,
					`{"expected_bookmark_revision":"` + rev + `","name":"N"}`,
					`{"expected_bookmark_revision":null,"name":"N","type":"bitcoin"}`,
				},
			},
			{
				name: "rename Space", method: "PATCH", path: "/bookmark-spaces/" + spID(sp),
				valid: `{"expected_bookmark_revision":"` + rev + `","name":"N"`,
				wrongTypes: []string{
					`{"expected_bookmark_revision":1.5,"name":"N"}`,
					`{"expected_bookmark_revision":"` + rev + `","name":{"x":1}}`,
					`{"expected_bookmark_revision":"` + rev + `","name":"N","type":3}`,
				},
				missing: []string{
					`{"name":"N"}`,
					`{"expected_bookmark_revision":"` + rev + `"}`,
				},
			},
			{
				name: "delete Space", method: "DELETE", path: "/bookmark-spaces/" + spID(sp),
				valid: `{"expected_bookmark_revision":"` + rev + `","expected_version":"` + v + `","confirm_delete_cards":true`,
				wrongTypes: []string{
					`{"expected_bookmark_revision":"` + rev + `","expected_version":"` + v + `","confirm_delete_cards":"true"}`,
					`{"expected_bookmark_revision":"` + rev + `","expected_version":"` + v + `","confirm_delete_cards":1}`,
					`{"expected_bookmark_revision":"` + rev + `","expected_version":9,"confirm_delete_cards":true}`,
					`{"expected_bookmark_revision":false,"expected_version":"` + v + `","confirm_delete_cards":true}`,
				},
				missing: []string{
					`{"expected_version":"` + v + `","confirm_delete_cards":true}`,
					`{"expected_bookmark_revision":"` + rev + `","confirm_delete_cards":true}`,
					`{"expected_bookmark_revision":"` + rev + `","expected_version":"` + v + `"}`,
					`{"expected_bookmark_revision":"` + rev + `","expected_version":"` + v + `","confirm_delete_cards":false}`,
				},
			},
		}
		spRunBadInput(t, s, e, routes, true)
		// The owner-only Space controls.
		spRunBadInput(t, s, e, []spBadRoute{
			{
				name: "grant Space", method: "PUT", absPath: "/owner/v1/grants/bookmark-spaces/" + spID(sp), valid: `{"level":"read"`,
				wrongTypes: []string{`{"level":2}`, `{"level":"admin"}`, `{"level":"WRITE"}`, `{"level":["read"]}`},
				missing:    []string{`{}`},
			},
			{
				name: "set plan", method: "PUT", absPath: "/owner/v1/plan", valid: `{"plan":"base"`,
				wrongTypes: []string{`{"plan":1}`, `{"plan":"gold"}`, `{"plan":"Extended"}`},
				missing:    []string{`{}`},
			},
		}, false)
	})
}

// spIdem is the idempotency header's name.
const spIdem = "Idempotency-Key"

// Altcoin addresses published in chain/altcoin_test.go.
const (
	spEthMixed1   = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	spEthMixed2   = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
	spEthCaps1    = "0x52908400098527886E0F7030069857D2E4169EE7"
	spLtcP2PKH    = "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA"
	spDogeP2PKH   = "DEQU7G2Chw4r1gSKZt2GfKBpGbkbQSwp3S"
	spBchP2KH     = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
	spTronExample = "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH"
	spSolToken    = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	spXRPGenesis  = "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"
)

// spAgentSpaceKeys are the fields of a Space an agent sees; the owner
// also sees the grant it set.
var (
	spAgentSpaceKeys = []string{"id", "version", "type", "name", "effective_access"}
	spOwnerSpaceKeys = []string{"id", "version", "type", "name", "effective_access", "grant"}
)

// spStartServer starts the one server of a top-level test and drops the
// client's idle connections before the server stops.
func spStartServer(t *testing.T) *server {
	t.Helper()
	s := startServer(t)
	t.Cleanup(func() {
		httpClient.CloseIdleConnections()
		if tr, isTransport := http.DefaultTransport.(*http.Transport); isTransport {
			tr.CloseIdleConnections()
		}
	})
	return s
}

// spEnv is a fresh account: two write keys, a read key and the id of the
// Space every account starts with.
type spEnv struct {
	s                   *server
	acct                account
	write, write2, read string
	first               string
}

// spSetup creates an account of plan and, when firstGrant is not empty,
// grants the first Space at that level.
func spSetup(t testing.TB, s *server, plan, firstGrant string) spEnv {
	t.Helper()
	e := spEnv{s: s, acct: s.createAccount(t, plan)}
	e.write = s.createKey(t, e.acct, "write")
	e.write2 = s.createKey(t, e.acct, "write")
	e.read = s.createKey(t, e.acct, "read")
	l := e.owner().list(t)
	if len(l.spaces) != 1 {
		t.Fatalf("a new account has %d Spaces, want 1: %s", len(l.spaces), l.raw)
	}
	e.first = spID(l.spaces[0])
	if firstGrant != "" {
		e.grant(t, e.first, firstGrant)
	}
	return e
}

// spClient is one caller on one API: an agent key on /v1 or the owner
// secret on /owner/v1.
type spClient struct {
	base   string
	bearer string
	owner  bool
}

func (e spEnv) agent(key string) spClient { return spClient{base: e.s.URL + "/v1", bearer: key} }
func (e spEnv) owner() spClient {
	return spClient{base: e.s.URL + "/owner/v1", bearer: e.acct.OwnerSecret, owner: true}
}

func (c spClient) do(t testing.TB, method, path string, body any, headers ...string) response {
	t.Helper()
	return do(t, method, c.base+path, c.bearer, body, headers...)
}

// spSpaceList is a decoded GET /bookmark-spaces.
type spSpaceList struct {
	spaces []map[string]any
	rev    string
	raw    []byte
}

// list reads the Spaces and checks the list's shape.
func (c spClient) list(t testing.TB) spSpaceList {
	t.Helper()
	r := c.do(t, "GET", "/bookmark-spaces", nil)
	expect(t, r, http.StatusOK, "")
	var body struct {
		Spaces []map[string]any `json:"spaces"`
		Rev    *string          `json:"bookmark_revision"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("Space list: %v\n%s", err, r.Body)
	}
	if body.Spaces == nil || body.Rev == nil || *body.Rev == "" {
		t.Fatalf("Space list lacks spaces or bookmark_revision: %s", r.Body)
	}
	want := spAgentSpaceKeys
	if c.owner {
		want = spOwnerSpaceKeys
	}
	for _, sp := range body.Spaces {
		spKeys(t, "listed Space", sp, want)
	}
	return spSpaceList{spaces: body.Spaces, rev: *body.Rev, raw: r.Body}
}

// get reads one Space: the {space} object and the bookmark revision.
func (c spClient) get(t testing.TB, id string) (map[string]any, string) {
	t.Helper()
	r := c.do(t, "GET", "/bookmark-spaces/"+id, nil)
	expect(t, r, http.StatusOK, "")
	m := r.JSON(t)
	sp := spObject(t, m, "space")
	if spStr(sp, "version") == "" {
		t.Fatalf("GET Space has no space.version: %s", r.Body)
	}
	rev, _ := m["bookmark_revision"].(string)
	return sp, rev
}

// version is a Space's current version.
func (c spClient) version(t testing.TB, id string) string {
	t.Helper()
	sp, _ := c.get(t, id)
	return spStr(sp, "version")
}

// createSpace creates a Space at the current revision.
func (c spClient) createSpace(t testing.TB, name, typ string) map[string]any {
	t.Helper()
	r := c.do(t, "POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": c.list(t).rev, "name": name, "type": typ})
	expect(t, r, http.StatusCreated, "")
	return spObject(t, r.JSON(t), "space")
}

// cards lists a Space's cards and returns them with the nested space.
func (c spClient) cards(t testing.TB, spaceID string) ([]map[string]any, map[string]any) {
	t.Helper()
	r := c.do(t, "GET", "/bookmark-spaces/"+spaceID+"/cards", nil)
	expect(t, r, http.StatusOK, "")
	var body struct {
		Cards []map[string]any `json:"cards"`
		Space map[string]any   `json:"space"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("card list: %v\n%s", err, r.Body)
	}
	if body.Cards == nil || spStr(body.Space, "version") == "" || spID(body.Space) != spaceID {
		t.Fatalf("card list lacks cards or space.version: %s", r.Body)
	}
	return body.Cards, body.Space
}

// addCard creates a bookmark card; expected_space_version is read first
// unless body carries one.
func (c spClient) addCard(t testing.TB, spaceID string, body map[string]any) map[string]any {
	t.Helper()
	b := map[string]any{}
	for k, v := range body {
		b[k] = v
	}
	if _, has := b["expected_space_version"]; !has {
		b["expected_space_version"] = c.version(t, spaceID)
	}
	r := c.do(t, "POST", "/bookmark-spaces/"+spaceID+"/cards", b)
	expect(t, r, http.StatusCreated, "")
	return spObject(t, r.JSON(t), "card")
}

// card reads one bookmark card.
func (c spClient) card(t testing.TB, spaceID, cardID string) map[string]any {
	t.Helper()
	r := c.do(t, "GET", "/bookmark-spaces/"+spaceID+"/cards/"+cardID, nil)
	expect(t, r, http.StatusOK, "")
	return spObject(t, r.JSON(t), "card")
}

// grant sets the agent grant on a Space.
func (e spEnv) grant(t testing.TB, spaceID, level string) {
	t.Helper()
	r := do(t, "PUT", e.s.URL+"/owner/v1/grants/bookmark-spaces/"+spaceID, e.acct.OwnerSecret, map[string]any{"level": level})
	expect(t, r, http.StatusOK, "")
}

// grantCard sets the agent grant on an Account card.
func (e spEnv) grantCard(t testing.TB, cardID, level string) {
	t.Helper()
	r := do(t, "PUT", e.s.URL+"/owner/v1/grants/portfolio/"+cardID, e.acct.OwnerSecret, map[string]any{"level": level})
	expect(t, r, http.StatusOK, "")
}

// setPlan changes the account's plan.
func (e spEnv) setPlan(t testing.TB, plan string) {
	t.Helper()
	r := do(t, "PUT", e.s.URL+"/owner/v1/plan", e.acct.OwnerSecret, map[string]any{"plan": plan})
	expect(t, r, http.StatusOK, "")
}

// me reads GET /v1/me.
func (e spEnv) me(t testing.TB, key string) map[string]any {
	t.Helper()
	r := do(t, "GET", e.s.URL+"/v1/me", key, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// state is everything the owner sees: the Space list, each Space's cards
// and the Account cards, as raw bodies.
func (e spEnv) state(t testing.TB) string {
	t.Helper()
	ow := e.owner()
	l := ow.list(t)
	var b strings.Builder
	b.Write(l.raw)
	for _, sp := range l.spaces {
		r := ow.do(t, "GET", "/bookmark-spaces/"+spID(sp)+"/cards", nil)
		expect(t, r, http.StatusOK, "")
		b.WriteString("\n")
		b.Write(r.Body)
	}
	r := ow.do(t, "GET", "/portfolio/cards", nil)
	expect(t, r, http.StatusOK, "")
	b.WriteString("\n")
	b.Write(r.Body)
	return b.String()
}

// spAddress returns a valid, distinct Bitcoin mainnet P2PKH address for seed.
func spAddress(seed string) string { return testaddr.P2PKH("addrwatch-spaces-test:" + seed) }

func spID(m map[string]any) string { return spStr(m, "id") }

func spStr(m map[string]any, key string) string {
	v, _ := m[key].(string)
	return v
}

func spIDs(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, m := range items {
		out = append(out, spID(m))
	}
	return out
}

// spFind returns the listed Space with id.
func spFind(t testing.TB, l spSpaceList, id string) map[string]any {
	t.Helper()
	for _, sp := range l.spaces {
		if spID(sp) == id {
			return sp
		}
	}
	t.Fatalf("Space %s not listed: %s", id, l.raw)
	return nil
}

// spObject returns the object under key.
func spObject(t testing.TB, m map[string]any, key string) map[string]any {
	t.Helper()
	o, isObject := m[key].(map[string]any)
	if !isObject {
		t.Fatalf("response has no %q object: %v", key, m)
	}
	return o
}

// spFields fails unless each field of want equals the object's.
func spFields(t testing.TB, what string, obj, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if !reflect.DeepEqual(obj[k], v) {
			t.Fatalf("%s: field %s = %#v, want %#v (object %v)", what, k, obj[k], v, obj)
		}
	}
}

// spKeys fails unless the object has exactly the fields named.
func spKeys(t testing.TB, what string, obj map[string]any, want []string) {
	t.Helper()
	got := make([]string, 0, len(obj))
	for k := range obj {
		got = append(got, k)
	}
	spSameSet(t, what+" fields", got, want)
}

func spSameSet(t testing.TB, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func spStrings(t testing.TB, v any, what string) []string {
	t.Helper()
	arr, isArray := v.([]any)
	if !isArray {
		t.Fatalf("%s is not an array: %v", what, v)
	}
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, isString := x.(string)
		if !isString {
			t.Fatalf("%s holds a non-string: %v", what, v)
		}
		out = append(out, s)
	}
	return out
}

// spUsage returns /me's used and limit for field.
func spUsage(t testing.TB, me map[string]any, field string) (used, limit int) {
	t.Helper()
	u, isObject := me[field].(map[string]any)
	if !isObject {
		t.Fatalf("/me has no %s object: %v", field, me)
	}
	usedN, ok1 := u["used"].(float64)
	limitN, ok2 := u["limit"].(float64)
	if !ok1 || !ok2 {
		t.Fatalf("/me %s has no numeric used and limit: %v", field, u)
	}
	return int(usedN), int(limitN)
}

// spCheck reports (and continues) unless r has the status and, for an
// error, the {"code","error"} body with code.
func spCheck(t testing.TB, what string, r response, status int, code string) {
	t.Helper()
	apExpect(t, what, r, status, code)
}

// spSame reports unless two answers have the same status and error code
// (a validate and its write).
func spSame(t testing.TB, what string, validate, write response) {
	t.Helper()
	code := func(r response) any {
		var m map[string]any
		json.Unmarshal(r.Body, &m)
		return m["code"]
	}
	if validate.Status != write.Status || code(validate) != code(write) {
		t.Errorf("%s: validate answered %d %s, the write %d %s", what, validate.Status, validate.Body, write.Status, write.Body)
	}
}

// spReformat renders body as the same JSON with its members in reverse
// order and extra whitespace: the same request to the idempotency check.
func spReformat(t testing.TB, body map[string]any) string {
	t.Helper()
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	var b strings.Builder
	b.WriteString("{\n")
	for i, k := range keys {
		kj, _ := json.Marshal(k)
		vj, err := json.Marshal(body[k])
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString(" ,\n")
		}
		fmt.Fprintf(&b, "\t%s :  %s", kj, vj)
	}
	b.WriteString("\n}\n")
	return b.String()
}

// spRoute is a path (relative to /v1 and /owner/v1, or absolute when it
// starts with /owner/) and its methods.
type spRoute struct {
	path    string
	methods []string
}

// spCheckRoutes checks OPTIONS (204 with Allow) and every other method
// (405 with Allow and the error body) on each route, over /v1 and
// /owner/v1 for the shared ones.
func spCheckRoutes(t *testing.T, s *server, e spEnv, shared, ownerOnly []spRoute) {
	t.Helper()
	type target struct {
		url, bearer string
		methods     []string
	}
	var targets []target
	for _, rt := range shared {
		targets = append(targets,
			target{s.URL + "/v1" + rt.path, e.write, rt.methods},
			target{s.URL + "/owner/v1" + rt.path, e.acct.OwnerSecret, rt.methods})
	}
	for _, rt := range ownerOnly {
		targets = append(targets, target{s.URL + rt.path, e.acct.OwnerSecret, rt.methods})
	}
	for _, tg := range targets {
		want := append(slices.Clone(tg.methods), "OPTIONS")
		slices.Sort(want)
		for _, bearer := range []string{"", tg.bearer} {
			r := do(t, "OPTIONS", tg.url, bearer, nil)
			if r.Status != http.StatusNoContent || len(r.Body) != 0 {
				t.Errorf("OPTIONS %s: %d %q, want 204 without a body", tg.url, r.Status, r.Body)
			}
			if got := spAllow(r.Header); !slices.Equal(got, want) {
				t.Errorf("OPTIONS %s: Allow %v, want %v", tg.url, got, want)
			}
		}
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if slices.Contains(tg.methods, m) {
				continue
			}
			r := do(t, m, tg.url, tg.bearer, `{}`)
			spCheck(t, m+" "+tg.url, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
			if got := spAllow(r.Header); !slices.Equal(got, want) {
				t.Errorf("%s %s: Allow %v, want %v", m, tg.url, got, want)
			}
		}
		// A trailing slash redirects to the path without it.
		r := do(t, tg.methods[0], tg.url+"/", tg.bearer, nil)
		if r.Status != http.StatusTemporaryRedirect || !strings.HasSuffix(tg.url, r.Header.Get("Location")) || r.Header.Get("Location") == "" {
			t.Errorf("%s %s/: %d Location %q, want 307 to the path", tg.methods[0], tg.url, r.Status, r.Header.Get("Location"))
		}
	}
}

// spConcurrent sends one request per body at once (each with the
// headers) and returns the answers in body order.
func spConcurrent(t testing.TB, method, url, bearer string, bodies [][]byte, headers []string) []response {
	t.Helper()
	out := make([]response, len(bodies))
	errs := make([]error, len(bodies))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = apRaw(method, url, bearer, b, "application/json", headers...)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent request %d: %v", i, err)
		}
	}
	return out
}

func spAllow(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// spBadRoute is a write route with a valid body (as JSON text without its
// closing brace) and route-specific bad bodies.
type spBadRoute struct {
	name, method string
	path         string // relative to /v1 and /owner/v1
	absPath      string // an owner-only path, used as is
	valid        string
	wrongTypes   []string
	missing      []string
}

// spRunBadInput sends malformed bodies to each route (over /v1 and
// /owner/v1 when shared is true) and expects 422 VALIDATION with the
// error body for each, and the account unchanged.
func spRunBadInput(t *testing.T, s *server, e spEnv, routes []spBadRoute, shared bool) {
	t.Helper()
	before := e.state(t)
	const ct = "application/json"
	for _, rt := range routes {
		firstMember := rt.valid[1:]
		if i := strings.Index(firstMember, `,"`); i >= 0 {
			firstMember = firstMember[:i]
		}
		generic := []struct {
			what, body, contentType string
		}{
			{"cut short", rt.valid, ct},
			{"trailing comma", rt.valid + `,}`, ct},
			{"unquoted key", `{name: "x"}`, ct},
			{"single quotes", `{'name':'x'}`, ct},
			{"two objects", rt.valid + `}{}`, ct},
			{"array", `[` + rt.valid + `}]`, ct},
			{"string", `"x"`, ct},
			{"number", `42`, ct},
			{"null", `null`, ct},
			{"empty body", ``, ct},
			{"unknown field", rt.valid + `,"bogus":1}`, ct},
			{"field in other case", rt.valid + `,"NAME":"x"}`, ct},
			{"unknown nested field", rt.valid + `,"space":{"id":"x"}}`, ct},
			{"no content type", rt.valid + `}`, ""},
			{"text/plain", rt.valid + `}`, "text/plain"},
			{"invalid UTF-8", rt.valid + `,"name":"` + "\xff\xfe" + `"}`, ct},
			{"duplicate member", rt.valid + `,` + firstMember + `}`, ct},
			{"body over 64 KiB", rt.valid + `,"note":"` + strings.Repeat("x", 70<<10) + `"}`, ct},
		}
		var urls []struct{ url, bearer string }
		if rt.absPath != "" {
			urls = append(urls, struct{ url, bearer string }{s.URL + rt.absPath, e.acct.OwnerSecret})
		} else {
			urls = append(urls, struct{ url, bearer string }{s.URL + "/v1" + rt.path, e.write})
			if shared {
				urls = append(urls, struct{ url, bearer string }{s.URL + "/owner/v1" + rt.path, e.acct.OwnerSecret})
			}
		}
		for _, u := range urls {
			for _, g := range generic {
				r, err := apRaw(rt.method, u.url, u.bearer, []byte(g.body), g.contentType)
				if err != nil {
					t.Fatalf("%s %s: %v", rt.method, u.url, err)
				}
				spCheck(t, rt.name+" ("+u.url+"): "+g.what, r, http.StatusUnprocessableEntity, "VALIDATION")
			}
			for _, b := range rt.wrongTypes {
				spCheck(t, rt.name+" ("+u.url+") wrong type "+b, do(t, rt.method, u.url, u.bearer, b), http.StatusUnprocessableEntity, "VALIDATION")
			}
			for _, b := range rt.missing {
				spCheck(t, rt.name+" ("+u.url+") missing field "+b, do(t, rt.method, u.url, u.bearer, b), http.StatusUnprocessableEntity, "VALIDATION")
			}
		}
	}
	if after := e.state(t); after != before {
		t.Fatalf("bad input changed the account:\nbefore %s\nafter  %s", before, after)
	}
}

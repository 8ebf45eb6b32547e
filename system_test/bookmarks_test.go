package system_test

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestBookmarkCardsEndToEnd drives the bookmark card routes
// (/v1/bookmark-spaces/{id}/cards... and the owner's counterparts) over
// real HTTP: shapes, the Space version on create, validate, edit, delete,
// capacity, duplicates, the Bitcoin and altcoin address rules, grant
// inheritance, Idempotency-Key, OPTIONS/405 and bad input. One server;
// each subtest has its own account.
func TestBookmarkCardsEndToEnd(t *testing.T) {
	t.Parallel()
	s := spStartServer(t)

	t.Run("create_list_get", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		cards, sp := ag.cards(t, e.first)
		if len(cards) != 0 {
			t.Fatalf("new Space lists cards: %v", cards)
		}
		spKeys(t, "list's space", sp, spAgentSpaceKeys)
		v0 := spStr(sp, "version")

		addr := spAddress("create")
		r := ag.do(t, "POST", "/bookmark-spaces/"+e.first+"/cards", map[string]any{"expected_space_version": v0, "address": addr, "name": "Cold storage", "note": "line one\nline two\ttab", "color_key": "teal"})
		expect(t, r, http.StatusCreated, "")
		m := r.JSON(t)
		card := spObject(t, m, "card")
		spKeys(t, "created card", card, spBookmarkKeys)
		spFields(t, "created card", card, map[string]any{"effective_access": "write", "address": addr, "name": "Cold storage", "note": "line one\nline two\ttab", "color_key": "teal"})
		if spID(card) == "" || spStr(card, "version") == "" {
			t.Fatalf("created card lacks id or version: %s", r.Body)
		}
		respSpace := spObject(t, m, "space")
		v1 := spStr(respSpace, "version")
		if spID(respSpace) != e.first || v1 == "" || v1 == v0 {
			t.Fatalf("create answered space %v; the Space version must change from %s", respSpace, v0)
		}

		cards, sp = ag.cards(t, e.first)
		if len(cards) != 1 || !reflect.DeepEqual(cards[0], card) {
			t.Fatalf("list %v, want the created card %v", cards, card)
		}
		if spStr(sp, "version") != v1 {
			t.Fatalf("list space.version %v, the create answered %s", sp["version"], v1)
		}
		if got := ag.card(t, e.first, spID(card)); !reflect.DeepEqual(got, card) {
			t.Fatalf("GET card %v, want %v", got, card)
		}
		r = ag.do(t, "GET", "/bookmark-spaces/"+e.first+"/cards/"+spID(card), nil)
		if sv := spStr(spObject(t, r.JSON(t), "space"), "version"); sv != v1 {
			t.Errorf("GET card's space.version %q, want %q", sv, v1)
		}
		// The Space's version moved; GET /bookmark-spaces/{id} agrees.
		if got := ag.version(t, e.first); got != v1 {
			t.Errorf("GET Space version %q, the create answered %q", got, v1)
		}

		// Only the version and the address are required; the rest default.
		min := ag.addCard(t, e.first, map[string]any{"address": spAddress("create-min")})
		spFields(t, "minimal card", min, map[string]any{"name": "", "note": "", "effective_access": "write"})
		if !slices.Contains(spColorKeys, spStr(min, "color_key")) {
			t.Fatalf("default color_key %v is not an allowed one", min["color_key"])
		}
		if spID(min) == spID(card) {
			t.Fatalf("two cards share id %s", spID(card))
		}
		// Read access: the read key sees the cards at read.
		rc, _ := e.agent(e.read).cards(t, e.first)
		for _, c := range rc {
			if c["effective_access"] != "read" {
				t.Fatalf("read key sees a card at %v", c["effective_access"])
			}
		}
		spCheck(t, "GET absent card", ag.do(t, "GET", "/bookmark-spaces/"+e.first+"/cards/no-such-card", nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "GET card under an absent Space", ag.do(t, "GET", "/bookmark-spaces/no-such-space/cards/"+spID(card), nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "list cards of an absent Space", ag.do(t, "GET", "/bookmark-spaces/no-such-space/cards", nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "no key", do(t, "GET", s.URL+"/v1/bookmark-spaces/"+e.first+"/cards/"+spID(card), "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	})

	t.Run("card_belongs_to_its_space", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		other := spID(ag.createSpace(t, "Other", "bitcoin"))
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("belongs")})
		before := e.state(t)
		url := "/bookmark-spaces/" + other + "/cards/" + spID(c)
		spCheck(t, "GET through another Space", ag.do(t, "GET", url, nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "PATCH through another Space", ag.do(t, "PATCH", url, map[string]any{"expected_version": c["version"], "name": "x"}), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "DELETE through another Space", ag.do(t, "DELETE", url, map[string]any{"expected_version": c["version"]}), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("requests through another Space changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// The same address may live in two Spaces.
		ag.addCard(t, other, map[string]any{"address": spAddress("belongs")})
	})

	t.Run("validate_changes_nothing", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		alt := spID(ag.createSpace(t, "Alt", "altcoin"))
		ag.addCard(t, e.first, map[string]any{"address": spAddress("v-existing")})
		before := e.state(t)
		for _, c := range []struct {
			space string
			body  map[string]any
		}{
			{e.first, map[string]any{"address": spAddress("v-new")}},
			{e.first, map[string]any{"address": spAddress("v-new"), "name": "n", "note": "o", "color_key": "pink"}},
			{alt, map[string]any{"address": spEthMixed1, "coin_id": "ethereum"}},
			{alt, map[string]any{"address": "my own chain: abc-123", "coin_id": "unknown"}},
		} {
			c.body["expected_space_version"] = ag.version(t, c.space)
			r := ag.do(t, "POST", "/bookmark-spaces/"+c.space+"/cards/validate", c.body)
			expect(t, r, http.StatusOK, "")
			if got := r.JSON(t); !reflect.DeepEqual(got, map[string]any{"valid": true}) {
				t.Fatalf("validate answered %s, want {\"valid\":true}", r.Body)
			}
		}
		if after := e.state(t); after != before {
			t.Fatalf("validate changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// The version validated against is still current: the write succeeds.
		v := ag.version(t, e.first)
		expect(t, ag.do(t, "POST", "/bookmark-spaces/"+e.first+"/cards/validate", map[string]any{"expected_space_version": v, "address": spAddress("v-new")}), http.StatusOK, "")
		ag.addCard(t, e.first, map[string]any{"expected_space_version": v, "address": spAddress("v-new")})
		// A full Space still validates nothing into it, and validation
		// does not use capacity: 9 validates at 9 cards leave room for one.
		for i := range 7 {
			ag.addCard(t, e.first, map[string]any{"address": spAddress(fmt.Sprintf("v-fill-%d", i))})
		}
		for i := range 9 {
			expect(t, ag.do(t, "POST", "/bookmark-spaces/"+e.first+"/cards/validate", map[string]any{"expected_space_version": ag.version(t, e.first), "address": spAddress(fmt.Sprintf("v-probe-%d", i))}), http.StatusOK, "")
		}
		ag.addCard(t, e.first, map[string]any{"address": spAddress("v-tenth")})
	})

	t.Run("blocked_validate_answers_like_the_write", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag, ow := e.agent(e.write), e.owner()
		alt := spID(ag.createSpace(t, "Alt", "altcoin"))
		sheet := spID(ag.createSpace(t, "Grid", "sheet"))
		full := spID(ag.createSpace(t, "Full", "bitcoin"))
		ro := spID(ow.createSpace(t, "Read only", "bitcoin"))
		hidden := spID(ow.createSpace(t, "Hidden", "bitcoin"))
		e.grant(t, ro, "read")
		dup := spAddress("blocked-dup")
		ag.addCard(t, e.first, map[string]any{"address": dup})
		ag.addCard(t, alt, map[string]any{"coin_id": "ethereum", "address": spEthMixed1})
		fullStale := ow.version(t, full)
		for i := range 10 {
			ag.addCard(t, full, map[string]any{"address": spAddress(fmt.Sprintf("blocked-full-%d", i))})
		}
		firstStale := ow.version(t, e.first)
		ag.addCard(t, e.first, map[string]any{"address": spAddress("blocked-bump")})

		fresh := spAddress("blocked-new")
		cases := []struct {
			what   string
			key    string
			space  string
			body   map[string]any // expected_space_version added unless present
			status int
			code   string
		}{
			{"read-only key", e.read, e.first, map[string]any{"address": fresh}, http.StatusForbidden, "FORBIDDEN"},
			{"read-granted Space", e.write, ro, map[string]any{"address": fresh}, http.StatusForbidden, "FORBIDDEN"},
			{"hidden Space", e.write, hidden, map[string]any{"address": fresh}, http.StatusNotFound, "NOT_FOUND"},
			{"absent Space", e.write, "no-such-space", map[string]any{"address": fresh, "expected_space_version": "v1"}, http.StatusNotFound, "NOT_FOUND"},
			{"stale Space version", e.write, e.first, map[string]any{"address": fresh, "expected_space_version": firstStale}, http.StatusConflict, "STALE_VERSION"},
			{"duplicate address", e.write, e.first, map[string]any{"address": dup}, http.StatusConflict, "DUPLICATE_ADDRESS"},
			{"duplicate altcoin address", e.write, alt, map[string]any{"coin_id": "ethereum", "address": spEthMixed1}, http.StatusConflict, "DUPLICATE_ADDRESS"},
			{"full Space", e.write, full, map[string]any{"address": fresh}, http.StatusConflict, "BOOKMARK_FULL"},
			{"full Space, stale version", e.write, full, map[string]any{"address": fresh, "expected_space_version": fullStale}, http.StatusConflict, "STALE_VERSION"},
			{"invalid address", e.write, e.first, map[string]any{"address": "not an address"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"coin_id in a bitcoin Space", e.write, e.first, map[string]any{"address": fresh, "coin_id": "ethereum"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"altcoin Space without coin_id", e.write, alt, map[string]any{"address": spEthMixed2}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"unsupported coin", e.write, alt, map[string]any{"address": spEthMixed2, "coin_id": "monero"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"Sheet Space", e.write, sheet, map[string]any{"address": fresh}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"bad color", e.write, e.first, map[string]any{"address": fresh, "color_key": "purple"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"101-character name", e.write, e.first, map[string]any{"address": fresh, "name": strings.Repeat("n", 101)}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"control character in name", e.write, e.first, map[string]any{"address": fresh, "name": "a\nb"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"control character in note", e.write, e.first, map[string]any{"address": fresh, "note": "bell\u0007"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"1001-character note", e.write, e.first, map[string]any{"address": fresh, "note": strings.Repeat("o", 1001)}, http.StatusUnprocessableEntity, "VALIDATION"},
		}
		before := e.state(t)
		for _, c := range cases {
			if _, has := c.body["expected_space_version"]; !has {
				c.body["expected_space_version"] = ow.version(t, c.space)
			}
			a := e.agent(c.key)
			v := a.do(t, "POST", "/bookmark-spaces/"+c.space+"/cards/validate", c.body)
			w := a.do(t, "POST", "/bookmark-spaces/"+c.space+"/cards", c.body)
			spSame(t, c.what, v, w)
			spCheck(t, c.what+" (validate)", v, c.status, c.code)
			spCheck(t, c.what+" (write)", w, c.status, c.code)
		}
		if after := e.state(t); after != before {
			t.Fatalf("blocked requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("patch", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("patch"), "name": "old", "note": "old note", "color_key": "amber"})
		url := "/bookmark-spaces/" + e.first + "/cards/" + spID(c)
		cv1, sv1 := spStr(c, "version"), ag.version(t, e.first)

		r := ag.do(t, "PATCH", url, map[string]any{"expected_version": cv1, "name": "new", "note": "new note", "color_key": "violet"})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		p := spObject(t, m, "card")
		spFields(t, "patched card", p, map[string]any{"id": spID(c), "address": spAddress("patch"), "name": "new", "note": "new note", "color_key": "violet", "effective_access": "write"})
		cv2 := spStr(p, "version")
		if cv2 == "" || cv2 == cv1 {
			t.Fatalf("card version after patch %q, was %q", cv2, cv1)
		}
		if sv2 := spStr(spObject(t, m, "space"), "version"); sv2 == sv1 || sv2 != ag.version(t, e.first) {
			t.Fatalf("Space version after a card edit %q (was %q, now reads %q)", sv2, sv1, ag.version(t, e.first))
		}
		if got := ag.card(t, e.first, spID(c)); !reflect.DeepEqual(got, p) {
			t.Fatalf("GET after patch %v, want %v", got, p)
		}
		// Only the sent fields change.
		r = ag.do(t, "PATCH", url, map[string]any{"expected_version": cv2, "note": ""})
		expect(t, r, http.StatusOK, "")
		p = spObject(t, r.JSON(t), "card")
		spFields(t, "note-only patch", p, map[string]any{"name": "new", "note": "", "color_key": "violet"})

		before := e.state(t)
		for _, bc := range []struct {
			what   string
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"stale version", e.write, map[string]any{"expected_version": cv1, "name": "stale"}, http.StatusConflict, "STALE_VERSION"},
			{"unknown version", e.write, map[string]any{"expected_version": "v999999", "color_key": "pink"}, http.StatusConflict, "STALE_VERSION"},
			{"bad color", e.write, map[string]any{"expected_version": p["version"], "color_key": "Teal"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"long name", e.write, map[string]any{"expected_version": p["version"], "name": strings.Repeat("n", 101)}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"read-only key", e.read, map[string]any{"expected_version": p["version"], "name": "ro"}, http.StatusForbidden, "FORBIDDEN"},
		} {
			spCheck(t, "patch: "+bc.what, e.agent(bc.key).do(t, "PATCH", url, bc.body), bc.status, bc.code)
		}
		spCheck(t, "patch an absent card", ag.do(t, "PATCH", "/bookmark-spaces/"+e.first+"/cards/no-such-card", map[string]any{"expected_version": p["version"], "name": "x"}), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("refused patches changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// The owner edits too, with the same body.
		r = e.owner().do(t, "PATCH", url, map[string]any{"expected_version": p["version"], "name": "owner"})
		expect(t, r, http.StatusOK, "")
		spFields(t, "agent's view of the owner's edit", ag.card(t, e.first, spID(c)), map[string]any{"name": "owner", "effective_access": "write"})
	})

	t.Run("delete", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("delete")})
		keep := ag.addCard(t, e.first, map[string]any{"address": spAddress("delete-keep")})
		url := "/bookmark-spaces/" + e.first + "/cards/" + spID(c)
		sv := ag.version(t, e.first)

		before := e.state(t)
		spCheck(t, "stale version", ag.do(t, "DELETE", url, map[string]any{"expected_version": "v1"}), http.StatusConflict, "STALE_VERSION")
		spCheck(t, "another card's version", ag.do(t, "DELETE", url, map[string]any{"expected_version": keep["version"]}), http.StatusConflict, "STALE_VERSION")
		spCheck(t, "read-only key", e.agent(e.read).do(t, "DELETE", url, map[string]any{"expected_version": c["version"]}), http.StatusForbidden, "FORBIDDEN")
		if after := e.state(t); after != before {
			t.Fatalf("refused deletes changed the account:\nbefore %s\nafter  %s", before, after)
		}

		r := ag.do(t, "DELETE", url, map[string]any{"expected_version": c["version"]})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if m["deleted"] != true {
			t.Fatalf("delete answered %s, want deleted: true", r.Body)
		}
		if sp, has := m["space"].(map[string]any); has && (spStr(sp, "version") == sv || spStr(sp, "version") != ag.version(t, e.first)) {
			t.Errorf("delete answered space %v; the Space version was %s and now reads %s", sp, sv, ag.version(t, e.first))
		}
		spCheck(t, "GET deleted card", ag.do(t, "GET", url, nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "delete again", ag.do(t, "DELETE", url, map[string]any{"expected_version": c["version"]}), http.StatusNotFound, "NOT_FOUND")
		if cards, _ := ag.cards(t, e.first); !slices.Equal(spIDs(cards), []string{spID(keep)}) {
			t.Fatalf("cards after delete: %v", cards)
		}
		// The address is free again.
		ag.addCard(t, e.first, map[string]any{"address": spAddress("delete")})
	})

	t.Run("bookmark_full_vs_stale", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		var last map[string]any
		for i := range 10 {
			last = ag.addCard(t, e.first, map[string]any{"address": spAddress(fmt.Sprintf("full-%d", i))})
		}
		stale := last["version"] // a card version, never the Space's
		v := ag.version(t, e.first)
		before := e.state(t)
		url := "/bookmark-spaces/" + e.first + "/cards"
		body := map[string]any{"expected_space_version": v, "address": spAddress("full-11")}
		spCheck(t, "11th card", ag.do(t, "POST", url, body), http.StatusConflict, "BOOKMARK_FULL")
		spCheck(t, "11th card (validate)", ag.do(t, "POST", url+"/validate", body), http.StatusConflict, "BOOKMARK_FULL")
		spCheck(t, "11th card by the owner", e.owner().do(t, "POST", url, body), http.StatusConflict, "BOOKMARK_FULL")
		staleBody := map[string]any{"expected_space_version": stale, "address": spAddress("full-11")}
		spCheck(t, "11th card with a stale version", ag.do(t, "POST", url, staleBody), http.StatusConflict, "STALE_VERSION")
		if after := e.state(t); after != before {
			t.Fatalf("refused creates changed the account:\nbefore %s\nafter  %s", before, after)
		}
		if used, limit := spUsage(t, e.me(t, e.write), "bookmark_spaces"); used != 1 || limit != 1 {
			t.Errorf("a full Space changed bookmark_spaces to %d/%d", used, limit)
		}
		// Deleting one makes room again.
		expect(t, ag.do(t, "DELETE", url+"/"+spID(last), map[string]any{"expected_version": last["version"]}), http.StatusOK, "")
		ag.addCard(t, e.first, map[string]any{"address": spAddress("full-11")})
	})

	t.Run("bitcoin_address_rules", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		for _, c := range []struct{ what, in, stored string }{
			{"P2PKH", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"},
			{"P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"},
			{"P2WPKH in upper case", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
			{"P2WSH", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"},
			{"P2TR", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"},
		} {
			card := ag.addCard(t, e.first, map[string]any{"address": c.in})
			spFields(t, c.what, card, map[string]any{"address": c.stored})
			if _, has := card["coin_id"]; has {
				t.Errorf("%s: a bitcoin card shows coin_id: %v", c.what, card)
			}
		}
		before := e.state(t)
		// The canonical form is what counts as a duplicate.
		spCheck(t, "P2WPKH in lower case after upper case", ag.do(t, "POST", "/bookmark-spaces/"+e.first+"/cards",
			map[string]any{"expected_space_version": ag.version(t, e.first), "address": "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}), http.StatusConflict, "DUPLICATE_ADDRESS")
		for _, c := range []struct {
			what string
			body map[string]any
		}{
			{"testnet", map[string]any{"address": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"}},
			{"testnet P2PKH", map[string]any{"address": "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"}},
			{"bad checksum", map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb"}},
			{"mixed-case bech32", map[string]any{"address": "bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}},
			{"surrounding space", map[string]any{"address": " 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"}},
			{"empty", map[string]any{"address": ""}},
			{"Ethereum address", map[string]any{"address": spEthMixed1}},
			{"Litecoin address", map[string]any{"address": spLtcP2PKH}},
			{"coin_id bitcoin", map[string]any{"address": spAddress("btc-coin"), "coin_id": "bitcoin"}},
			{"coin_id unknown", map[string]any{"address": spAddress("btc-coin"), "coin_id": "unknown"}},
			{"empty coin_id", map[string]any{"address": spAddress("btc-coin"), "coin_id": ""}},
		} {
			c.body["expected_space_version"] = ag.version(t, e.first)
			r := ag.do(t, "POST", "/bookmark-spaces/"+e.first+"/cards", c.body)
			spCheck(t, c.what, r, http.StatusUnprocessableEntity, "VALIDATION")
			if bytes.Contains(r.Body, []byte("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN")) {
				t.Errorf("%s: the error echoes the address: %s", c.what, r.Body)
			}
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused creates changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("altcoin_address_rules", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		alt := spID(ag.createSpace(t, "Alt", "altcoin"))
		for _, c := range []struct{ coin, address string }{
			{"ethereum", spEthMixed1},
			{"litecoin", spLtcP2PKH},
			{"dogecoin", spDogeP2PKH},
			{"bitcoin-cash", spBchP2KH},
			{"tron", spTronExample},
			{"solana", spSolToken},
			{"xrp", spXRPGenesis},
			{"unknown", "my private chain: addr-0001 (é)"},
			{"unknown", strings.Repeat("x", 128)},
		} {
			card := ag.addCard(t, alt, map[string]any{"coin_id": c.coin, "address": c.address, "name": c.coin})
			spKeys(t, c.coin+" card", card, append(slices.Clone(spBookmarkKeys), "coin_id"))
			spFields(t, c.coin+" card", card, map[string]any{"coin_id": c.coin, "address": c.address, "effective_access": "write"})
		}
		cards, _ := ag.cards(t, alt)
		if len(cards) != 9 {
			t.Fatalf("altcoin Space holds %d cards, want 9", len(cards))
		}

		before := e.state(t)
		for _, c := range []struct {
			what string
			body map[string]any
		}{
			{"missing coin_id", map[string]any{"address": spEthMixed2}},
			{"empty coin_id", map[string]any{"address": spEthMixed2, "coin_id": ""}},
			{"capitalised coin_id", map[string]any{"address": spEthMixed2, "coin_id": "Ethereum"}},
			{"unlisted coin", map[string]any{"address": spEthMixed2, "coin_id": "monero"}},
			{"bitcoin is not an altcoin", map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "coin_id": "bitcoin"}},
			{"Litecoin address as Ethereum", map[string]any{"address": spLtcP2PKH, "coin_id": "ethereum"}},
			{"Ethereum address as Litecoin", map[string]any{"address": spEthMixed2, "coin_id": "litecoin"}},
			{"Bitcoin address as Dogecoin", map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "coin_id": "dogecoin"}},
			{"EIP-55 checksum broken", map[string]any{"address": "0xfb6916095ca1df60bB79Ce92cE3Ea74c37c5d359", "coin_id": "ethereum"}},
			{"unknown: markup", map[string]any{"address": "<script>x</script>", "coin_id": "unknown"}},
			{"unknown: quote", map[string]any{"address": `ab"cd`, "coin_id": "unknown"}},
			{"unknown: backslash", map[string]any{"address": `ab\cd`, "coin_id": "unknown"}},
			{"unknown: leading space", map[string]any{"address": " abcd", "coin_id": "unknown"}},
			{"unknown: empty", map[string]any{"address": "", "coin_id": "unknown"}},
			{"unknown: 129 characters", map[string]any{"address": strings.Repeat("y", 129), "coin_id": "unknown"}},
			{"unknown: zero-width space", map[string]any{"address": "ab\u200bcd", "coin_id": "unknown"}},
			{"unknown: newline", map[string]any{"address": "ab\ncd", "coin_id": "unknown"}},
			{"unknown: bidi override", map[string]any{"address": "ab\u202ecd", "coin_id": "unknown"}},
		} {
			c.body["expected_space_version"] = ag.version(t, alt)
			spCheck(t, c.what, ag.do(t, "POST", "/bookmark-spaces/"+alt+"/cards", c.body), http.StatusUnprocessableEntity, "VALIDATION")
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused creates changed the account:\nbefore %s\nafter  %s", before, after)
		}

		// Duplicates are per coin, on the canonical form.
		alt2 := spID(ag.createSpace(t, "Alt 2", "altcoin"))
		caps := ag.addCard(t, alt2, map[string]any{"coin_id": "ethereum", "address": spEthCaps1})
		if !strings.EqualFold(spStr(caps, "address"), spEthCaps1) {
			t.Fatalf("stored Ethereum address %v is not the same address as %s", caps["address"], spEthCaps1)
		}
		spCheck(t, "the same Ethereum address in lower case", ag.do(t, "POST", "/bookmark-spaces/"+alt2+"/cards",
			map[string]any{"expected_space_version": ag.version(t, alt2), "coin_id": "ethereum", "address": strings.ToLower(spEthCaps1)}), http.StatusConflict, "DUPLICATE_ADDRESS")
		ag.addCard(t, alt2, map[string]any{"coin_id": "unknown", "address": spStr(caps, "address")})
		spCheck(t, "the same unknown text twice", ag.do(t, "POST", "/bookmark-spaces/"+alt2+"/cards",
			map[string]any{"expected_space_version": ag.version(t, alt2), "coin_id": "unknown", "address": spStr(caps, "address")}), http.StatusConflict, "DUPLICATE_ADDRESS")
	})

	t.Run("cards_inherit_the_space_grant", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "")
		ow := e.owner()
		sp := spID(ow.createSpace(t, "Granted later", "bitcoin"))
		c := ow.addCard(t, sp, map[string]any{"address": spAddress("inherit"), "name": "owner's"})
		if _, has := c["grant"]; has {
			t.Errorf("a bookmark card shows a grant of its own: %v", c)
		}
		cardURL := "/bookmark-spaces/" + sp + "/cards/" + spID(c)
		writes := func(a spClient) []response {
			return []response{
				a.do(t, "POST", "/bookmark-spaces/"+sp+"/cards", map[string]any{"expected_space_version": ow.version(t, sp), "address": spAddress("inherit-new")}),
				a.do(t, "PATCH", cardURL, map[string]any{"expected_version": ow.card(t, sp, spID(c))["version"], "name": "x"}),
				a.do(t, "DELETE", cardURL, map[string]any{"expected_version": ow.card(t, sp, spID(c))["version"]}),
			}
		}
		before := e.state(t)
		// none: absent everywhere.
		for _, key := range []string{e.write, e.read} {
			a := e.agent(key)
			spCheck(t, "list cards at none", a.do(t, "GET", "/bookmark-spaces/"+sp+"/cards", nil), http.StatusNotFound, "NOT_FOUND")
			spCheck(t, "GET card at none", a.do(t, "GET", cardURL, nil), http.StatusNotFound, "NOT_FOUND")
		}
		for _, r := range writes(e.agent(e.write)) {
			spCheck(t, "write at none", r, http.StatusNotFound, "NOT_FOUND")
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused writes changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// read: visible at read, every write refused.
		e.grant(t, sp, "read")
		before = e.state(t)
		for _, key := range []string{e.write, e.read} {
			cards, space := e.agent(key).cards(t, sp)
			if len(cards) != 1 || cards[0]["effective_access"] != "read" || space["effective_access"] != "read" {
				t.Fatalf("at read the card list is %v (space %v)", cards, space)
			}
			spFields(t, "card at read", e.agent(key).card(t, sp, spID(c)), map[string]any{"name": "owner's", "effective_access": "read"})
			for _, r := range writes(e.agent(key)) {
				spCheck(t, "write at read", r, http.StatusForbidden, "FORBIDDEN")
			}
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused writes changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// write: the write key may change it, the read key still sees read.
		e.grant(t, sp, "write")
		spFields(t, "read key at write", e.agent(e.read).card(t, sp, spID(c)), map[string]any{"effective_access": "read"})
		spFields(t, "write key at write", e.agent(e.write).card(t, sp, spID(c)), map[string]any{"effective_access": "write"})
		r := e.agent(e.write).do(t, "PATCH", cardURL, map[string]any{"expected_version": c["version"], "name": "agent's"})
		expect(t, r, http.StatusOK, "")
		// A card the agent creates follows the Space's grant too.
		made := e.agent(e.write).addCard(t, sp, map[string]any{"address": spAddress("inherit-agent")})
		e.grant(t, sp, "none")
		spCheck(t, "agent's own card after the grant is removed", e.agent(e.write).do(t, "GET", "/bookmark-spaces/"+sp+"/cards/"+spID(made), nil), http.StatusNotFound, "NOT_FOUND")
		if got := ow.card(t, sp, spID(c)); got["name"] != "agent's" {
			t.Fatalf("owner sees %v after the agent's edit", got)
		}
	})

	t.Run("owner_counterparts", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "")
		ow := e.owner()
		cards, sp := ow.cards(t, e.first)
		if len(cards) != 0 {
			t.Fatalf("new Space has cards: %v", cards)
		}
		spKeys(t, "owner's list space", sp, spOwnerSpaceKeys)
		url := "/bookmark-spaces/" + e.first + "/cards"
		r := ow.do(t, "POST", url+"/validate", map[string]any{"expected_space_version": sp["version"], "address": spAddress("owner-card")})
		expect(t, r, http.StatusOK, "")
		c := ow.addCard(t, e.first, map[string]any{"address": spAddress("owner-card"), "name": "mine", "color_key": "slate"})
		spFields(t, "owner's card", c, map[string]any{"name": "mine", "color_key": "slate", "effective_access": "write"})
		if got := ow.card(t, e.first, spID(c)); !reflect.DeepEqual(got, c) {
			t.Fatalf("owner GET %v, want %v", got, c)
		}
		r = ow.do(t, "PATCH", url+"/"+spID(c), map[string]any{"expected_version": c["version"], "note": "owner note"})
		expect(t, r, http.StatusOK, "")
		p := spObject(t, r.JSON(t), "card")
		// The agent has no grant: it sees nothing of this.
		spCheck(t, "agent GET of the owner's card", e.agent(e.write).do(t, "GET", url+"/"+spID(c), nil), http.StatusNotFound, "NOT_FOUND")
		r = ow.do(t, "DELETE", url+"/"+spID(c), map[string]any{"expected_version": p["version"]})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["deleted"] != true {
			t.Fatalf("owner delete answered %s", r.Body)
		}
		if cards, _ := ow.cards(t, e.first); len(cards) != 0 {
			t.Fatalf("cards after the owner's delete: %v", cards)
		}
	})

	t.Run("idempotent_create", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		other := spID(ag.createSpace(t, "Other", "bitcoin"))
		const token = "card-create-00001"
		url := "/bookmark-spaces/" + e.first + "/cards"
		body := map[string]any{"expected_space_version": ag.version(t, e.first), "address": spAddress("idem-create"), "name": "Once", "note": "n", "color_key": "rose"}
		first := ag.do(t, "POST", url, body, spIdem, token)
		expect(t, first, http.StatusCreated, "")
		for _, replay := range []any{body, spReformat(t, body)} {
			r := ag.do(t, "POST", url, replay, spIdem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Fatalf("replay answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
			}
		}
		if cards, _ := ag.cards(t, e.first); len(cards) != 1 {
			t.Fatalf("replays created cards: %v", cards)
		}
		before := e.state(t)
		changed := map[string]any{"expected_space_version": body["expected_space_version"], "address": spAddress("idem-create"), "name": "Twice", "note": "n", "color_key": "rose"}
		spCheck(t, "same token, different body", ag.do(t, "POST", url, changed, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		otherBody := map[string]any{"expected_space_version": ag.version(t, other), "address": spAddress("idem-create"), "name": "Once", "note": "n", "color_key": "rose"}
		spCheck(t, "same token, another Space", ag.do(t, "POST", "/bookmark-spaces/"+other+"/cards", otherBody, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		spCheck(t, "same token and body on validate (not idempotent)", ag.do(t, "POST", url+"/validate", body, spIdem, token), http.StatusConflict, "STALE_VERSION")
		spCheck(t, "retry without the header", ag.do(t, "POST", url, body), http.StatusConflict, "STALE_VERSION")
		spCheck(t, "same token, another key", e.agent(e.write2).do(t, "POST", url, body, spIdem, token), http.StatusConflict, "STALE_VERSION")
		spCheck(t, "read-only key", e.agent(e.read).do(t, "POST", url, body, spIdem, token), http.StatusForbidden, "FORBIDDEN")
		if after := e.state(t); after != before {
			t.Fatalf("refused requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// Access is checked again on replay.
		e.grant(t, e.first, "none")
		r := ag.do(t, "POST", url, body, spIdem, token)
		spCheck(t, "replay at grant none", r, http.StatusNotFound, "NOT_FOUND")
		if bytes.Contains(r.Body, []byte(spAddress("idem-create"))) {
			t.Fatalf("replay at grant none reveals the card: %s", r.Body)
		}
		e.grant(t, e.first, "write")
		if r := ag.do(t, "POST", url, body, spIdem, token); !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("replay after re-grant answered %d %s", r.Status, r.Body)
		}
	})

	t.Run("concurrent_idempotent_creates", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		body := []byte(fmt.Sprintf(`{"expected_space_version":%q,"address":%q,"name":"raced"}`, ag.version(t, e.first), spAddress("race")))
		bodies := make([][]byte, 8)
		for i := range bodies {
			bodies[i] = body
		}
		got := spConcurrent(t, "POST", s.URL+"/v1/bookmark-spaces/"+e.first+"/cards", e.write, bodies, []string{spIdem, "card-race-token-01"})
		for i, r := range got {
			if r.Status != http.StatusCreated || !bytes.Equal(r.Body, got[0].Body) {
				t.Errorf("concurrent replay %d answered %d %s, want 201 %s", i, r.Status, r.Body, got[0].Body)
			}
		}
		if cards, _ := ag.cards(t, e.first); len(cards) != 1 {
			t.Fatalf("concurrent requests with one token made %d cards", len(cards))
		}
		// Without a token, one version admits one create.
		v := ag.version(t, e.first)
		for i := range bodies {
			bodies[i] = []byte(fmt.Sprintf(`{"expected_space_version":%q,"address":%q}`, v, spAddress(fmt.Sprintf("race-%d", i))))
		}
		won := 0
		for i, r := range spConcurrent(t, "POST", s.URL+"/v1/bookmark-spaces/"+e.first+"/cards", e.write, bodies, nil) {
			if r.Status == http.StatusCreated {
				won++
				continue
			}
			spCheck(t, fmt.Sprintf("racer %d", i), r, http.StatusConflict, "STALE_VERSION")
		}
		if cards, _ := ag.cards(t, e.first); won != 1 || len(cards) != 2 {
			t.Fatalf("%d racing creates succeeded and the Space holds %d cards; want 1 and 2", won, len(cards))
		}
	})

	t.Run("idempotent_delete", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		const token = "card-delete-00001"
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("idem-delete")})
		c2 := ag.addCard(t, e.first, map[string]any{"address": spAddress("idem-delete-2")})
		url := "/bookmark-spaces/" + e.first + "/cards/" + spID(c)
		body := map[string]any{"expected_version": c["version"]}
		first := ag.do(t, "DELETE", url, body, spIdem, token)
		expect(t, first, http.StatusOK, "")
		for _, replay := range []any{body, spReformat(t, body)} {
			r := ag.do(t, "DELETE", url, replay, spIdem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Fatalf("replay answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
			}
		}
		if cards, _ := ag.cards(t, e.first); !slices.Equal(spIDs(cards), []string{spID(c2)}) {
			t.Fatalf("cards after delete and replays: %v", cards)
		}
		before := e.state(t)
		spCheck(t, "same token, different body", ag.do(t, "DELETE", url, map[string]any{"expected_version": c2["version"]}, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		spCheck(t, "same token, another card", ag.do(t, "DELETE", "/bookmark-spaces/"+e.first+"/cards/"+spID(c2), map[string]any{"expected_version": c2["version"]}, spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		spCheck(t, "retry without the header", ag.do(t, "DELETE", url, body), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "same token, another key", e.agent(e.write2).do(t, "DELETE", url, body, spIdem, token), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("refused requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	// Idempotency rule 5: access is checked again on replay, and when it
	// was removed the saved details are not returned. A grant of none
	// "hides the resource and its saved metadata", so a replayed card
	// delete must not hand back the hidden Space's version.
	t.Run("delete_replay_after_access_removed_withholds_space_details", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("replay-hidden")})
		url := "/bookmark-spaces/" + e.first + "/cards/" + spID(c)
		body := map[string]any{"expected_version": c["version"]}
		const token = "card-delete-hidden1"
		first := ag.do(t, "DELETE", url, body, spIdem, token)
		expect(t, first, http.StatusOK, "")
		savedVersion := ""
		if sp, has := first.JSON(t)["space"].(map[string]any); has {
			savedVersion = spStr(sp, "version")
		}
		e.grant(t, e.first, "none")
		r := ag.do(t, "DELETE", url, body, spIdem, token)
		if r.Status == http.StatusOK && savedVersion != "" && bytes.Contains(r.Body, []byte(`"`+savedVersion+`"`)) {
			t.Fatalf("replay after the Space's grant became none answered %d %s: it returns the hidden Space's saved version %s (want 404 NOT_FOUND, or a body without the Space's details)", r.Status, r.Body, savedVersion)
		}
		if r.Status != http.StatusOK {
			spCheck(t, "replay at grant none", r, http.StatusNotFound, "NOT_FOUND")
		}
	})

	t.Run("options_and_405", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		c := e.agent(e.write).addCard(t, e.first, map[string]any{"address": spAddress("options")})
		before := e.state(t)
		spCheckRoutes(t, s, e, []spRoute{
			{"/bookmark-spaces/" + e.first + "/cards", []string{"GET", "POST"}},
			{"/bookmark-spaces/" + e.first + "/cards/validate", []string{"POST"}},
			{"/bookmark-spaces/" + e.first + "/cards/" + spID(c), []string{"GET", "PATCH", "DELETE"}},
		}, nil)
		if after := e.state(t); after != before {
			t.Fatalf("refused methods changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("bad_input", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("bad-card")})
		v, cv := ag.version(t, e.first), spStr(c, "version")
		addr := spAddress("bad-new")
		create := func(name, path string) spBadRoute {
			return spBadRoute{
				name: name, method: "POST", path: path,
				valid: `{"expected_space_version":"` + v + `","address":"` + addr + `","name":"n"`,
				wrongTypes: []string{
					`{"expected_space_version":1,"address":"` + addr + `"}`,
					`{"expected_space_version":"` + v + `","address":12345}`,
					`{"expected_space_version":"` + v + `","address":"` + addr + `","coin_id":5}`,
					`{"expected_space_version":"` + v + `","address":"` + addr + `","note":{"a":1}}`,
					`{"expected_space_version":"` + v + `","address":"` + addr + `","color_key":["teal"]}`,
					`{"expected_space_version":"` + v + `","address":["` + addr + `"]}`,
				},
				missing: []string{
					`{"address":"` + addr + `"}`,
					`{"expected_space_version":"` + v + `","name":"n"}`,
					`{"expected_space_version":"` + v + `","address":null}`,
					`{}`,
				},
			}
		}
		cardPath := "/bookmark-spaces/" + e.first + "/cards/" + spID(c)
		spRunBadInput(t, s, e, []spBadRoute{
			create("create card", "/bookmark-spaces/"+e.first+"/cards"),
			create("validate card", "/bookmark-spaces/"+e.first+"/cards/validate"),
			{
				name: "patch card", method: "PATCH", path: cardPath,
				valid: `{"expected_version":"` + cv + `","note":"n"`,
				wrongTypes: []string{
					`{"expected_version":7,"name":"n"}`,
					`{"expected_version":"` + cv + `","name":true}`,
					`{"expected_version":"` + cv + `","color_key":3}`,
					`{"expected_version":"` + cv + `","note":["x"]}`,
				},
				missing: []string{`{"name":"n"}`, `{}`, `{"expected_version":null,"name":"n"}`},
			},
			{
				name: "delete card", method: "DELETE", path: cardPath,
				valid:      `{"expected_version":"` + cv + `"`,
				wrongTypes: []string{`{"expected_version":1}`, `{"expected_version":{"v":"` + cv + `"}}`},
				missing:    []string{`{}`, `{"expected_version":null}`},
			},
		}, true)
	})
}

// spBookmarkKeys are the fields of a bitcoin bookmark card; an altcoin card
// also has coin_id.
var spBookmarkKeys = []string{"id", "version", "effective_access", "address", "name", "note", "color_key"}

// spColorKeys is the spec's list of allowed color_key values.
var spColorKeys = []string{"amber", "green", "blue", "rose", "violet", "teal", "slate", "orange", "cyan", "pink"}

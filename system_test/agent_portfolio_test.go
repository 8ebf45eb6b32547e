package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/addrwatch/addrwatch/internal/testaddr"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestAgentPortfolioCards drives the Account card routes of the Agent API
// (/v1/portfolio/cards...) over real HTTP: shapes, validation, versions,
// grants and the capability ceiling. One server; each subtest has its own
// account.
func TestAgentPortfolioCards(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)

	t.Run("list_shape_and_included_ids", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		empty := apList(t, s, e.write)
		if len(empty.cards) != 0 || len(empty.ids) != 0 {
			t.Fatalf("new account lists cards: %s", empty.raw)
		}
		a1 := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("list-1")})
		a2 := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("list-2")})
		hidden := apOwnerCreateCard(t, s, e.acct, apAddress("list-hidden"), "hidden card")
		shown := apOwnerCreateCard(t, s, e.acct, apAddress("list-shown"), "shown card")
		apGrantCard(t, s, e.acct, apID(shown), "read")

		for _, key := range []string{e.write, e.read} {
			l := apList(t, s, key)
			apSameSet(t, "listed card ids", l.ids, []string{apID(a1), apID(a2), apID(shown)})
			if bytes.Contains(l.raw, []byte(apID(hidden))) || bytes.Contains(l.raw, []byte(apAddress("list-hidden"))) {
				t.Fatalf("list reveals the card at grant none: %s", l.raw)
			}
			for _, c := range l.cards {
				if c["version"] == "" || c["version"] == nil {
					t.Fatalf("listed card without version: %v", c)
				}
			}
		}
	})

	t.Run("create_returns_card", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		addr := apAddress("create")
		r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": addr, "name": "Cold storage", "note": "line one\nline two", "color_key": "teal"})
		expect(t, r, http.StatusCreated, "")
		card := apCardOf(t, r)
		if id, _ := card["id"].(string); id == "" {
			t.Fatalf("created card has no id: %s", r.Body)
		}
		if v, _ := card["version"].(string); v == "" {
			t.Fatalf("created card has no version: %s", r.Body)
		}
		apFields(t, card, map[string]any{"effective_access": "write", "address": addr, "name": "Cold storage", "note": "line one\nline two", "color_key": "teal"})
		if _, has := card["grant"]; has {
			t.Fatalf("agent view shows the owner's grant field: %s", r.Body)
		}

		// Only the address is required; the others default.
		r = do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("create-min")})
		expect(t, r, http.StatusCreated, "")
		min := apCardOf(t, r)
		apFields(t, min, map[string]any{"effective_access": "write", "address": apAddress("create-min"), "name": "", "note": ""})
		if !slices.Contains(apColorKeys, min["color_key"].(string)) {
			t.Fatalf("default color_key %v is not in the allowed list", min["color_key"])
		}
		if min["id"] == card["id"] {
			t.Fatalf("two cards share id %v", card["id"])
		}
		apSameSet(t, "listed ids", apList(t, s, e.write).ids, []string{apID(card), apID(min)})
	})

	t.Run("validate_creates_nothing", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		apCreateCard(t, s, e.write, map[string]any{"address": apAddress("v-existing")})
		before := apList(t, s, e.write)
		meBefore := apMe(t, s, e.write)
		for _, body := range []map[string]any{
			{"address": apAddress("v-new")},
			{"address": apAddress("v-new"), "name": "n", "note": "x", "color_key": "pink"},
		} {
			r := do(t, "POST", s.URL+"/v1/portfolio/cards/validate", e.write, body)
			expect(t, r, http.StatusOK, "")
			if got := r.JSON(t); !reflect.DeepEqual(got, map[string]any{"valid": true}) {
				t.Fatalf("validate body %s, want {\"valid\":true}", r.Body)
			}
		}
		after := apList(t, s, e.write)
		if !bytes.Equal(before.raw, after.raw) {
			t.Fatalf("validate changed the list:\nbefore %s\nafter  %s", before.raw, after.raw)
		}
		if got := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); got != apUsage(t, meBefore, "portfolio_cards") {
			t.Fatalf("validate changed portfolio_cards usage to %v", got)
		}
		// The validated address is still free.
		apCreateCard(t, s, e.write, map[string]any{"address": apAddress("v-new")})
	})

	t.Run("blocked_validate_answers_like_the_write", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		dup := apAddress("b-dup")
		apCreateCard(t, s, e.write, map[string]any{"address": dup})
		hiddenDup := apAddress("b-hidden-dup")
		apOwnerCreateCard(t, s, e.acct, hiddenDup, "")

		full := apSetup(t, s, "base")
		for i := range 10 {
			apOwnerCreateCard(t, s, full.acct, apAddress(fmt.Sprintf("b-full-%d", i)), "")
		}

		cases := []struct {
			name   string
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"read-only key", e.read, map[string]any{"address": apAddress("b-new")}, http.StatusForbidden, "FORBIDDEN"},
			{"duplicate", e.write, map[string]any{"address": dup}, http.StatusConflict, "DUPLICATE_ADDRESS"},
			{"hidden duplicate", e.write, map[string]any{"address": hiddenDup}, http.StatusConflict, "DUPLICATE_ADDRESS"},
			{"full", full.write, map[string]any{"address": apAddress("b-new")}, http.StatusConflict, "OVERVIEW_FULL"},
			{"invalid address", e.write, map[string]any{"address": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"}, http.StatusUnprocessableEntity, "VALIDATION"},
			{"bad color", e.write, map[string]any{"address": apAddress("b-new"), "color_key": "purple"}, http.StatusUnprocessableEntity, "VALIDATION"},
		}
		beforeE, beforeFull := apOwnerList(t, s, e.acct), apOwnerList(t, s, full.acct)
		for _, c := range cases {
			v := do(t, "POST", s.URL+"/v1/portfolio/cards/validate", c.key, c.body)
			w := do(t, "POST", s.URL+"/v1/portfolio/cards", c.key, c.body)
			if v.Status != w.Status || v.Code(t) != w.Code(t) {
				t.Errorf("%s: validate answered %d %s, the write %d %s", c.name, v.Status, v.Body, w.Status, w.Body)
			}
			apExpect(t, c.name+" (validate)", v, c.status, c.code)
			apExpect(t, c.name+" (write)", w, c.status, c.code)
		}
		if after := apOwnerList(t, s, e.acct); !bytes.Equal(beforeE, after) {
			t.Fatalf("blocked requests changed the account:\nbefore %s\nafter  %s", beforeE, after)
		}
		if after := apOwnerList(t, s, full.acct); !bytes.Equal(beforeFull, after) {
			t.Fatalf("blocked requests changed the full account:\nbefore %s\nafter  %s", beforeFull, after)
		}
	})

	t.Run("get_returns_card", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		created := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("get"), "name": "n", "note": "o", "color_key": "blue"})
		r := do(t, "GET", s.URL+"/v1/portfolio/cards/"+apID(created), e.write, nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if len(m) != 1 {
			t.Fatalf("GET card body has keys beyond card: %s", r.Body)
		}
		if got := apCardOf(t, r); !reflect.DeepEqual(got, created) {
			t.Fatalf("GET card %v, want the created card %v", got, created)
		}
	})

	t.Run("patch_with_expected_version", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("patch"), "name": "old", "note": "old note", "color_key": "amber"})
		url := s.URL + "/v1/portfolio/cards/" + apID(c)
		v1 := c["version"].(string)

		r := do(t, "PATCH", url, e.write, map[string]any{"expected_version": v1, "name": "new", "note": "new note", "color_key": "violet"})
		expect(t, r, http.StatusOK, "")
		p := apCardOf(t, r)
		apFields(t, p, map[string]any{"id": apID(c), "name": "new", "note": "new note", "color_key": "violet", "effective_access": "write", "address": apAddress("patch")})
		v2 := p["version"].(string)
		if v2 == "" || v2 == v1 {
			t.Fatalf("version after patch is %q, was %q", v2, v1)
		}
		if got := apGet(t, s, e.write, apID(c)); !reflect.DeepEqual(got, p) {
			t.Fatalf("GET after patch %v, want %v", got, p)
		}

		// A stale version changes nothing.
		r = do(t, "PATCH", url, e.write, map[string]any{"expected_version": v1, "name": "stale"})
		expect(t, r, http.StatusConflict, "STALE_VERSION")
		r = do(t, "PATCH", url, e.write, map[string]any{"expected_version": "v999999", "color_key": "pink"})
		expect(t, r, http.StatusConflict, "STALE_VERSION")
		if got := apGet(t, s, e.write, apID(c)); !reflect.DeepEqual(got, p) {
			t.Fatalf("GET after stale patches %v, want unchanged %v", got, p)
		}

		// Fields not sent keep their values.
		r = do(t, "PATCH", url, e.write, map[string]any{"expected_version": v2, "color_key": "cyan"})
		expect(t, r, http.StatusOK, "")
		p3 := apCardOf(t, r)
		apFields(t, p3, map[string]any{"name": "new", "note": "new note", "color_key": "cyan"})
		if v3 := p3["version"].(string); v3 == v2 || v3 == v1 {
			t.Fatalf("version did not change on the second patch: %s", v3)
		}
		// Clearing name and note is allowed.
		r = do(t, "PATCH", url, e.write, map[string]any{"expected_version": p3["version"], "name": "", "note": ""})
		expect(t, r, http.StatusOK, "")
		apFields(t, apCardOf(t, r), map[string]any{"name": "", "note": "", "color_key": "cyan"})
	})

	t.Run("delete_with_expected_version", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("del")})
		keep := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("del-keep")})
		url := s.URL + "/v1/portfolio/cards/" + apID(c)

		r := do(t, "DELETE", url, e.write, map[string]any{"expected_version": "v999999"})
		expect(t, r, http.StatusConflict, "STALE_VERSION")
		if got := apGet(t, s, e.write, apID(c)); !reflect.DeepEqual(got, c) {
			t.Fatalf("stale delete changed the card: %v", got)
		}

		r = do(t, "DELETE", url, e.write, map[string]any{"expected_version": c["version"]})
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t); !reflect.DeepEqual(got, map[string]any{"deleted": true}) {
			t.Fatalf("delete body %s, want {\"deleted\":true}", r.Body)
		}
		expect(t, do(t, "GET", url, e.write, nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, do(t, "DELETE", url, e.write, map[string]any{"expected_version": c["version"]}), http.StatusNotFound, "NOT_FOUND")
		expect(t, do(t, "PATCH", url, e.write, map[string]any{"expected_version": c["version"], "name": "x"}), http.StatusNotFound, "NOT_FOUND")
		apSameSet(t, "listed ids", apList(t, s, e.write).ids, []string{apID(keep)})
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 1 {
			t.Fatalf("portfolio_cards.used %d after delete, want 1", used)
		}
		// The address is free again.
		apCreateCard(t, s, e.write, map[string]any{"address": apAddress("del")})
	})

	t.Run("invalid_addresses", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		good := apAddress("inv-good")
		bad := []string{
			"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",                         // testnet bech32
			"mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn",                                 // testnet P2PKH
			"0279BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798", // hex public key
			"garbage",
			"",
			" " + good,
			good + " ",
			good[:len(good)-1] + apFlip(good[len(good)-1]), // checksum broken
			"bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",   // mixed case
			strings.Repeat("1", 200),
		}
		for _, addr := range bad {
			for _, path := range []string{"/v1/portfolio/cards", "/v1/portfolio/cards/validate"} {
				r := do(t, "POST", s.URL+path, e.write, map[string]any{"address": addr, "name": "x"})
				apExpect(t, fmt.Sprintf("POST %s address %q", path, addr), r, http.StatusUnprocessableEntity, "VALIDATION")
				if addr != "" && strings.TrimSpace(addr) != "" && bytes.Contains(r.Body, []byte(strings.TrimSpace(addr))) {
					t.Errorf("error echoes the rejected address: %s", r.Body)
				}
			}
		}
		if l := apList(t, s, e.write); len(l.ids) != 0 {
			t.Fatalf("invalid addresses created cards: %s", l.raw)
		}
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 0 {
			t.Fatalf("portfolio_cards.used %d, want 0", used)
		}
		// The same kinds of address that are valid on mainnet are accepted.
		for _, addr := range []string{good, "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"} {
			apCreateCard(t, s, e.write, map[string]any{"address": addr})
		}
	})

	t.Run("duplicate_address", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		visible := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("dup-visible"), "name": "visible one"})
		r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("dup-visible")})
		expect(t, r, http.StatusConflict, "DUPLICATE_ADDRESS")

		hiddenAddr := apAddress("dup-hidden")
		hidden := apOwnerCreateCard(t, s, e.acct, hiddenAddr, "owner secret name")
		for _, path := range []string{"/v1/portfolio/cards", "/v1/portfolio/cards/validate"} {
			r := do(t, "POST", s.URL+path, e.write, map[string]any{"address": hiddenAddr, "name": "mine"})
			apExpect(t, "hidden duplicate via "+path, r, http.StatusConflict, "DUPLICATE_ADDRESS")
			for _, leak := range []string{apID(hidden), "owner secret name"} {
				if bytes.Contains(r.Body, []byte(leak)) {
					t.Errorf("duplicate error leaks %q of the hidden card: %s", leak, r.Body)
				}
			}
			if len(r.JSON(t)) != 2 {
				t.Errorf("duplicate error carries fields beyond code and error: %s", r.Body)
			}
		}
		// The duplicate gave no access to the hidden card.
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+apID(hidden), e.write, nil), http.StatusNotFound, "NOT_FOUND")

		// Canonical comparison: an upper-case bech32 address duplicates the lower-case one.
		lower := "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
		lowerCard := apCreateCard(t, s, e.write, map[string]any{"address": lower})
		r = do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": strings.ToUpper(lower)})
		expect(t, r, http.StatusConflict, "DUPLICATE_ADDRESS")

		apSameSet(t, "listed ids", apList(t, s, e.write).ids, []string{apID(visible), apID(lowerCard)})
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 3 {
			t.Fatalf("portfolio_cards.used %d, want 3", used)
		}
	})

	t.Run("overview_full_with_hidden_cards", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		var owned []map[string]any
		for i := range 9 {
			owned = append(owned, apOwnerCreateCard(t, s, e.acct, apAddress(fmt.Sprintf("full-%d", i)), ""))
		}
		// Under the limit, a key that sees none of the cards may still create.
		mine := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("full-mine")})
		apSameSet(t, "listed ids", apList(t, s, e.write).ids, []string{apID(mine)})
		me := apMe(t, s, e.write)
		if used, limit := apUsage(t, me, "portfolio_cards"), apLimit(t, me, "portfolio_cards"); used != 10 || limit != 10 {
			t.Fatalf("portfolio_cards %d/%d, want 10/10", used, limit)
		}
		for _, path := range []string{"/v1/portfolio/cards", "/v1/portfolio/cards/validate"} {
			r := do(t, "POST", s.URL+path, e.write, map[string]any{"address": apAddress("full-extra")})
			apExpect(t, "POST "+path+" when full", r, http.StatusConflict, "OVERVIEW_FULL")
			for _, c := range owned {
				if bytes.Contains(r.Body, []byte(apID(c))) {
					t.Errorf("OVERVIEW_FULL leaks a hidden card id: %s", r.Body)
				}
			}
		}
		// Freeing a slot the key cannot see lets it create again.
		r := do(t, "DELETE", s.URL+"/owner/v1/portfolio/cards/"+apID(owned[0]), e.acct.OwnerSecret, map[string]any{"expected_version": owned[0]["version"]})
		expect(t, r, http.StatusOK, "")
		apCreateCard(t, s, e.write, map[string]any{"address": apAddress("full-extra")})
		r = do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("full-extra-2")})
		expect(t, r, http.StatusConflict, "OVERVIEW_FULL")

		// Full even when the key sees nothing at all.
		f := apSetup(t, s, "base")
		for i := range 10 {
			apOwnerCreateCard(t, s, f.acct, apAddress(fmt.Sprintf("full2-%d", i)), "")
		}
		if l := apList(t, s, f.write); len(l.ids) != 0 {
			t.Fatalf("key sees owner cards at none: %s", l.raw)
		}
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", f.write, map[string]any{"address": apAddress("full2-x")}), http.StatusConflict, "OVERVIEW_FULL")
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards/validate", f.write, map[string]any{"address": apAddress("full2-x")}), http.StatusConflict, "OVERVIEW_FULL")
	})

	t.Run("color_key", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("color")})
		url := s.URL + "/v1/portfolio/cards/" + apID(c)
		for _, bad := range []string{"purple", "Amber", "AMBER", "", " amber", "red"} {
			apExpect(t, "create color "+bad, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("color-2"), "color_key": bad}), http.StatusUnprocessableEntity, "VALIDATION")
			apExpect(t, "validate color "+bad, do(t, "POST", s.URL+"/v1/portfolio/cards/validate", e.write, map[string]any{"address": apAddress("color-2"), "color_key": bad}), http.StatusUnprocessableEntity, "VALIDATION")
			apExpect(t, "patch color "+bad, do(t, "PATCH", url, e.write, map[string]any{"expected_version": c["version"], "color_key": bad}), http.StatusUnprocessableEntity, "VALIDATION")
		}
		if got := apGet(t, s, e.write, apID(c)); !reflect.DeepEqual(got, c) {
			t.Fatalf("rejected colors changed the card: %v", got)
		}
		if l := apList(t, s, e.write); len(l.ids) != 1 {
			t.Fatalf("rejected colors created cards: %s", l.raw)
		}
		// Every listed color is accepted, on patch and on create.
		version := c["version"]
		for _, color := range apColorKeys {
			r := do(t, "PATCH", url, e.write, map[string]any{"expected_version": version, "color_key": color})
			expect(t, r, http.StatusOK, "")
			card := apCardOf(t, r)
			apFields(t, card, map[string]any{"color_key": color})
			version = card["version"]
		}
		for i, color := range apColorKeys[:9] {
			card := apCreateCard(t, s, e.write, map[string]any{"address": apAddress(fmt.Sprintf("color-%d", i)), "color_key": color})
			apFields(t, card, map[string]any{"color_key": color})
		}
	})

	t.Run("read_only_key_cannot_write", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("ro")})
		url := s.URL + "/v1/portfolio/cards/" + apID(c)
		before := apOwnerList(t, s, e.acct)
		token := "ro-token-0123456789"
		reqs := []struct {
			method, url string
			body        map[string]any
			headers     []string
		}{
			{"POST", s.URL + "/v1/portfolio/cards", map[string]any{"address": apAddress("ro-new")}, nil},
			{"POST", s.URL + "/v1/portfolio/cards", map[string]any{"address": apAddress("ro-new")}, []string{"Idempotency-Key", token}},
			{"POST", s.URL + "/v1/portfolio/cards/validate", map[string]any{"address": apAddress("ro-new")}, nil},
			{"PATCH", url, map[string]any{"expected_version": c["version"], "name": "x"}, nil},
			{"DELETE", url, map[string]any{"expected_version": c["version"]}, nil},
			{"DELETE", url, map[string]any{"expected_version": c["version"]}, []string{"Idempotency-Key", token}},
			{"PATCH", s.URL + "/v1/portfolio/cards/nosuchcard", map[string]any{"expected_version": "v1", "name": "x"}, nil},
			{"DELETE", s.URL + "/v1/portfolio/cards/nosuchcard", map[string]any{"expected_version": "v1"}, nil},
		}
		for _, q := range reqs {
			r := do(t, q.method, q.url, e.read, q.body, q.headers...)
			apExpect(t, q.method+" "+q.url+" with a read-only key", r, http.StatusForbidden, "FORBIDDEN")
		}
		if after := apOwnerList(t, s, e.acct); !bytes.Equal(before, after) {
			t.Fatalf("read-only key changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// The read key can still read the write-granted card, at read.
		apFields(t, apGet(t, s, e.read, apID(c)), map[string]any{"effective_access": "read"})
	})

	t.Run("write_key_on_read_granted_card", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apOwnerCreateCard(t, s, e.acct, apAddress("rg"), "read only for agents")
		apGrantCard(t, s, e.acct, apID(c), "read")
		url := s.URL + "/v1/portfolio/cards/" + apID(c)
		got := apGet(t, s, e.write, apID(c))
		apFields(t, got, map[string]any{"effective_access": "read", "name": "read only for agents", "address": apAddress("rg")})
		expect(t, do(t, "PATCH", url, e.write, map[string]any{"expected_version": got["version"], "name": "changed"}), http.StatusForbidden, "FORBIDDEN")
		expect(t, do(t, "DELETE", url, e.write, map[string]any{"expected_version": got["version"]}), http.StatusForbidden, "FORBIDDEN")
		if again := apGet(t, s, e.write, apID(c)); !reflect.DeepEqual(again, got) {
			t.Fatalf("refused writes changed the card: %v, was %v", again, got)
		}
	})

	t.Run("card_at_none_is_not_found", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apOwnerCreateCard(t, s, e.acct, apAddress("none"), "hidden")
		if c["grant"] != "none" {
			t.Fatalf("owner-created card starts at grant %v, want none", c["grant"])
		}
		url := s.URL + "/v1/portfolio/cards/" + apID(c)
		absent := s.URL + "/v1/portfolio/cards/nosuchcardid0000"
		for _, key := range []string{e.write, e.read} {
			hid := do(t, "GET", url, key, nil)
			expect(t, hid, http.StatusNotFound, "NOT_FOUND")
			abs := do(t, "GET", absent, key, nil)
			expect(t, abs, http.StatusNotFound, "NOT_FOUND")
			if !bytes.Equal(hid.Body, abs.Body) {
				t.Errorf("a hidden card answers %s, an absent one %s", hid.Body, abs.Body)
			}
		}
		for _, q := range []struct {
			method string
			body   map[string]any
		}{
			{"PATCH", map[string]any{"expected_version": c["version"], "name": "x"}},
			{"DELETE", map[string]any{"expected_version": c["version"]}},
		} {
			hid := do(t, q.method, url, e.write, q.body)
			expect(t, hid, http.StatusNotFound, "NOT_FOUND")
			abs := do(t, q.method, absent, e.write, q.body)
			expect(t, abs, http.StatusNotFound, "NOT_FOUND")
			if !bytes.Equal(hid.Body, abs.Body) {
				t.Errorf("%s: a hidden card answers %s, an absent one %s", q.method, hid.Body, abs.Body)
			}
		}
		r := do(t, "GET", s.URL+"/owner/v1/portfolio/cards/"+apID(c), e.acct.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		if got := apCardOf(t, r); !reflect.DeepEqual(got, c) {
			t.Fatalf("hidden card changed: %v, was %v", got, c)
		}
	})

	t.Run("effective_access_is_the_lower_of_capability_and_grant", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		agentCard := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("eff-agent")})
		ownerW := apOwnerCreateCard(t, s, e.acct, apAddress("eff-w"), "")
		apGrantCard(t, s, e.acct, apID(ownerW), "write")
		ownerR := apOwnerCreateCard(t, s, e.acct, apAddress("eff-r"), "")
		apGrantCard(t, s, e.acct, apID(ownerR), "read")
		want := map[string]map[string]string{
			e.write: {apID(agentCard): "write", apID(ownerW): "write", apID(ownerR): "read"},
			e.read:  {apID(agentCard): "read", apID(ownerW): "read", apID(ownerR): "read"},
		}
		for key, cards := range want {
			l := apList(t, s, key)
			apSameSet(t, "listed ids", l.ids, []string{apID(agentCard), apID(ownerW), apID(ownerR)})
			for _, c := range l.cards {
				if c["effective_access"] != cards[c["id"].(string)] {
					t.Errorf("list: card %v effective_access %v, want %v", c["id"], c["effective_access"], cards[c["id"].(string)])
				}
			}
			for id, level := range cards {
				apFields(t, apGet(t, s, key, id), map[string]any{"effective_access": level})
			}
		}
	})

	t.Run("grant_change_applies_on_next_request", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apOwnerCreateCard(t, s, e.acct, apAddress("grant"), "g")
		id := apID(c)
		url := s.URL + "/v1/portfolio/cards/" + id
		expect(t, do(t, "GET", url, e.write, nil), http.StatusNotFound, "NOT_FOUND")

		apGrantCard(t, s, e.acct, id, "write")
		r := do(t, "PATCH", url, e.write, map[string]any{"expected_version": c["version"], "name": "by agent"})
		expect(t, r, http.StatusOK, "")
		cur := apCardOf(t, r)

		apGrantCard(t, s, e.acct, id, "read")
		apFields(t, apGet(t, s, e.write, id), map[string]any{"effective_access": "read", "name": "by agent"})
		expect(t, do(t, "PATCH", url, e.write, map[string]any{"expected_version": cur["version"], "name": "again"}), http.StatusForbidden, "FORBIDDEN")

		apGrantCard(t, s, e.acct, id, "none")
		expect(t, do(t, "GET", url, e.write, nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, do(t, "PATCH", url, e.write, map[string]any{"expected_version": cur["version"], "name": "again"}), http.StatusNotFound, "NOT_FOUND")
		if l := apList(t, s, e.write); len(l.ids) != 0 {
			t.Fatalf("card at none still listed: %s", l.raw)
		}

		apGrantCard(t, s, e.acct, id, "write")
		r = do(t, "PATCH", url, e.write, map[string]any{"expected_version": cur["version"], "name": "again"})
		expect(t, r, http.StatusOK, "")
		apFields(t, apCardOf(t, r), map[string]any{"name": "again", "effective_access": "write"})

		// The owner can hide a card the agent created.
		mine := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("grant-mine")})
		apGrantCard(t, s, e.acct, apID(mine), "none")
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+apID(mine), e.write, nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, do(t, "DELETE", s.URL+"/v1/portfolio/cards/"+apID(mine), e.write, map[string]any{"expected_version": mine["version"]}), http.StatusNotFound, "NOT_FOUND")
	})
}

// ---- helpers shared by the ap* test files ----

// apStartServer is startServer, plus closing the test process's idle
// client connections before the server stops: addrwatchd's graceful
// shutdown waits for every open connection, and a pooled connection that
// never carried a request holds it until the 30s read timeout (the
// harness then kills the process after 10s).
func apStartServer(t *testing.T) *server {
	t.Helper()
	s := startServer(t)
	t.Cleanup(func() { // runs before the server's own cleanup stops it
		httpClient.CloseIdleConnections()
		if tr, isTransport := http.DefaultTransport.(*http.Transport); isTransport {
			tr.CloseIdleConnections()
		}
	})
	return s
}

// apColorKeys is the spec's list of allowed color_key values.
var apColorKeys = []string{"amber", "green", "blue", "rose", "violet", "teal", "slate", "orange", "cyan", "pink"}

// apEnv is a fresh account with one write key and one read key.
type apEnv struct {
	acct             account
	write, read      string
	writeID, readID  string
	write2, write2ID string
}

// apSetup creates an account of plan with a write key, a second write key
// and a read key.
func apSetup(t testing.TB, s *server, plan string) apEnv {
	t.Helper()
	e := apEnv{acct: s.createAccount(t, plan)}
	e.write, e.writeID = apCreateKey(t, s, e.acct, "write")
	e.read, e.readID = apCreateKey(t, s, e.acct, "read")
	e.write2, e.write2ID = apCreateKey(t, s, e.acct, "write")
	return e
}

// apCreateKey creates an API key and returns it with its id.
func apCreateKey(t testing.TB, s *server, a account, capability string) (key, id string) {
	t.Helper()
	r := do(t, "POST", s.URL+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": capability, "name": capability + " key"})
	expect(t, r, http.StatusCreated, "")
	m := r.JSON(t)
	return m["key"].(string), m["key_id"].(string)
}

// apAddress returns a valid, distinct Bitcoin mainnet P2PKH address for seed.
func apAddress(seed string) string { return testaddr.P2PKH("addrwatch-system-test:" + seed) }

// apFlip returns a different base58 character than c.
func apFlip(c byte) string {
	if c == 'z' {
		return "y"
	}
	return "z"
}

// apCardOf returns the "card" object of a response.
func apCardOf(t testing.TB, r response) map[string]any {
	t.Helper()
	card, isObject := r.JSON(t)["card"].(map[string]any)
	if !isObject {
		t.Fatalf("response has no card object: %d %s", r.Status, r.Body)
	}
	return card
}

// apID returns a card's id.
func apID(card map[string]any) string {
	id, _ := card["id"].(string)
	return id
}

// apCreateCard creates an Account card with key and returns it.
func apCreateCard(t testing.TB, s *server, key string, body map[string]any) map[string]any {
	t.Helper()
	r := do(t, "POST", s.URL+"/v1/portfolio/cards", key, body)
	expect(t, r, http.StatusCreated, "")
	return apCardOf(t, r)
}

// apOwnerCreateCard creates an Account card as the owner (grant none).
func apOwnerCreateCard(t testing.TB, s *server, a account, address, name string) map[string]any {
	t.Helper()
	r := do(t, "POST", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, map[string]any{"address": address, "name": name})
	expect(t, r, http.StatusCreated, "")
	return apCardOf(t, r)
}

// apGrantCard sets the agent grant on an Account card.
func apGrantCard(t testing.TB, s *server, a account, id, level string) {
	t.Helper()
	r := do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/"+id, a.OwnerSecret, map[string]any{"level": level})
	expect(t, r, http.StatusOK, "")
}

// apGet returns a card through GET /v1/portfolio/cards/{id} (must be 200).
func apGet(t testing.TB, s *server, key, id string) map[string]any {
	t.Helper()
	r := do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, key, nil)
	expect(t, r, http.StatusOK, "")
	return apCardOf(t, r)
}

// apListing is a decoded GET /v1/portfolio/cards.
type apListing struct {
	cards []map[string]any
	ids   []string
	raw   []byte
}

// apList lists the key's cards and checks the list's own invariants:
// scope, and included_card_ids equal to the returned cards' ids.
func apList(t testing.TB, s *server, key string) apListing {
	t.Helper()
	r := do(t, "GET", s.URL+"/v1/portfolio/cards", key, nil)
	expect(t, r, http.StatusOK, "")
	var body struct {
		Cards    []map[string]any `json:"cards"`
		Scope    *string          `json:"scope"`
		Included []string         `json:"included_card_ids"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("list body: %v\n%s", err, r.Body)
	}
	if body.Scope == nil || *body.Scope != "accessible_portfolio" {
		t.Fatalf("list scope is not accessible_portfolio: %s", r.Body)
	}
	if body.Cards == nil || body.Included == nil {
		t.Fatalf("list lacks cards or included_card_ids (or they are null): %s", r.Body)
	}
	l := apListing{cards: body.Cards, raw: r.Body}
	for _, c := range body.Cards {
		l.ids = append(l.ids, apID(c))
	}
	if !slices.Equal(l.ids, body.Included) {
		t.Fatalf("included_card_ids %v differ from the returned cards %v", body.Included, l.ids)
	}
	return l
}

// apOwnerList returns the raw owner view of the account's cards, which
// includes every card and its grant: a fingerprint of the whole portfolio.
func apOwnerList(t testing.TB, s *server, a account) []byte {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/portfolio/cards", a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	return r.Body
}

// apMe returns GET /v1/me.
func apMe(t testing.TB, s *server, key string) map[string]any {
	t.Helper()
	r := do(t, "GET", s.URL+"/v1/me", key, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

func apUsagePart(t testing.TB, me map[string]any, field, part string) int {
	t.Helper()
	u, isObject := me[field].(map[string]any)
	if !isObject {
		t.Fatalf("/me has no %s object: %v", field, me)
	}
	n, isNumber := u[part].(float64)
	if !isNumber {
		t.Fatalf("/me %s.%s is not a number: %v", field, part, u)
	}
	return int(n)
}

func apUsage(t testing.TB, me map[string]any, field string) int {
	t.Helper()
	return apUsagePart(t, me, field, "used")
}

func apLimit(t testing.TB, me map[string]any, field string) int {
	t.Helper()
	return apUsagePart(t, me, field, "limit")
}

// apStrings returns a JSON array of strings, failing on anything else.
func apStrings(t testing.TB, v any, what string) []string {
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

// apSameSet fails unless got and want hold the same strings (any order,
// no duplicates in got).
func apSameSet(t testing.TB, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// apFields fails unless each field of want equals the object's.
func apFields(t testing.TB, obj map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if !reflect.DeepEqual(obj[k], v) {
			t.Fatalf("field %s = %#v, want %#v (object %v)", k, obj[k], v, obj)
		}
	}
}

// apExpect is expect that reports and continues, naming the case.
func apExpect(t testing.TB, what string, r response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: status %d, want %d; body %s", what, r.Status, status, r.Body)
		return
	}
	if code == "" {
		return
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Errorf("%s: body is not a JSON object: %s", what, r.Body)
		return
	}
	if m["code"] != code {
		t.Errorf("%s: code %v, want %s; body %s", what, m["code"], code, r.Body)
	}
	if msg, _ := m["error"].(string); msg == "" {
		t.Errorf("%s: error body without a message: %s", what, r.Body)
	}
}

// apRaw sends one request without the harness's defaults: contentType ""
// sends no Content-Type at all. It returns an error instead of failing, so
// it can run on any goroutine.
func apRaw(method, url, bearer string, body []byte, contentType string, headers ...string) (response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return response{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// apFirstSpaceID returns the id of the account's first Space. No route
// lists Spaces to the owner yet, so unless GET /owner/v1/bookmark-spaces
// answers, it takes a snapshot through the admin API and reads the id from
// the server's snapshot files (the test's own data dir).
func apFirstSpaceID(t testing.TB, s *server, a account) string {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/bookmark-spaces", a.OwnerSecret, nil)
	if r.Status == http.StatusOK {
		var body struct {
			Spaces []struct {
				ID string `json:"id"`
			} `json:"spaces"`
		}
		if err := json.Unmarshal(r.Body, &body); err == nil && len(body.Spaces) > 0 && body.Spaces[0].ID != "" {
			return body.Spaces[0].ID
		}
	}
	r = do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	files, _ := filepath.Glob(filepath.Join(s.Dir, "snapshots", "*", "state.bin"))
	re := regexp.MustCompile(`\{"id":"` + regexp.QuoteMeta(a.ID) + `".*?"spaces":\[\{"id":"([^"]+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	t.Fatalf("cannot find the first Space of account %s (snapshots: %v)", a.ID, files)
	return ""
}

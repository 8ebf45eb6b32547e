package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"
)

// TestCardMovesEndToEnd drives POST /cards/move and /cards/move/validate
// (agent and owner) over real HTTP in each direction: Space to Space,
// Portfolio to Space and Space to Portfolio. It checks the new id at the
// destination and the retired source id, the response, the coin-type
// restrictions, stale versions, permissions, capacity, Idempotency-Key,
// OPTIONS/405 and bad input. One server; each subtest has its own account.
func TestCardMovesEndToEnd(t *testing.T) {
	t.Parallel()
	s := spStartServer(t)

	t.Run("space_to_space", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		dest := spID(ag.createSpace(t, "Destination", "bitcoin"))
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("s2s"), "name": "Travelling", "note": "keeps\nits note", "color_key": "orange"})
		srcV := ag.version(t, e.first)
		body := spMoveBody(c, e.first, dest, ag.version(t, dest))

		before := e.state(t)
		r := ag.do(t, "POST", "/cards/move/validate", body)
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t); !reflect.DeepEqual(got, map[string]any{"valid": true}) {
			t.Fatalf("validate answered %s", r.Body)
		}
		if after := e.state(t); after != before {
			t.Fatalf("validate moved something:\nbefore %s\nafter  %s", before, after)
		}

		r = ag.do(t, "POST", "/cards/move", body)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		newID := spCheckMoved(t, m, c, "bookmark", dest)
		loc := spObject(t, m, "location")
		if sv := spStr(loc, "space_version"); sv != "" && sv != ag.version(t, dest) {
			t.Errorf("location.space_version %q, the Space now reads %q", sv, ag.version(t, dest))
		}
		card := spObject(t, m, "card")
		spFields(t, "moved card", card, map[string]any{"effective_access": "write"})
		if got := ag.card(t, dest, newID); !reflect.DeepEqual(got, card) {
			t.Fatalf("GET moved card %v, want the move's card %v", got, card)
		}
		// The source id is retired everywhere.
		spCheck(t, "GET old id in the source", ag.do(t, "GET", "/bookmark-spaces/"+e.first+"/cards/"+spID(c), nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "GET old id in the destination", ag.do(t, "GET", "/bookmark-spaces/"+dest+"/cards/"+spID(c), nil), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "PATCH old id", ag.do(t, "PATCH", "/bookmark-spaces/"+e.first+"/cards/"+spID(c), map[string]any{"expected_version": c["version"], "name": "x"}), http.StatusNotFound, "NOT_FOUND")
		if cards, _ := ag.cards(t, e.first); len(cards) != 0 {
			t.Fatalf("source still holds cards: %v", cards)
		}
		if cards, _ := ag.cards(t, dest); !slices.Equal(spIDs(cards), []string{newID}) {
			t.Fatalf("destination holds %v, want only %s", spIDs(cards), newID)
		}
		if v := ag.version(t, e.first); v == srcV {
			t.Errorf("source Space version did not change with the move")
		}
		// Moving it again without the key is a new request: the source is gone.
		spCheck(t, "move the retired id", ag.do(t, "POST", "/cards/move", body), http.StatusNotFound, "NOT_FOUND")
		// And back, by the new id.
		back := spMoveBody(card, dest, e.first, ag.version(t, e.first))
		r = ag.do(t, "POST", "/cards/move", back)
		expect(t, r, http.StatusOK, "")
		spCheckMoved(t, r.JSON(t), card, "bookmark", e.first)
	})

	t.Run("portfolio_to_space", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		r := ag.do(t, "POST", "/portfolio/cards", map[string]any{"address": spAddress("p2s"), "name": "From portfolio", "note": "n", "color_key": "green"})
		expect(t, r, http.StatusCreated, "")
		p := spObject(t, r.JSON(t), "card")
		body := map[string]any{"source_kind": "portfolio", "source_id": spID(p), "destination_kind": "bookmark", "destination_space_id": e.first,
			"expected_source_version": p["version"], "expected_destination_version": ag.version(t, e.first)}

		expect(t, ag.do(t, "POST", "/cards/move/validate", body), http.StatusOK, "")
		r = ag.do(t, "POST", "/cards/move", body)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		newID := spCheckMoved(t, m, p, "bookmark", e.first)
		card := spObject(t, m, "card")
		if _, has := card["grant"]; has {
			t.Errorf("moved bookmark card shows a grant: %v", card)
		}
		if got := ag.card(t, e.first, newID); !reflect.DeepEqual(got, card) {
			t.Fatalf("GET moved card %v, want %v", got, card)
		}
		// It follows the Space's grant now.
		spFields(t, "read key's view", e.agent(e.read).card(t, e.first, newID), map[string]any{"effective_access": "read"})
		spCheck(t, "GET old Account card", ag.do(t, "GET", "/portfolio/cards/"+spID(p), nil), http.StatusNotFound, "NOT_FOUND")
		r = ag.do(t, "GET", "/portfolio/cards", nil)
		expect(t, r, http.StatusOK, "")
		if bytes.Contains(r.Body, []byte(spID(p))) {
			t.Fatalf("Portfolio still lists the moved card: %s", r.Body)
		}
		if used, _ := spUsage(t, e.me(t, e.write), "portfolio_cards"); used != 0 {
			t.Errorf("portfolio_cards.used = %d after moving the only card out", used)
		}
	})

	t.Run("space_to_portfolio", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("s2p"), "name": "To portfolio", "color_key": "blue"})
		body := map[string]any{"source_kind": "bookmark", "source_id": spID(c), "source_space_id": e.first, "destination_kind": "portfolio", "expected_source_version": c["version"]}

		expect(t, ag.do(t, "POST", "/cards/move/validate", body), http.StatusOK, "")
		r := ag.do(t, "POST", "/cards/move", body)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		newID := spCheckMoved(t, m, c, "portfolio", "")
		card := spObject(t, m, "card")
		spFields(t, "moved Account card", card, map[string]any{"effective_access": "write"})
		// The resulting Account card gets write; the read key sees read.
		r = ag.do(t, "GET", "/portfolio/cards/"+newID, nil)
		expect(t, r, http.StatusOK, "")
		if got := spObject(t, r.JSON(t), "card"); !reflect.DeepEqual(got, card) {
			t.Fatalf("GET moved Account card %v, want %v", got, card)
		}
		r = e.agent(e.read).do(t, "GET", "/portfolio/cards/"+newID, nil)
		expect(t, r, http.StatusOK, "")
		spFields(t, "read key's view", spObject(t, r.JSON(t), "card"), map[string]any{"effective_access": "read"})
		r = e.owner().do(t, "GET", "/portfolio/cards/"+newID, nil)
		expect(t, r, http.StatusOK, "")
		spFields(t, "owner's view", spObject(t, r.JSON(t), "card"), map[string]any{"grant": "write"})
		spCheck(t, "GET old bookmark id", ag.do(t, "GET", "/bookmark-spaces/"+e.first+"/cards/"+spID(c), nil), http.StatusNotFound, "NOT_FOUND")
		if ids := spStrings(t, e.me(t, e.write)["accessible_card_ids"], "accessible_card_ids"); !slices.Equal(ids, []string{newID}) {
			t.Errorf("/me accessible_card_ids %v, want [%s]", ids, newID)
		}
	})

	t.Run("altcoin_space_to_space", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		a1 := spID(ag.createSpace(t, "Alt 1", "altcoin"))
		a2 := spID(ag.createSpace(t, "Alt 2", "altcoin"))
		for _, c := range []struct{ coin, address string }{{"ethereum", spEthMixed1}, {"unknown", "private: 42"}} {
			card := ag.addCard(t, a1, map[string]any{"coin_id": c.coin, "address": c.address, "name": c.coin})
			body := spMoveBody(card, a1, a2, ag.version(t, a2))
			expect(t, ag.do(t, "POST", "/cards/move/validate", body), http.StatusOK, "")
			r := ag.do(t, "POST", "/cards/move", body)
			expect(t, r, http.StatusOK, "")
			spCheckMoved(t, r.JSON(t), card, "bookmark", a2)
		}
		if cards, _ := ag.cards(t, a1); len(cards) != 0 {
			t.Fatalf("source still holds %v", cards)
		}
	})

	t.Run("cross_type_moves", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		alt := spID(ag.createSpace(t, "Alt", "altcoin"))
		sheet := spID(ag.createSpace(t, "Grid", "sheet"))
		btc := ag.addCard(t, e.first, map[string]any{"address": spAddress("cross-btc")})
		// An "unknown" altcoin card whose text is a Bitcoin address is still
		// an altcoin card.
		altCard := ag.addCard(t, alt, map[string]any{"coin_id": "unknown", "address": spAddress("cross-alt")})
		r := ag.do(t, "POST", "/portfolio/cards", map[string]any{"address": spAddress("cross-portfolio")})
		expect(t, r, http.StatusCreated, "")
		p := spObject(t, r.JSON(t), "card")
		toPortfolio := func(c map[string]any, space string) map[string]any {
			return map[string]any{"source_kind": "bookmark", "source_id": spID(c), "source_space_id": space, "destination_kind": "portfolio", "expected_source_version": c["version"]}
		}
		fromPortfolio := func(dest string) map[string]any {
			return map[string]any{"source_kind": "portfolio", "source_id": spID(p), "destination_kind": "bookmark", "destination_space_id": dest,
				"expected_source_version": p["version"], "expected_destination_version": ag.version(t, dest)}
		}
		cases := []struct {
			what string
			body map[string]any
		}{
			{"bitcoin Space to altcoin Space", spMoveBody(btc, e.first, alt, ag.version(t, alt))},
			{"altcoin Space to bitcoin Space", spMoveBody(altCard, alt, e.first, ag.version(t, e.first))},
			{"altcoin Space to Portfolio", toPortfolio(altCard, alt)},
			{"Portfolio to altcoin Space", fromPortfolio(alt)},
			{"bitcoin Space to Sheet Space", spMoveBody(btc, e.first, sheet, ag.version(t, sheet))},
			{"altcoin Space to Sheet Space", spMoveBody(altCard, alt, sheet, ag.version(t, sheet))},
			{"Portfolio to Sheet Space", fromPortfolio(sheet)},
		}
		before := e.state(t)
		for _, c := range cases {
			v := ag.do(t, "POST", "/cards/move/validate", c.body)
			w := ag.do(t, "POST", "/cards/move", c.body)
			spSame(t, c.what, v, w)
			spCheck(t, c.what+" (validate)", v, http.StatusConflict, "CROSS_TYPE_MOVE")
			spCheck(t, c.what+" (write)", w, http.StatusConflict, "CROSS_TYPE_MOVE")
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused moves changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("stale_versions", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		dest := spID(ag.createSpace(t, "Destination", "bitcoin"))
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("stale")})
		r := ag.do(t, "PATCH", "/bookmark-spaces/"+e.first+"/cards/"+spID(c), map[string]any{"expected_version": c["version"], "name": "edited"})
		expect(t, r, http.StatusOK, "")
		fresh := spObject(t, r.JSON(t), "card")
		destStale := ag.version(t, dest)
		ag.addCard(t, dest, map[string]any{"address": spAddress("stale-dest-bump")})
		r = ag.do(t, "POST", "/portfolio/cards", map[string]any{"address": spAddress("stale-portfolio")})
		expect(t, r, http.StatusCreated, "")
		p := spObject(t, r.JSON(t), "card")
		r = ag.do(t, "PATCH", "/portfolio/cards/"+spID(p), map[string]any{"expected_version": p["version"], "name": "edited"})
		expect(t, r, http.StatusOK, "")

		destNow := ag.version(t, dest)
		cases := []struct {
			what string
			body map[string]any
		}{
			{"stale source version", spMoveBody(map[string]any{"id": spID(c), "version": c["version"]}, e.first, dest, destNow)},
			{"stale destination version", spMoveBody(fresh, e.first, dest, destStale)},
			{"source card version as destination version", spMoveBody(fresh, e.first, dest, spStr(fresh, "version"))},
			{"stale source version into Portfolio", map[string]any{"source_kind": "bookmark", "source_id": spID(c), "source_space_id": e.first, "destination_kind": "portfolio", "expected_source_version": c["version"]}},
			{"stale Account card version", map[string]any{"source_kind": "portfolio", "source_id": spID(p), "destination_kind": "bookmark", "destination_space_id": dest, "expected_source_version": p["version"], "expected_destination_version": destNow}},
		}
		before := e.state(t)
		for _, tc := range cases {
			v := ag.do(t, "POST", "/cards/move/validate", tc.body)
			w := ag.do(t, "POST", "/cards/move", tc.body)
			spSame(t, tc.what, v, w)
			spCheck(t, tc.what, w, http.StatusConflict, "STALE_VERSION")
		}
		if after := e.state(t); after != before {
			t.Fatalf("stale moves changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// There is no source-Space version: a change elsewhere in the
		// source Space does not block the move.
		ag.addCard(t, e.first, map[string]any{"address": spAddress("stale-source-bump")})
		r = ag.do(t, "POST", "/cards/move", spMoveBody(fresh, e.first, dest, ag.version(t, dest)))
		expect(t, r, http.StatusOK, "")
	})

	t.Run("permissions_and_capacity", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag, ow := e.agent(e.write), e.owner()
		dest := spID(ag.createSpace(t, "Destination", "bitcoin"))
		full := spID(ag.createSpace(t, "Full", "bitcoin"))
		ro := spID(ow.createSpace(t, "Read only", "bitcoin"))
		hidden := spID(ow.createSpace(t, "Hidden", "bitcoin"))
		e.grant(t, ro, "read")
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("perm")})
		roCard := ow.addCard(t, ro, map[string]any{"address": spAddress("perm-ro")})
		hiddenCard := ow.addCard(t, hidden, map[string]any{"address": spAddress("perm-hidden")})
		for i := range 10 {
			ag.addCard(t, full, map[string]any{"address": spAddress(fmt.Sprintf("perm-full-%d", i))})
		}
		ag.addCard(t, dest, map[string]any{"address": spAddress("perm-dup")})
		dupCard := ag.addCard(t, e.first, map[string]any{"address": spAddress("perm-dup")})
		// Account cards: one read-granted, one hidden, and one hidden
		// holding the address of a bookmark card.
		roP := spOwnerPortfolioCard(t, e, spAddress("perm-p-ro"))
		e.grantCard(t, spID(roP), "read")
		hiddenP := spOwnerPortfolioCard(t, e, spAddress("perm-p-hidden"))
		spOwnerPortfolioCard(t, e, spAddress("perm-p-dup"))
		pDupSource := ag.addCard(t, e.first, map[string]any{"address": spAddress("perm-p-dup")})

		v := func(id string) string { return ow.version(t, id) }
		fromPortfolio := func(card map[string]any, dest string) map[string]any {
			return map[string]any{"source_kind": "portfolio", "source_id": spID(card), "destination_kind": "bookmark", "destination_space_id": dest,
				"expected_source_version": card["version"], "expected_destination_version": v(dest)}
		}
		toPortfolio := func(card map[string]any, space string) map[string]any {
			return map[string]any{"source_kind": "bookmark", "source_id": spID(card), "source_space_id": space, "destination_kind": "portfolio", "expected_source_version": card["version"]}
		}
		cases := []struct {
			what   string
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"read-only key", e.read, spMoveBody(c, e.first, dest, v(dest)), http.StatusForbidden, "FORBIDDEN"},
			{"read-only key into Portfolio", e.read, toPortfolio(c, e.first), http.StatusForbidden, "FORBIDDEN"},
			{"read-granted source Space", e.write, spMoveBody(roCard, ro, dest, v(dest)), http.StatusForbidden, "FORBIDDEN"},
			{"read-granted source Space into Portfolio", e.write, toPortfolio(roCard, ro), http.StatusForbidden, "FORBIDDEN"},
			{"read-granted destination Space", e.write, spMoveBody(c, e.first, ro, v(ro)), http.StatusForbidden, "FORBIDDEN"},
			{"hidden source Space", e.write, spMoveBody(hiddenCard, hidden, dest, v(dest)), http.StatusNotFound, "NOT_FOUND"},
			{"hidden destination Space", e.write, spMoveBody(c, e.first, hidden, v(hidden)), http.StatusNotFound, "NOT_FOUND"},
			{"absent destination Space", e.write, spMoveBody(c, e.first, "no-such-space", "v1"), http.StatusNotFound, "NOT_FOUND"},
			{"absent source card", e.write, spMoveBody(map[string]any{"id": "no-such-card", "version": "v1"}, e.first, dest, v(dest)), http.StatusNotFound, "NOT_FOUND"},
			{"card under the wrong source Space", e.write, spMoveBody(c, full, dest, v(dest)), http.StatusNotFound, "NOT_FOUND"},
			{"read-granted Account card", e.write, fromPortfolio(roP, dest), http.StatusForbidden, "FORBIDDEN"},
			{"hidden Account card", e.write, fromPortfolio(hiddenP, dest), http.StatusNotFound, "NOT_FOUND"},
			{"full destination Space", e.write, spMoveBody(c, e.first, full, v(full)), http.StatusConflict, "BOOKMARK_FULL"},
			{"duplicate in the destination Space", e.write, spMoveBody(dupCard, e.first, dest, v(dest)), http.StatusConflict, "DUPLICATE_ADDRESS"},
			{"duplicate of a hidden Account card", e.write, toPortfolio(pDupSource, e.first), http.StatusConflict, "DUPLICATE_ADDRESS"},
		}
		before := e.state(t)
		for _, tc := range cases {
			a := e.agent(tc.key)
			vr := a.do(t, "POST", "/cards/move/validate", tc.body)
			w := a.do(t, "POST", "/cards/move", tc.body)
			spSame(t, tc.what, vr, w)
			spCheck(t, tc.what+" (validate)", vr, tc.status, tc.code)
			spCheck(t, tc.what+" (write)", w, tc.status, tc.code)
		}
		if after := e.state(t); after != before {
			t.Fatalf("refused moves changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("portfolio_full", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		ag := e.agent(e.write)
		for i := range 10 {
			spOwnerPortfolioCard(t, e, spAddress(fmt.Sprintf("pfull-%d", i)))
		}
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("pfull-move")})
		body := map[string]any{"source_kind": "bookmark", "source_id": spID(c), "source_space_id": e.first, "destination_kind": "portfolio", "expected_source_version": c["version"]}
		before := e.state(t)
		v := ag.do(t, "POST", "/cards/move/validate", body)
		w := ag.do(t, "POST", "/cards/move", body)
		spSame(t, "full Portfolio", v, w)
		spCheck(t, "full Portfolio", w, http.StatusConflict, "OVERVIEW_FULL")
		if after := e.state(t); after != before {
			t.Fatalf("refused move changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("owner_moves", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "")
		ow := e.owner()
		c := ow.addCard(t, e.first, map[string]any{"address": spAddress("owner-move"), "name": "owner's"})
		body := map[string]any{"source_kind": "bookmark", "source_id": spID(c), "source_space_id": e.first, "destination_kind": "portfolio", "expected_source_version": c["version"]}
		expect(t, ow.do(t, "POST", "/cards/move/validate", body), http.StatusOK, "")
		r := ow.do(t, "POST", "/cards/move", body)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		newID := spCheckMoved(t, m, c, "portfolio", "")
		// What the owner moves in starts at grant none.
		spFields(t, "owner-moved Account card", spObject(t, m, "card"), map[string]any{"grant": "none"})
		spCheck(t, "agent GET of the owner-moved card", e.agent(e.write).do(t, "GET", "/portfolio/cards/"+newID, nil), http.StatusNotFound, "NOT_FOUND")
		// And back into the Space.
		r = ow.do(t, "GET", "/portfolio/cards/"+newID, nil)
		expect(t, r, http.StatusOK, "")
		p := spObject(t, r.JSON(t), "card")
		back := map[string]any{"source_kind": "portfolio", "source_id": newID, "destination_kind": "bookmark", "destination_space_id": e.first,
			"expected_source_version": p["version"], "expected_destination_version": ow.version(t, e.first)}
		r = ow.do(t, "POST", "/cards/move", back)
		expect(t, r, http.StatusOK, "")
		spCheckMoved(t, r.JSON(t), p, "bookmark", e.first)
		// The agent cannot move the owner's card while the Space is hidden.
		cards, _ := ow.cards(t, e.first)
		hiddenBody := map[string]any{"source_kind": "bookmark", "source_id": spID(cards[0]), "source_space_id": e.first, "destination_kind": "portfolio", "expected_source_version": cards[0]["version"]}
		spCheck(t, "agent moves a card of a hidden Space", e.agent(e.write).do(t, "POST", "/cards/move", hiddenBody), http.StatusNotFound, "NOT_FOUND")
	})

	t.Run("idempotent_move", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		dest := spID(ag.createSpace(t, "Destination", "bitcoin"))
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("idem-move"), "name": "once"})
		c2 := ag.addCard(t, e.first, map[string]any{"address": spAddress("idem-move-2")})
		const token = "card-move-000001"
		body := spMoveBody(c, e.first, dest, ag.version(t, dest))
		first := ag.do(t, "POST", "/cards/move", body, spIdem, token)
		expect(t, first, http.StatusOK, "")
		for _, replay := range []any{body, spReformat(t, body)} {
			r := ag.do(t, "POST", "/cards/move", replay, spIdem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Fatalf("replay answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
			}
		}
		newID := spStr(first.JSON(t), "new_id")
		if cards, _ := ag.cards(t, dest); !slices.Equal(spIDs(cards), []string{newID}) {
			t.Fatalf("destination after move and replays holds %v, want [%s]", spIDs(cards), newID)
		}
		if cards, _ := ag.cards(t, e.first); !slices.Equal(spIDs(cards), []string{spID(c2)}) {
			t.Fatalf("source after move and replays holds %v", spIDs(cards))
		}
		before := e.state(t)
		spCheck(t, "same token, different body", ag.do(t, "POST", "/cards/move", spMoveBody(c2, e.first, dest, ag.version(t, dest)), spIdem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		spCheck(t, "same token, validate route (not idempotent)", ag.do(t, "POST", "/cards/move/validate", body, spIdem, token), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "retry without the header", ag.do(t, "POST", "/cards/move", body), http.StatusNotFound, "NOT_FOUND")
		spCheck(t, "same token, another key", e.agent(e.write2).do(t, "POST", "/cards/move", body, spIdem, token), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("refused requests changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// Access is checked again on replay.
		e.grant(t, dest, "none")
		r := ag.do(t, "POST", "/cards/move", body, spIdem, token)
		spCheck(t, "replay with the destination hidden", r, http.StatusNotFound, "NOT_FOUND")
		if bytes.Contains(r.Body, []byte(newID)) {
			t.Fatalf("replay with the destination hidden reveals the card: %s", r.Body)
		}
		e.grant(t, dest, "write")
		if r := ag.do(t, "POST", "/cards/move", body, spIdem, token); !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("replay after re-grant answered %d %s", r.Status, r.Body)
		}
	})

	t.Run("concurrent_moves_of_one_card", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		a := spID(ag.createSpace(t, "A", "bitcoin"))
		b := spID(ag.createSpace(t, "B", "bitcoin"))
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("race-move")})
		va, vb := ag.version(t, a), ag.version(t, b)
		var bodies [][]byte
		for i := range 8 {
			var m map[string]any
			switch i % 3 {
			case 0:
				m = spMoveBody(c, e.first, a, va)
			case 1:
				m = spMoveBody(c, e.first, b, vb)
			default:
				m = map[string]any{"source_kind": "bookmark", "source_id": spID(c), "source_space_id": e.first, "destination_kind": "portfolio", "expected_source_version": c["version"]}
			}
			enc, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, enc)
		}
		won := 0
		for i, r := range spConcurrent(t, "POST", s.URL+"/v1/cards/move", e.write, bodies, nil) {
			if r.Status == http.StatusOK {
				won++
				continue
			}
			if r.Status != http.StatusNotFound && r.Status != http.StatusConflict {
				t.Errorf("racing move %d answered %d %s, want 200, 404 or 409", i, r.Status, r.Body)
			}
		}
		total := 0
		for _, id := range []string{e.first, a, b} {
			cards, _ := ag.cards(t, id)
			total += len(cards)
		}
		r := ag.do(t, "GET", "/portfolio/cards", nil)
		expect(t, r, http.StatusOK, "")
		var pl struct {
			Cards []map[string]any `json:"cards"`
		}
		json.Unmarshal(r.Body, &pl)
		total += len(pl.Cards)
		if won != 1 || total != 1 {
			t.Fatalf("%d racing moves of one card succeeded and %d copies exist; want 1 and 1", won, total)
		}
	})

	t.Run("options_and_405", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "base", "write")
		e.agent(e.write).addCard(t, e.first, map[string]any{"address": spAddress("move-options")})
		before := e.state(t)
		spCheckRoutes(t, s, e, []spRoute{
			{"/cards/move", []string{"POST"}},
			{"/cards/move/validate", []string{"POST"}},
		}, nil)
		spCheck(t, "GET /v1/cards", do(t, "GET", s.URL+"/v1/cards", e.write, nil), http.StatusNotFound, "NOT_FOUND")
		if after := e.state(t); after != before {
			t.Fatalf("refused methods changed the account:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("bad_input", func(t *testing.T) {
		t.Parallel()
		e := spSetup(t, s, "extended", "write")
		ag := e.agent(e.write)
		dest := spID(ag.createSpace(t, "Destination", "bitcoin"))
		c := ag.addCard(t, e.first, map[string]any{"address": spAddress("bad-move")})
		cv, dv := spStr(c, "version"), ag.version(t, dest)
		src := `"source_kind":"bookmark","source_id":"` + spID(c) + `","source_space_id":"` + e.first + `"`
		toDest := `"destination_kind":"bookmark","destination_space_id":"` + dest + `","expected_destination_version":"` + dv + `"`
		valid := `{` + src + `,` + toDest + `,"expected_source_version":"` + cv + `"`
		route := func(name, path string) spBadRoute {
			return spBadRoute{
				name: name, method: "POST", path: path, valid: valid,
				wrongTypes: []string{
					`{"source_kind":1,"source_id":"` + spID(c) + `","source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{` + src + `,` + toDest + `,"expected_source_version":7}`,
					`{"source_kind":"bookmark","source_id":["` + spID(c) + `"],"source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"bookmark","destination_space_id":"` + dest + `","expected_destination_version":3,"expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":true,"destination_space_id":"` + dest + `","expected_destination_version":"` + dv + `","expected_source_version":"` + cv + `"}`,
					// Values the move rules refuse as request-shape errors.
					`{"source_kind":"space","source_id":"` + spID(c) + `","source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"Portfolio","expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"portfolio","expected_destination_version":"` + dv + `","expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"portfolio","destination_space_id":"` + dest + `","expected_source_version":"` + cv + `"}`,
					`{"source_kind":"portfolio","source_id":"` + spID(c) + `","source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{"source_kind":"portfolio","source_id":"x","destination_kind":"portfolio","expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"bookmark","destination_space_id":"` + e.first + `","expected_destination_version":"` + dv + `","expected_source_version":"` + cv + `"}`,
					`{"source_kind":"bookmark","source_id":"","source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
				},
				missing: []string{
					`{"source_id":"` + spID(c) + `","source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{"source_kind":"bookmark","source_space_id":"` + e.first + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{"source_kind":"bookmark","source_id":"` + spID(c) + `",` + toDest + `,"expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_space_id":"` + dest + `","expected_destination_version":"` + dv + `","expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"bookmark","expected_destination_version":"` + dv + `","expected_source_version":"` + cv + `"}`,
					`{` + src + `,"destination_kind":"bookmark","destination_space_id":"` + dest + `","expected_source_version":"` + cv + `"}`,
					`{` + src + `,` + toDest + `}`,
					`{}`,
				},
			}
		}
		spRunBadInput(t, s, e, []spBadRoute{route("move", "/cards/move"), route("validate move", "/cards/move/validate")}, true)
		// The valid body does move.
		r := ag.do(t, "POST", "/cards/move", valid+`}`)
		expect(t, r, http.StatusOK, "")
	})
}

// spMoveBody is the body of a Space-to-Space move of card.
func spMoveBody(card map[string]any, from, to, destVersion string) map[string]any {
	return map[string]any{
		"source_kind": "bookmark", "source_id": spID(card), "source_space_id": from,
		"destination_kind": "bookmark", "destination_space_id": to,
		"expected_source_version": card["version"], "expected_destination_version": destVersion,
	}
}

// spCheckMoved checks a move response: old_id, a new id, the location and
// the card (same content as the source card) and returns the new id.
func spCheckMoved(t testing.TB, m map[string]any, source map[string]any, kind, spaceID string) string {
	t.Helper()
	newID := spStr(m, "new_id")
	if spStr(m, "old_id") != spID(source) || newID == "" || newID == spID(source) {
		t.Fatalf("move answered old_id %v new_id %v; the source was %s (a move makes a new id)", m["old_id"], m["new_id"], spID(source))
	}
	loc := spObject(t, m, "location")
	if loc["kind"] != kind || spStr(loc, "space_id") != spaceID {
		t.Fatalf("move location %v, want kind %s space %q", loc, kind, spaceID)
	}
	if kind == "bookmark" && spStr(loc, "space_version") == "" {
		t.Errorf("move into a Space has no location.space_version: %v", loc)
	}
	card := spObject(t, m, "card")
	if spID(card) != newID || spStr(card, "version") == "" {
		t.Fatalf("move card %v does not carry the new id %s and a version", card, newID)
	}
	for _, f := range []string{"address", "name", "note", "color_key", "coin_id"} {
		if !reflect.DeepEqual(card[f], source[f]) {
			t.Errorf("moved card's %s = %#v, the source's was %#v", f, card[f], source[f])
		}
	}
	return newID
}

// spOwnerPortfolioCard creates an Account card as the owner (grant none).
func spOwnerPortfolioCard(t testing.TB, e spEnv, address string) map[string]any {
	t.Helper()
	r := e.owner().do(t, "POST", "/portfolio/cards", map[string]any{"address": address})
	expect(t, r, http.StatusCreated, "")
	return spObject(t, r.JSON(t), "card")
}

package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestIdempotencyKeyOnCardRoutes checks the Idempotency-Key header on
// POST /v1/portfolio/cards and DELETE /v1/portfolio/cards/{id}: token
// shape, replay of the same request (also reformatted), conflict on a
// different request, separate namespaces per API key, access re-checked on
// replay, and that failed requests are not recorded.
func TestIdempotencyKeyOnCardRoutes(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)
	const idem = "Idempotency-Key"

	t.Run("token_shape", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("shape-card")})
		del := s.URL + "/v1/portfolio/cards/" + apID(c)
		before := apOwnerList(t, s, e.acct)
		bad := map[string]string{
			"15 characters":  strings.Repeat("a", 15),
			"129 characters": strings.Repeat("a", 129),
			"space":          "abcdefgh ijklmnop",
			"slash":          "abcdefgh/ijklmnop",
			"plus":           "abcdefgh+ijklmnop",
			"equals":         "abcdefghijklmnop==",
			"at":             "abcdefgh@ijklmnop",
			"colon":          "abcdefgh:ijklmnop",
			"non-ASCII":      "abcdefghijklmnopé",
			"quote":          `abcdefgh"ijklmnop`,
		}
		for name, token := range bad {
			r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("shape-new")}, idem, token)
			apExpect(t, "POST with token "+name, r, http.StatusUnprocessableEntity, "VALIDATION")
			r = do(t, "DELETE", del, e.write, map[string]any{"expected_version": c["version"]}, idem, token)
			apExpect(t, "DELETE with token "+name, r, http.StatusUnprocessableEntity, "VALIDATION")
		}
		if after := apOwnerList(t, s, e.acct); !bytes.Equal(before, after) {
			t.Fatalf("requests with bad tokens changed the account:\nbefore %s\nafter  %s", before, after)
		}
		// The bounds and every allowed character are accepted.
		good := []string{strings.Repeat("a", 16), strings.Repeat("Z", 128), "AZaz09._~-AZaz09._~-"}
		for i, token := range good {
			r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress(fmt.Sprintf("shape-good-%d", i))}, idem, token)
			expect(t, r, http.StatusCreated, "")
		}
		r := do(t, "DELETE", del, e.write, map[string]any{"expected_version": c["version"]}, idem, strings.Repeat("d", 16))
		expect(t, r, http.StatusOK, "")
		if l := apList(t, s, e.write); len(l.ids) != 3 {
			t.Fatalf("want 3 cards after the accepted requests, got %s", l.raw)
		}
	})

	t.Run("same_request_replays", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		addr := apAddress("replay")
		token := "replay-token-0001"
		first := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, `{"address":"`+addr+`","name":"Savings","note":"n","color_key":"rose"}`, idem, token)
		expect(t, first, http.StatusCreated, "")
		variants := []string{
			`{"address":"` + addr + `","name":"Savings","note":"n","color_key":"rose"}`,
			`{"color_key":"rose","note":"n","name":"Savings","address":"` + addr + `"}`,
			"{\n  \"name\" : \"Savings\",\n\t\"address\":\"" + addr + "\" , \"note\":\"n\",\"color_key\":\"rose\"\n}\n",
			`{"address":"` + addr + `","name":"Sav\u0069ngs","note":"n","color_key":"rose"}`,
		}
		for _, body := range variants {
			r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Errorf("replay of %s answered %d %s, want %d %s", body, r.Status, r.Body, first.Status, first.Body)
			}
		}
		l := apList(t, s, e.write)
		apSameSet(t, "listed ids", l.ids, []string{apID(apCardOf(t, first))})
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 1 {
			t.Fatalf("portfolio_cards.used %d after replays, want 1", used)
		}
		// Without the token, the same body is a new request (a duplicate).
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, variants[0]), http.StatusConflict, "DUPLICATE_ADDRESS")
	})

	t.Run("concurrent_same_request_creates_once", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		body := []byte(`{"address":"` + apAddress("concurrent") + `","name":"c"}`)
		const n = 8
		results := make([]response, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = apRaw("POST", s.URL+"/v1/portfolio/cards", e.write, body, "application/json", idem, "concurrent-token-01")
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if results[i].Status != http.StatusCreated || !bytes.Equal(results[i].Body, results[0].Body) {
				t.Errorf("request %d answered %d %s; request 0 answered %d %s", i, results[i].Status, results[i].Body, results[0].Status, results[0].Body)
			}
		}
		if l := apList(t, s, e.write); len(l.ids) != 1 {
			t.Fatalf("concurrent retries created %d cards: %s", len(l.ids), l.raw)
		}
	})

	t.Run("different_request_conflicts", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		token := "conflict-token-01"
		first := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("conflict"), "name": "a"}, idem, token)
		expect(t, first, http.StatusCreated, "")
		card := apCardOf(t, first)
		for _, body := range []map[string]any{
			{"address": apAddress("conflict"), "name": "b"},
			{"address": apAddress("conflict-other"), "name": "a"},
			{"address": apAddress("conflict")},
		} {
			r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
			apExpect(t, fmt.Sprintf("same token, body %v", body), r, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		}
		// The same token on another route is another request too.
		r := do(t, "DELETE", s.URL+"/v1/portfolio/cards/"+apID(card), e.write, map[string]any{"expected_version": card["version"]}, idem, token)
		expect(t, r, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		if got := apGet(t, s, e.write, apID(card)); !reflect.DeepEqual(got, card) {
			t.Fatalf("conflicting requests changed the card: %v, was %v", got, card)
		}
		apSameSet(t, "listed ids", apList(t, s, e.write).ids, []string{apID(card)})
		// The original request still replays.
		r = do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("conflict"), "name": "a"}, idem, token)
		if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("replay after conflicts answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
		}
	})

	t.Run("tokens_are_separate_per_key", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		token := "shared-token-0001"
		bodyA := map[string]any{"address": apAddress("perkey-a")}
		a := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, bodyA, idem, token)
		expect(t, a, http.StatusCreated, "")
		// Another key with the same token and body is a new request: the
		// address is already taken, so it is a duplicate, not a replay.
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write2, bodyA, idem, token), http.StatusConflict, "DUPLICATE_ADDRESS")
		// With another body it is not a conflict either.
		b := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write2, map[string]any{"address": apAddress("perkey-b")}, idem, token)
		expect(t, b, http.StatusCreated, "")
		if apID(apCardOf(t, a)) == apID(apCardOf(t, b)) {
			t.Fatalf("two keys' requests produced one card")
		}
		// The owner's namespace is separate as well.
		o := do(t, "POST", s.URL+"/owner/v1/portfolio/cards", e.acct.OwnerSecret, map[string]any{"address": apAddress("perkey-o")}, idem, token)
		expect(t, o, http.StatusCreated, "")
		// Each key still replays its own result.
		if r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, bodyA, idem, token); !bytes.Equal(r.Body, a.Body) || r.Status != a.Status {
			t.Fatalf("key A replay %d %s, want %d %s", r.Status, r.Body, a.Status, a.Body)
		}
		if r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write2, map[string]any{"address": apAddress("perkey-b")}, idem, token); !bytes.Equal(r.Body, b.Body) || r.Status != b.Status {
			t.Fatalf("key B replay %d %s, want %d %s", r.Status, r.Body, b.Status, b.Body)
		}
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 3 {
			t.Fatalf("portfolio_cards.used %d, want 3", used)
		}
	})

	t.Run("replay_after_grant_none_withholds_the_card", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		token := "hidden-token-0001"
		addr := apAddress("hidden-replay")
		body := map[string]any{"address": addr, "name": "secret name", "note": "secret note"}
		first := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
		expect(t, first, http.StatusCreated, "")
		id := apID(apCardOf(t, first))
		apGrantCard(t, s, e.acct, id, "none")
		r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
		expect(t, r, http.StatusNotFound, "NOT_FOUND")
		for _, leak := range []string{id, addr, "secret name", "secret note"} {
			if bytes.Contains(r.Body, []byte(leak)) {
				t.Errorf("replay of a hidden card reveals %q: %s", leak, r.Body)
			}
		}
		// Nothing new was created by the replay.
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 1 {
			t.Fatalf("portfolio_cards.used %d, want 1", used)
		}
		// A different body with that token is still a conflict.
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("hidden-other")}, idem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		// Once visible again, the replay answers as before.
		apGrantCard(t, s, e.acct, id, "write")
		r = do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
		if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("replay after the grant returned answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
		}
	})

	t.Run("replay_after_the_card_was_deleted", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		token := "deleted-token-001"
		body := map[string]any{"address": apAddress("deleted-replay")}
		first := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
		expect(t, first, http.StatusCreated, "")
		c := apCardOf(t, first)
		expect(t, do(t, "DELETE", s.URL+"/v1/portfolio/cards/"+apID(c), e.write, map[string]any{"expected_version": c["version"]}), http.StatusOK, "")
		r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
		expect(t, r, http.StatusNotFound, "NOT_FOUND")
		if l := apList(t, s, e.write); len(l.ids) != 0 {
			t.Fatalf("a replay re-created the deleted card: %s", l.raw)
		}
	})

	t.Run("delete_replay", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		c1 := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("del-1")})
		c2 := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("del-2")})
		token := "delete-token-0001"
		url1 := s.URL + "/v1/portfolio/cards/" + apID(c1)
		first := do(t, "DELETE", url1, e.write, map[string]any{"expected_version": c1["version"]}, idem, token)
		expect(t, first, http.StatusOK, "")
		if got := first.JSON(t); !reflect.DeepEqual(got, map[string]any{"deleted": true}) {
			t.Fatalf("delete body %s", first.Body)
		}
		for range 3 {
			r := do(t, "DELETE", url1, e.write, map[string]any{"expected_version": c1["version"]}, idem, token)
			if r.Status != first.Status || !bytes.Equal(r.Body, first.Body) {
				t.Fatalf("delete replay answered %d %s, want %d %s", r.Status, r.Body, first.Status, first.Body)
			}
		}
		// Without the token it is a new request for an absent card.
		expect(t, do(t, "DELETE", url1, e.write, map[string]any{"expected_version": c1["version"]}), http.StatusNotFound, "NOT_FOUND")
		// The token cannot be reused on another card.
		expect(t, do(t, "DELETE", s.URL+"/v1/portfolio/cards/"+apID(c2), e.write, map[string]any{"expected_version": c2["version"]}, idem, token), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		l := apList(t, s, e.write)
		apSameSet(t, "listed ids", l.ids, []string{apID(c2)})
		if !reflect.DeepEqual(l.cards[0], c2) {
			t.Fatalf("the other card changed: %v, was %v", l.cards[0], c2)
		}
		if used := apUsage(t, apMe(t, s, e.write), "portfolio_cards"); used != 1 {
			t.Fatalf("portfolio_cards.used %d, want 1", used)
		}
	})

	t.Run("failed_requests_are_not_recorded", func(t *testing.T) {
		t.Parallel()
		e := apSetup(t, s, "base")
		addr := apAddress("failed")
		existing := apCreateCard(t, s, e.write, map[string]any{"address": addr})

		// A rule failure (duplicate) is not recorded: after the conflict is
		// gone, the same token and body run as a new request.
		token := "failed-token-0001"
		body := map[string]any{"address": addr, "name": "second try"}
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token), http.StatusConflict, "DUPLICATE_ADDRESS")
		expect(t, do(t, "DELETE", s.URL+"/v1/portfolio/cards/"+apID(existing), e.write, map[string]any{"expected_version": existing["version"]}), http.StatusOK, "")
		r := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token)
		expect(t, r, http.StatusCreated, "")
		apFields(t, apCardOf(t, r), map[string]any{"name": "second try", "address": addr})
		if again := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, body, idem, token); again.Status != r.Status || !bytes.Equal(again.Body, r.Body) {
			t.Fatalf("replay of the successful retry answered %d %s, want %d %s", again.Status, again.Body, r.Status, r.Body)
		}

		// A shape failure (422) is not recorded: the token is still free for
		// a different body.
		token2 := "failed-token-0002"
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": "garbage"}, idem, token2), http.StatusUnprocessableEntity, "VALIDATION")
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("failed-2")}, idem, token2), http.StatusCreated, "")

		// A refused delete (grant read) is not recorded: once the owner
		// grants write, the same token and body delete the card.
		c := apOwnerCreateCard(t, s, e.acct, apAddress("failed-3"), "")
		apGrantCard(t, s, e.acct, apID(c), "read")
		token3 := "failed-token-0003"
		url := s.URL + "/v1/portfolio/cards/" + apID(c)
		expect(t, do(t, "DELETE", url, e.write, map[string]any{"expected_version": c["version"]}, idem, token3), http.StatusForbidden, "FORBIDDEN")
		apGrantCard(t, s, e.acct, apID(c), "write")
		r = do(t, "DELETE", url, e.write, map[string]any{"expected_version": c["version"]}, idem, token3)
		expect(t, r, http.StatusOK, "")
		expect(t, do(t, "GET", url, e.write, nil), http.StatusNotFound, "NOT_FOUND")

		// A stale delete is not recorded either: it fails again the same way.
		c4 := apCreateCard(t, s, e.write, map[string]any{"address": apAddress("failed-4")})
		token4 := "failed-token-0004"
		url4 := s.URL + "/v1/portfolio/cards/" + apID(c4)
		expect(t, do(t, "DELETE", url4, e.write, map[string]any{"expected_version": "v999999"}, idem, token4), http.StatusConflict, "STALE_VERSION")
		expect(t, do(t, "DELETE", url4, e.write, map[string]any{"expected_version": "v999999"}, idem, token4), http.StatusConflict, "STALE_VERSION")
		expect(t, do(t, "DELETE", url4, e.write, map[string]any{"expected_version": c4["version"]}, idem, token4), http.StatusOK, "")

		// A read-only key's refused write is not recorded against the token.
		token5 := "failed-token-0005"
		expect(t, do(t, "POST", s.URL+"/v1/portfolio/cards", e.read, map[string]any{"address": apAddress("failed-5")}, idem, token5), http.StatusForbidden, "FORBIDDEN")
		var addrs []string
		for _, card := range apList(t, s, e.write).cards {
			addrs = append(addrs, card["address"].(string))
		}
		apSameSet(t, "listed addresses", addrs, []string{addr, apAddress("failed-2")})
	})
}

// TestIdempotencyRecordsAreKeptPerPrincipal is issue 13's reproduction:
// the owner makes 2,002 idempotent writes (more than the 2,000 records the
// account once held in all), then the agent retries a create it made
// before them. The retry must replay the agent's result and create
// nothing: one principal's writes never push out another's records.
func TestIdempotencyRecordsAreKeptPerPrincipal(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)
	e := apSetup(t, s, "base")
	const idem = "Idempotency-Key"
	agentBody := map[string]any{"address": apAddress("evict-agent"), "name": "Agent's card"}
	first := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, agentBody, idem, "agent-token-before-owner")
	expect(t, first, http.StatusCreated, "")

	// The owner creates and deletes cards, each write with a token of its
	// own: 2,002 writes by a few clients at once (the base plan holds 10
	// cards, one of them the agent's).
	const ownerWrites, clients = 2002, 7
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			address := apAddress(fmt.Sprintf("evict-owner-%d", c))
			for i := c * 2; i < ownerWrites; i += clients * 2 {
				r, err := apRaw("POST", s.URL+"/owner/v1/portfolio/cards", e.acct.OwnerSecret, []byte(`{"address":"`+address+`"}`), "application/json", idem, fmt.Sprintf("owner-create-%06d", i))
				if err != nil || r.Status != http.StatusCreated {
					errs <- fmt.Errorf("owner create %d: %v %d %s", i, err, r.Status, r.Body)
					return
				}
				var created struct{ Card map[string]any }
				if err := json.Unmarshal(r.Body, &created); err != nil {
					errs <- err
					return
				}
				body := []byte(`{"expected_version":"` + created.Card["version"].(string) + `"}`)
				r, err = apRaw("DELETE", s.URL+"/owner/v1/portfolio/cards/"+apID(created.Card), e.acct.OwnerSecret, body, "application/json", idem, fmt.Sprintf("owner-delete-%06d", i+1))
				if err != nil || r.Status != http.StatusOK {
					errs <- fmt.Errorf("owner delete %d: %v %d %s", i+1, err, r.Status, r.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	again := do(t, "POST", s.URL+"/v1/portfolio/cards", e.write, agentBody, idem, "agent-token-before-owner")
	if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
		t.Fatalf("the agent's retry after %d owner writes answered %d %s, want the replay %d %s", ownerWrites, again.Status, again.Body, first.Status, first.Body)
	}
	if l := apList(t, s, e.write); len(l.ids) != 1 || l.ids[0] != apID(apCardOf(t, first)) {
		t.Fatalf("after the retry the agent sees %s, want only its first card", l.raw)
	}
	if owner := apOwnerList(t, s, e.acct); bytes.Count(owner, []byte(`"id"`)) != 1 {
		t.Fatalf("after the retry the account holds %s, want one card", owner)
	}
}

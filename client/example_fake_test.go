package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// fakeAgentAPI is a FAKE of addrwatchd for the examples: canned answers,
// in the API's shapes, for just the routes the examples call, so that
// go test runs them without a server. It checks nothing (no key, no
// limits) and remembers nothing; a program passes the real server's root
// URL to client.New instead.
func fakeAgentAPI() *httptest.Server {
	mux := http.NewServeMux()
	answer := func(pattern string, reply func(r *http.Request) (status int, body string)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			status, body := reply(r)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		})
	}

	answer("GET /v1/me", func(*http.Request) (int, string) {
		return 200, `{"account_id":"acct_demo","key_id":"key_demo","capability":"write","plan":"extended",
			"accessible_card_ids":["pc_1"],"accessible_space_ids":["sp_sheet"],
			"portfolio_cards":{"used":1,"limit":100},"bookmark_spaces":{"used":1,"limit":10},"rate_limit":{"remaining":null}}`
	})

	// An Account card, pc_1, which the owner renames after the agent's
	// read: its version is v2 now, and a PATCH naming v1 is stale.
	card := func(version, name, note string) string {
		return fmt.Sprintf(`{"card":{"id":"pc_1","version":%q,"effective_access":"write","address":"bc1qexampleaddress","name":%q,"note":%q,"color_key":"amber"}}`, version, name, note)
	}
	answer("POST /v1/portfolio/cards", func(r *http.Request) (int, string) {
		var in struct{ Name string }
		json.NewDecoder(r.Body).Decode(&in)
		return 201, card("v1", in.Name, "")
	})
	answer("GET /v1/portfolio/cards/pc_1", func(*http.Request) (int, string) { return 200, card("v2", "Savings (owner's name)", "") })
	answer("PATCH /v1/portfolio/cards/pc_1", func(r *http.Request) (int, string) {
		var in struct {
			ExpectedVersion string `json:"expected_version"`
			Note            string `json:"note"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		if in.ExpectedVersion != "v2" {
			return 409, `{"code":"STALE_VERSION","error":"The card changed since it was read."}`
		}
		return 200, card("v3", "Savings (owner's name)", in.Note)
	})

	// pc_1's History: three transactions, in pages of two.
	tx := func(id string, amount int) string {
		return fmt.Sprintf(`{"txid":%q,"amount_sat":%d,"fee_sat":141,"confirmed":true,"block_height":840000,"time":"2026-01-02T03:04:05Z","note":null}`, strings.Repeat(id, 64), amount)
	}
	answer("GET /v1/history/cards/pc_1/transactions", func(r *http.Request) (int, string) {
		page := `"transactions":[` + tx("a", 50000) + `,` + tx("b", -12000) + `],"offset":0,"next_offset":2,"has_more":true`
		if r.URL.Query().Get("offset") == "2" {
			page = `"transactions":[` + tx("c", 7000) + `],"offset":2,"next_offset":null,"has_more":false`
		}
		return 200, `{"card_id":"pc_1","address":"bc1qexampleaddress",` + page + `,"limit":2,"total_count":3,"complete":true,"history_degraded":false,
			"history_export":{"plan":"extended","complete":true,"window_enforced":false,"older_preview":false,"offset_ceiling_reached":false,"from":null,"to":null}}`
	})

	// A Sheet, sp_sheet, at revision 12: rows 0, 3 and 7 are bitcoin rows,
	// and a filtered read pages them two, then one.
	row := func(index int, address, notes string) string {
		return fmt.Sprintf(`{"index":%d,"cells":[%q,"bitcoin","","",%q]}`, index, address, notes)
	}
	answer("GET /v1/bookmark-spaces/sp_sheet/sheet", func(r *http.Request) (int, string) {
		page := `"rows":[` + row(0, "bc1qfirst", "exchange") + `,` + row(3, "bc1qsecond", "spent") + `],"next_offset":7`
		if r.URL.Query().Get("offset") == "7" {
			page = `"rows":[` + row(7, "bc1qthird", "cold") + `],"next_offset":null`
		}
		return 200, `{"space_id":"sp_sheet","headers":["Address","Blockchain","Transaction ID","Date","Notes"],"revision":12,"row_count":1000,"column_count":5,` + page + `}`
	})

	// The change feed: two events, one a page, then nothing new.
	answer("GET /v1/events", func(r *http.Request) (int, string) {
		switch r.URL.Query().Get("since") {
		case "":
			return 200, `{"events":[{"id":"ev_1","at":"2026-01-02T03:04:05Z","kind":"portfolio_changed"}],"next_since":"cursor-1","has_more":true}`
		case "cursor-1":
			return 200, `{"events":[{"id":"ev_2","at":"2026-01-02T03:05:00Z","kind":"scope_changed"}],"next_since":"cursor-2","has_more":false}`
		default:
			return 200, `{"events":[],"next_since":"cursor-2","has_more":false}`
		}
	})
	return httptest.NewServer(mux)
}

package system_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/addrwatch/addrwatch/internal/testaddr"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// TestContractAgentAPI drives every operation of httpd/openapi/agent.json
// against a real server, at least once successfully and at least once into
// an error, and checks each request and each response against the document
// with kin-openapi's openapi3filter: a request the test means to be valid
// must pass ValidateRequest, one it means to break the document must fail
// it (and the server must refuse it too), and every response must match
// the document, its status included. The owner API calls of the setup are
// checked against owner.json the same way.
func TestContractAgentAPI(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--limits", "account") // the Sheet-write budget, no edge limits
	agent := ctLoad(t, s, "agent.json", "/v1")
	owner := ctLoad(t, s, "owner.json", "/owner/v1")

	// The account, its keys and a writable first Space, through the
	// owner API.
	acct := s.createAccount(t, "extended")
	ow := acct.OwnerSecret
	write := owner.do(t, ctReq{method: "POST", path: "/keys", bearer: ow, body: map[string]any{"capability": "write", "name": "contract write"}, status: 201}).obj(t)["key"].(string)
	read := owner.do(t, ctReq{method: "POST", path: "/keys", bearer: ow, body: map[string]any{"capability": "read", "name": "contract read"}, status: 201}).obj(t)["key"].(string)
	owner.do(t, ctReq{method: "POST", path: "/keys", bearer: ow, body: map[string]any{"capability": "none"}, status: 422, code: "VALIDATION", invalid: true})
	spaces := owner.do(t, ctReq{method: "GET", path: "/bookmark-spaces", bearer: ow, status: 200}).obj(t)["spaces"].([]any)
	btc := ctStr(spaces[0], "id")
	owner.do(t, ctReq{method: "PUT", path: "/grants/bookmark-spaces/" + btc, bearer: ow, body: map[string]any{"level": "write"}, status: 200})
	owner.do(t, ctReq{method: "GET", path: "/openapi.json", status: 200})
	const badKey = "awk.nobody.nokey.notasecret"

	t.Run("public", func(t *testing.T) {
		r := agent.do(t, ctReq{method: "GET", path: "/openapi.json", status: 200})
		var served map[string]any
		if err := json.Unmarshal(r.Body, &served); err != nil || served["openapi"] != "3.1.0" {
			t.Fatalf("/v1/openapi.json is not the document: %v %.100s", err, r.Body)
		}
		agent.do(t, ctReq{method: "GET", path: "/openapi.json", bearer: write, status: 200}) // a key sent anyway is ignored
		agent.do(t, ctReq{method: "GET", path: "/docs", status: 200})
		agent.do(t, ctReq{method: "GET", path: "/docs/sheets", status: 200})
	})

	t.Run("me", func(t *testing.T) {
		me := agent.do(t, ctReq{method: "GET", path: "/me", bearer: write, status: 200}).obj(t)
		if me["capability"] != "write" {
			t.Fatalf("/me %v", me)
		}
		agent.do(t, ctReq{method: "GET", path: "/me", bearer: badKey, status: 401, code: "UNAUTHORIZED"})
		agent.do(t, ctReq{method: "GET", path: "/me", status: 401, code: "UNAUTHORIZED", invalid: true})
		agent.do(t, ctReq{method: "GET", path: "/me", bearer: ow, status: 401, code: "UNAUTHORIZED"})
	})

	// hub has a long simulated History (chain/sim_chain.go), for the
	// History and note routes.
	const hub = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	var hubCard map[string]any
	t.Run("portfolio", func(t *testing.T) {
		create := map[string]any{"address": hub, "name": "Hub", "color_key": "teal"}
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards/validate", bearer: write, body: create, status: 200})
		r := agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: create, headers: []string{"Idempotency-Key", "ct-portfolio-create-1"}, status: 201})
		hubCard = r.obj(t)["card"].(map[string]any)
		replay := agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: create, headers: []string{"Idempotency-Key", "ct-portfolio-create-1"}, status: 201})
		if ctStr(replay.obj(t)["card"], "id") != ctStr(hubCard, "id") {
			t.Fatalf("the replay created another card: %s", replay.Body)
		}
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"address": ctAddress("other")}, headers: []string{"Idempotency-Key", "ct-portfolio-create-1"}, status: 409, code: "IDEMPOTENCY_CONFLICT"})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"address": hub}, status: 409, code: "DUPLICATE_ADDRESS"})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: read, body: map[string]any{"address": ctAddress("read")}, status: 403, code: "FORBIDDEN"})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"name": "no address"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"address": ctAddress("x"), "colour": "teal"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"address": ctAddress("x")}, headers: []string{"Idempotency-Key", "short"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards/validate", bearer: write, body: map[string]any{"address": hub}, status: 409, code: "DUPLICATE_ADDRESS"})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards/validate", bearer: write, body: map[string]any{"address": ctAddress("v"), "color_key": "purple"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/portfolio/cards/validate", bearer: read, body: map[string]any{"address": ctAddress("v")}, status: 403, code: "FORBIDDEN"})

		agent.do(t, ctReq{method: "GET", path: "/portfolio/cards", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/portfolio/cards", bearer: badKey, status: 401, code: "UNAUTHORIZED"})
		id := ctStr(hubCard, "id")
		agent.do(t, ctReq{method: "GET", path: "/portfolio/cards/" + id, bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/portfolio/cards/nope", bearer: read, status: 404, code: "NOT_FOUND"})

		r = agent.do(t, ctReq{method: "PATCH", path: "/portfolio/cards/" + id, bearer: write, body: map[string]any{"expected_version": ctStr(hubCard, "version"), "note": "cold\nstorage"}, status: 200})
		agent.do(t, ctReq{method: "PATCH", path: "/portfolio/cards/" + id, bearer: write, body: map[string]any{"expected_version": ctStr(hubCard, "version"), "note": "again"}, status: 409, code: "STALE_VERSION"})
		hubCard = r.obj(t)["card"].(map[string]any)
		agent.do(t, ctReq{method: "PATCH", path: "/portfolio/cards/" + id, bearer: write, body: map[string]any{"name": "no version"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "PATCH", path: "/portfolio/cards/" + id, bearer: read, body: map[string]any{"expected_version": ctStr(hubCard, "version"), "note": "read key"}, status: 403, code: "FORBIDDEN"})
		agent.do(t, ctReq{method: "PATCH", path: "/portfolio/cards/" + id, bearer: write, body: map[string]any{"expected_version": ctStr(hubCard, "version")}, status: 422, code: "VALIDATION", invalid: true})

		doomed := agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"address": ctAddress("doomed")}, status: 201}).obj(t)["card"].(map[string]any)
		del := map[string]any{"expected_version": ctStr(doomed, "version")}
		agent.do(t, ctReq{method: "DELETE", path: "/portfolio/cards/" + ctStr(doomed, "id"), bearer: write, body: map[string]any{"expected_version": "stale"}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "DELETE", path: "/portfolio/cards/" + ctStr(doomed, "id"), bearer: write, body: del, headers: []string{"Idempotency-Key", "ct-portfolio-delete-1"}, status: 200})
		agent.do(t, ctReq{method: "DELETE", path: "/portfolio/cards/" + ctStr(doomed, "id"), bearer: write, body: del, status: 404, code: "NOT_FOUND"})
		agent.do(t, ctReq{method: "DELETE", path: "/portfolio/cards/" + id, bearer: write, status: 422, code: "VALIDATION", invalid: true})
	})

	var alt, sheet string
	t.Run("spaces", func(t *testing.T) {
		list := agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces", bearer: write, status: 200}).obj(t)
		agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces", bearer: badKey, status: 401, code: "UNAUTHORIZED"})
		rev := ctStr(list, "bookmark_revision")
		create := func(name, typ, token string) map[string]any {
			h := []string{"Idempotency-Key", token}
			m := agent.do(t, ctReq{method: "POST", path: "/bookmark-spaces", bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "name": name, "type": typ}, headers: h, status: 201}).obj(t)
			rev = ctStr(m, "bookmark_revision")
			return m["space"].(map[string]any)
		}
		alt = ctStr(create("Altcoins", "altcoin", "ct-space-create-alt"), "id")
		sheet = ctStr(create("Ledger", "sheet", "ct-space-create-sheet"), "id")
		trash := create("Trash", "bitcoin", "ct-space-create-trash")
		agent.do(t, ctReq{method: "POST", path: "/bookmark-spaces", bearer: write, body: map[string]any{"expected_bookmark_revision": "stale", "name": "Late", "type": "bitcoin"}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "POST", path: "/bookmark-spaces", bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "name": "Gold", "type": "gold"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/bookmark-spaces", bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "name": strings.Repeat("n", 41), "type": "bitcoin"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/bookmark-spaces", bearer: read, body: map[string]any{"expected_bookmark_revision": rev, "name": "Read", "type": "bitcoin"}, status: 403, code: "FORBIDDEN"})

		agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces/" + alt, bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces/nope", bearer: read, status: 404, code: "NOT_FOUND"})

		id := ctStr(trash, "id")
		m := agent.do(t, ctReq{method: "PATCH", path: "/bookmark-spaces/" + id, bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "name": "Trash can"}, status: 200}).obj(t)
		agent.do(t, ctReq{method: "PATCH", path: "/bookmark-spaces/" + id, bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "name": "Stale"}, status: 409, code: "STALE_VERSION"})
		rev = ctStr(m, "bookmark_revision")
		agent.do(t, ctReq{method: "PATCH", path: "/bookmark-spaces/" + id, bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "type": "altcoin"}, status: 422, code: "VALIDATION", invalid: true})

		version := ctStr(m["space"], "version")
		agent.do(t, ctReq{method: "DELETE", path: "/bookmark-spaces/" + id, bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "expected_version": version, "confirm_delete_cards": false}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "DELETE", path: "/bookmark-spaces/" + id, bearer: write, body: map[string]any{"expected_bookmark_revision": "stale", "expected_version": version, "confirm_delete_cards": true}, status: 409, code: "STALE_VERSION"})
		d := agent.do(t, ctReq{method: "DELETE", path: "/bookmark-spaces/" + id, bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "expected_version": version, "confirm_delete_cards": true}, headers: []string{"Idempotency-Key", "ct-space-delete-trash"}, status: 200}).obj(t)
		if d["deleted_card_count"] != float64(0) {
			t.Fatalf("Space delete: %v", d)
		}
		agent.do(t, ctReq{method: "DELETE", path: "/bookmark-spaces/nope", bearer: write, body: map[string]any{"expected_bookmark_revision": rev, "expected_version": version, "confirm_delete_cards": true}, status: 404, code: "NOT_FOUND"})
	})

	var bookmark map[string]any
	t.Run("bookmark_cards", func(t *testing.T) {
		cards := "/bookmark-spaces/" + btc + "/cards"
		spaceVersion := func() string {
			return ctStr(agent.do(t, ctReq{method: "GET", path: cards, bearer: write, status: 200}).obj(t)["space"], "version")
		}
		agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces/nope/cards", bearer: write, status: 404, code: "NOT_FOUND"})
		create := map[string]any{"expected_space_version": spaceVersion(), "address": ctAddress("bookmark"), "name": "Saved", "color_key": "rose"}
		agent.do(t, ctReq{method: "POST", path: cards + "/validate", bearer: write, body: create, status: 200})
		agent.do(t, ctReq{method: "POST", path: cards + "/validate", bearer: write, body: map[string]any{"expected_space_version": "stale", "address": ctAddress("bookmark")}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "POST", path: cards + "/validate", bearer: write, body: map[string]any{"expected_space_version": "v", "address": ctAddress("b"), "coin_id": "gold"}, status: 422, code: "VALIDATION", invalid: true})
		r := agent.do(t, ctReq{method: "POST", path: cards, bearer: write, body: create, headers: []string{"Idempotency-Key", "ct-bookmark-create-1"}, status: 201}).obj(t)
		bookmark = r["card"].(map[string]any)
		agent.do(t, ctReq{method: "POST", path: cards, bearer: write, body: map[string]any{"expected_space_version": ctStr(r["space"], "version"), "address": ctAddress("bookmark")}, status: 409, code: "DUPLICATE_ADDRESS"})
		agent.do(t, ctReq{method: "POST", path: cards, bearer: write, body: map[string]any{"expected_space_version": "stale", "address": ctAddress("bookmark-2")}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "POST", path: cards, bearer: write, body: map[string]any{"expected_space_version": ctStr(r["space"], "version")}, status: 422, code: "VALIDATION", invalid: true})
		// An altcoin card carries its coin.
		altCards := "/bookmark-spaces/" + alt + "/cards"
		altVersion := ctStr(agent.do(t, ctReq{method: "GET", path: altCards, bearer: read, status: 200}).obj(t)["space"], "version")
		c := agent.do(t, ctReq{method: "POST", path: altCards, bearer: write, body: map[string]any{"expected_space_version": altVersion, "address": "my-wallet-001", "coin_id": "unknown"}, status: 201}).obj(t)
		if ctStr(c["card"], "coin_id") != "unknown" {
			t.Fatalf("altcoin card: %v", c)
		}

		id := ctStr(bookmark, "id")
		agent.do(t, ctReq{method: "GET", path: cards + "/" + id, bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: cards + "/nope", bearer: read, status: 404, code: "NOT_FOUND"})
		p := agent.do(t, ctReq{method: "PATCH", path: cards + "/" + id, bearer: write, body: map[string]any{"expected_version": ctStr(bookmark, "version"), "note": "checked"}, status: 200}).obj(t)
		agent.do(t, ctReq{method: "PATCH", path: cards + "/" + id, bearer: write, body: map[string]any{"expected_version": ctStr(bookmark, "version"), "note": "again"}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "PATCH", path: cards + "/" + id, bearer: write, body: map[string]any{"expected_version": "v", "color_key": "purple"}, status: 422, code: "VALIDATION", invalid: true})
		bookmark = p["card"].(map[string]any)

		doomed := agent.do(t, ctReq{method: "POST", path: cards, bearer: write, body: map[string]any{"expected_space_version": ctStr(p["space"], "version"), "address": ctAddress("bookmark-doomed")}, status: 201}).obj(t)["card"].(map[string]any)
		did := ctStr(doomed, "id")
		agent.do(t, ctReq{method: "DELETE", path: cards + "/" + did, bearer: read, body: map[string]any{"expected_version": ctStr(doomed, "version")}, status: 403, code: "FORBIDDEN"})
		agent.do(t, ctReq{method: "DELETE", path: cards + "/" + did, bearer: write, body: map[string]any{"expected_version": "stale"}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "DELETE", path: cards + "/" + did, bearer: write, body: map[string]any{"expected_version": ctStr(doomed, "version")}, headers: []string{"Idempotency-Key", "ct-bookmark-delete-1"}, status: 200})
		agent.do(t, ctReq{method: "DELETE", path: cards + "/" + did, bearer: write, body: map[string]any{"expected_version": ctStr(doomed, "version")}, status: 404, code: "NOT_FOUND"})
	})

	t.Run("moves", func(t *testing.T) {
		card := agent.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: write, body: map[string]any{"address": ctAddress("mover")}, status: 201}).obj(t)["card"].(map[string]any)
		version := ctStr(agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces/" + btc, bearer: write, status: 200}).obj(t)["space"], "version")
		in := map[string]any{"source_kind": "portfolio", "source_id": ctStr(card, "id"), "destination_kind": "bookmark", "destination_space_id": btc,
			"expected_source_version": ctStr(card, "version"), "expected_destination_version": version}
		agent.do(t, ctReq{method: "POST", path: "/cards/move/validate", bearer: write, body: in, status: 200})
		agent.do(t, ctReq{method: "POST", path: "/cards/move/validate", bearer: write, body: ctWith(in, "expected_destination_version", "stale"), status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "POST", path: "/cards/move/validate", bearer: write, body: ctWith(in, "destination_kind", "portfolio"), status: 422, code: "VALIDATION", invalid: true})
		sheetVersion := ctStr(agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces/" + sheet, bearer: write, status: 200}).obj(t)["space"], "version")
		agent.do(t, ctReq{method: "POST", path: "/cards/move", bearer: write, body: ctWith(ctWith(in, "destination_space_id", sheet), "expected_destination_version", sheetVersion), status: 409, code: "CROSS_TYPE_MOVE"})
		agent.do(t, ctReq{method: "POST", path: "/cards/move", bearer: write, body: ctWith(in, "expected_destination_version", nil), status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/cards/move", bearer: read, body: in, status: 403, code: "FORBIDDEN"})
		m := agent.do(t, ctReq{method: "POST", path: "/cards/move", bearer: write, body: in, headers: []string{"Idempotency-Key", "ct-move-into-space"}, status: 200}).obj(t)
		moved := m["card"].(map[string]any)
		if ctStr(m["location"], "kind") != "bookmark" || ctStr(moved, "id") != ctStr(m, "new_id") {
			t.Fatalf("move into a Space: %v", m)
		}
		back := map[string]any{"source_kind": "bookmark", "source_id": ctStr(moved, "id"), "source_space_id": btc, "destination_kind": "portfolio", "expected_source_version": ctStr(moved, "version")}
		m = agent.do(t, ctReq{method: "POST", path: "/cards/move", bearer: write, body: back, status: 200}).obj(t)
		if ctStr(m["location"], "kind") != "portfolio" || m["card"] == nil {
			t.Fatalf("move into Portfolio: %v", m)
		}
	})

	t.Run("sheet", func(t *testing.T) {
		path := "/bookmark-spaces/" + sheet + "/sheet"
		v := agent.do(t, ctReq{method: "GET", path: path, bearer: read, status: 200}).obj(t)
		rev := v["revision"]
		agent.do(t, ctReq{method: "GET", path: path + "?offset=990&limit=5", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: path + "?filter=x", bearer: read, status: 400, code: "BAD_REQUEST"})
		agent.do(t, ctReq{method: "GET", path: path + "?limit=0", bearer: read, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: path + "?view=dense", bearer: read, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: "/bookmark-spaces/" + btc + "/sheet", bearer: read, status: 404, code: "NOT_FOUND"})

		row := []string{"bc1qsame", "bitcoin", "", "", ""}
		headers := []string{"Address", "Blockchain", "Transaction ID", "Date", "Memo"}
		p := agent.do(t, ctReq{method: "PATCH", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "headers": headers,
			"rows": []any{map[string]any{"index": 0, "cells": row}, map[string]any{"index": 3, "cells": row}}}, status: 200}).obj(t)
		agent.do(t, ctReq{method: "PATCH", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "headers": headers}, status: 409, code: "STALE_VERSION"})
		rev = p["revision"]
		agent.do(t, ctReq{method: "PATCH", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "rows": []any{map[string]any{"index": 1, "cells": row[:4]}}}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "PATCH", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "headers": []string{"Addr", "Blockchain", "Transaction ID", "Date", "Memo"}}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "PATCH", path: path, bearer: write, body: map[string]any{"expected_revision": rev}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: path + "?view=sparse", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: path + "?address=bc1qsame&chain=bitcoin", bearer: read, status: 200})

		agent.do(t, ctReq{method: "PUT", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "cells": []string{"bc1qsame", "bitcoin", "tx", "2026-01-01", "dup"}}, status: 409, code: "CONFLICT"})
		u := agent.do(t, ctReq{method: "PUT", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "cells": []string{"bc1qother", "bitcoin", "tx", "2026-01-01", "new"}}, status: 200}).obj(t)
		if u["created"] != true {
			t.Fatalf("PUT: %v", u)
		}
		agent.do(t, ctReq{method: "PUT", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "cells": []string{"bc1qother", "bitcoin", "tx", "2026-01-01", "stale"}}, status: 409, code: "STALE_VERSION"})
		rev = u["revision"]
		agent.do(t, ctReq{method: "PUT", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "cells": []string{"", "bitcoin", "", "", ""}}, status: 422, code: "VALIDATION", invalid: true})

		d := agent.do(t, ctReq{method: "DELETE", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "index": 2}, status: 200}).obj(t)
		agent.do(t, ctReq{method: "DELETE", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "index": 2}, status: 409, code: "STALE_VERSION"})
		rev = d["revision"]
		agent.do(t, ctReq{method: "DELETE", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "index": 999}, status: 404, code: "NOT_FOUND"})
		agent.do(t, ctReq{method: "DELETE", path: path, bearer: write, body: map[string]any{"expected_revision": rev, "index": 1000}, status: 422, code: "VALIDATION", invalid: true})

		c := agent.do(t, ctReq{method: "POST", path: path, bearer: write, body: map[string]any{"expected_revision": rev}, status: 200}).obj(t)
		agent.do(t, ctReq{method: "POST", path: path, bearer: write, body: map[string]any{"expected_revision": -1}, status: 409, code: "STALE_VERSION"})
		agent.do(t, ctReq{method: "POST", path: path, bearer: read, body: map[string]any{"expected_revision": c["revision"]}, status: 403, code: "FORBIDDEN"})
	})

	t.Run("history", func(t *testing.T) {
		id := ctStr(hubCard, "id")
		agent.do(t, ctReq{method: "GET", path: "/history", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/history?force_refresh=true", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/history?force_refresh=maybe", bearer: read, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: "/history?since=yesterday", bearer: read, status: 422, code: "VALIDATION"})
		agent.do(t, ctReq{method: "GET", path: "/history/cards", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/history/cards?all=1", bearer: read, status: 422, code: "VALIDATION"})
		txs := agent.do(t, ctReq{method: "GET", path: "/history/cards/" + id + "/transactions?limit=5", bearer: read, status: 200}).obj(t)
		agent.do(t, ctReq{method: "GET", path: "/history/cards/" + id + "/transactions?limit=5&offset=5", bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/history/cards/" + id + "/transactions?limit=101", bearer: read, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: "/history/cards/nope/transactions", bearer: read, status: 404, code: "NOT_FOUND"})
		list, _ := txs["transactions"].([]any)
		if len(list) == 0 {
			t.Fatalf("the hub card has no transactions: %v", txs)
		}
		txid := ctStr(list[0], "txid")

		notes := "/history/notes/" + txid
		agent.do(t, ctReq{method: "PUT", path: notes, bearer: read, body: map[string]any{"note": "rent"}, status: 403, code: "FORBIDDEN"})
		agent.do(t, ctReq{method: "PUT", path: notes, bearer: write, body: map[string]any{"note": strings.Repeat("n", 51)}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "PUT", path: "/history/notes/not-a-txid", bearer: write, body: map[string]any{"note": "rent"}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "PUT", path: "/history/notes/" + strings.Repeat("ab", 32), bearer: write, body: map[string]any{"note": "rent"}, status: 404, code: "NOT_FOUND"})
		n := agent.do(t, ctReq{method: "PUT", path: notes, bearer: write, body: map[string]any{"note": "rent"}, status: 200}).obj(t)
		if n["note"] != "rent" {
			t.Fatalf("PUT note: %v", n)
		}
		b := agent.do(t, ctReq{method: "POST", path: "/history/notes/batch", bearer: read, body: map[string]any{"txids": []string{txid, strings.Repeat("ab", 32)}}, status: 200}).obj(t)
		if got, _ := b["notes"].([]any); len(got) != 1 {
			t.Fatalf("batch read: %v", b)
		}
		agent.do(t, ctReq{method: "POST", path: "/history/notes/batch", bearer: read, body: map[string]any{"txids": []string{"zz"}}, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "POST", path: "/history/notes/batch", bearer: badKey, body: map[string]any{"txids": []string{}}, status: 401, code: "UNAUTHORIZED"})
		agent.do(t, ctReq{method: "GET", path: "/history", bearer: read, status: 200}) // now with a note

		agent.do(t, ctReq{method: "DELETE", path: notes, bearer: read, status: 403, code: "FORBIDDEN"})
		agent.do(t, ctReq{method: "DELETE", path: notes, bearer: write, headers: []string{"Idempotency-Key", "ct-note-delete-1"}, status: 200})
		agent.do(t, ctReq{method: "DELETE", path: notes, bearer: write, headers: []string{"Idempotency-Key", "ct-note-delete-1"}, status: 200}) // a replay
		agent.do(t, ctReq{method: "DELETE", path: notes, bearer: write, status: 404, code: "NOT_FOUND"})
		agent.do(t, ctReq{method: "DELETE", path: "/history/notes/xyz", bearer: write, status: 422, code: "VALIDATION", invalid: true})
	})

	t.Run("events", func(t *testing.T) {
		page := agent.do(t, ctReq{method: "GET", path: "/events?limit=2", bearer: read, status: 200}).obj(t)
		if page["has_more"] != true {
			t.Fatalf("events: %v", page)
		}
		agent.do(t, ctReq{method: "GET", path: "/events?since=" + ctStr(page, "next_since"), bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/events?since=2026-01-01T00:00:00Z", bearer: write, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/events?limit=0", bearer: read, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: "/events?since=yesterday", bearer: read, status: 422, code: "VALIDATION"})
		owner.do(t, ctReq{method: "GET", path: "/events", bearer: ow, status: 200})
	})

	t.Run("chain_activity", func(t *testing.T) {
		page := agent.do(t, ctReq{method: "GET", path: "/history/activity?limit=2", bearer: read, status: 200}).obj(t)
		agent.do(t, ctReq{method: "GET", path: "/history/activity?since=" + ctStr(page, "next_since"), bearer: read, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/history/activity?since=2026-01-01T00:00:00Z", bearer: write, status: 200})
		agent.do(t, ctReq{method: "GET", path: "/history/activity?limit=101", bearer: read, status: 422, code: "VALIDATION", invalid: true})
		agent.do(t, ctReq{method: "GET", path: "/history/activity?since=ev1.1", bearer: read, status: 422, code: "VALIDATION"})
		owner.do(t, ctReq{method: "GET", path: "/history/activity", bearer: ow, status: 200})
	})

	t.Run("sheet_budget", func(t *testing.T) {
		// The per-account Sheet-write budget: 30 changed writes a minute,
		// then 429 with Retry-After.
		path := "/bookmark-spaces/" + sheet + "/sheet"
		rev := agent.do(t, ctReq{method: "GET", path: path + "?limit=1", bearer: read, status: 200}).obj(t)["revision"]
		for i := range 40 {
			body := map[string]any{"expected_revision": rev, "cells": []string{"bc1qbudget", "bitcoin", "", "", fmt.Sprint(i)}}
			r := agent.do(t, ctReq{method: "PUT", path: path, bearer: write, body: body, status: 0})
			if r.Status == http.StatusTooManyRequests {
				if r.Header.Get("Retry-After") == "" {
					t.Fatalf("429 without Retry-After: %s", r.Body)
				}
				return
			}
			if r.Status != http.StatusOK {
				t.Fatalf("PUT %d: %d %s", i, r.Status, r.Body)
			}
			rev = r.obj(t)["revision"]
		}
		t.Fatal("40 Sheet writes in a row were never limited")
	})

	t.Run("edge_limits", func(t *testing.T) {
		// The edge limits of a server with the spec's limits: the 21st
		// regular request from one client is a 429 with Retry-After.
		e := startServer(t, "--limits", "spec", "--trusted-proxies", "127.0.0.0/8")
		edge := ctLoad(t, e, "agent.json", "/v1")
		key := e.createKey(t, e.createAccount(t, "base"), "read")
		from := []string{"X-Forwarded-For", "198.51.100.77"}
		for i := range 40 {
			r := edge.do(t, ctReq{method: "GET", path: "/me", bearer: key, headers: from, status: 0})
			if r.Status == http.StatusTooManyRequests {
				if r.obj(t)["code"] != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" {
					t.Fatalf("429: %v %s", r.Header, r.Body)
				}
				edge.merge(agent)
				return
			}
			if r.Status != http.StatusOK {
				t.Fatalf("GET /me %d: %d %s", i, r.Status, r.Body)
			}
		}
		t.Fatal("40 requests from one client were never limited")
	})

	t.Run("owner", func(t *testing.T) {
		// The owner-only routes and the owner's views of the shared
		// resources, on an account of their own (it ends deleted).
		a := s.createAccount(t, "extended")
		owner.do(t, ctReq{method: "POST", path: "/sessions", body: map[string]any{"account_id": a.ID, "password": "wrong password"}, status: 401, code: "UNAUTHORIZED"})
		owner.do(t, ctReq{method: "POST", path: "/sessions", body: map[string]any{"account_id": a.ID}, status: 422, code: "VALIDATION", invalid: true})
		session := ctStr(owner.do(t, ctReq{method: "POST", path: "/sessions", body: map[string]any{"account_id": a.ID, "password": a.Password}, status: 201}).obj(t), "session")
		owner.do(t, ctReq{method: "GET", path: "/keys", bearer: session, status: 200})
		owner.do(t, ctReq{method: "GET", path: "/keys", bearer: badKey, status: 401, code: "UNAUTHORIZED"})
		k := owner.do(t, ctReq{method: "POST", path: "/keys", bearer: session, body: map[string]any{"capability": "read"}, status: 201}).obj(t)
		owner.do(t, ctReq{method: "DELETE", path: "/keys/" + ctStr(k, "key_id"), bearer: session, status: 204})
		owner.do(t, ctReq{method: "DELETE", path: "/keys/" + ctStr(k, "key_id"), bearer: session, status: 404, code: "NOT_FOUND"})

		card := owner.do(t, ctReq{method: "POST", path: "/portfolio/cards", bearer: a.OwnerSecret, body: map[string]any{"address": ctAddress("owner")}, status: 201}).obj(t)["card"].(map[string]any)
		if card["grant"] != "none" {
			t.Fatalf("an owner's new card: %v", card)
		}
		owner.do(t, ctReq{method: "GET", path: "/portfolio/cards", bearer: a.OwnerSecret, status: 200})
		owner.do(t, ctReq{method: "PUT", path: "/grants/portfolio/" + ctStr(card, "id"), bearer: a.OwnerSecret, body: map[string]any{"level": "read"}, status: 200})
		owner.do(t, ctReq{method: "PUT", path: "/grants/portfolio/" + ctStr(card, "id"), bearer: a.OwnerSecret, body: map[string]any{"level": "all"}, status: 422, code: "VALIDATION", invalid: true})
		owner.do(t, ctReq{method: "PUT", path: "/grants/portfolio/nope", bearer: a.OwnerSecret, body: map[string]any{"level": "read"}, status: 404, code: "NOT_FOUND"})
		list := owner.do(t, ctReq{method: "GET", path: "/bookmark-spaces", bearer: a.OwnerSecret, status: 200}).obj(t)
		space := list["spaces"].([]any)[0].(map[string]any)
		owner.do(t, ctReq{method: "GET", path: "/bookmark-spaces/" + ctStr(space, "id") + "/cards", bearer: a.OwnerSecret, status: 200})
		m := owner.do(t, ctReq{method: "PATCH", path: "/bookmark-spaces/" + ctStr(space, "id"), bearer: a.OwnerSecret,
			body: map[string]any{"expected_bookmark_revision": ctStr(list, "bookmark_revision"), "type": "altcoin"}, status: 200}).obj(t)
		if ctStr(m["space"], "type") != "altcoin" || ctStr(m["space"], "grant") != "none" {
			t.Fatalf("owner type change: %v", m)
		}
		owner.do(t, ctReq{method: "PATCH", path: "/bookmark-spaces/" + ctStr(space, "id"), bearer: a.OwnerSecret,
			body: map[string]any{"expected_bookmark_revision": ctStr(m, "bookmark_revision")}, status: 422, code: "VALIDATION", invalid: true})
		owner.do(t, ctReq{method: "GET", path: "/history/cards", bearer: a.OwnerSecret, status: 200})

		// Wallet labels: a file in, a report out, and the file back.
		labels := `{"type":"addr","ref":"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq","label":"From a wallet"}` + "\n" + `{"type":"xpub","ref":"x","label":"y"}` + "\n"
		report := owner.do(t, ctReq{method: "POST", path: "/labels.jsonl", bearer: a.OwnerSecret, raw: labels, contentType: "application/jsonl", status: 200}).obj(t)
		if report["imported"] != float64(1) || report["skipped"] != float64(1) {
			t.Fatalf("label import report: %v", report)
		}
		exported := owner.do(t, ctReq{method: "GET", path: "/labels.jsonl", bearer: a.OwnerSecret, status: 200})
		if !strings.Contains(string(exported.Body), `"label":"From a wallet"`) {
			t.Fatalf("label export: %s", exported.Body)
		}
		owner.do(t, ctReq{method: "GET", path: "/labels.jsonl", bearer: badKey, status: 401, code: "UNAUTHORIZED"})
		owner.do(t, ctReq{method: "POST", path: "/labels.jsonl", bearer: a.OwnerSecret, raw: strings.Repeat(`{"type":"tx","ref":"r"}`+"\n", 10_001), contentType: "application/jsonl", status: 422, code: "VALIDATION"})

		// Agent activity: the lines of a key's requests, once recorded
		// (about a second after them).
		activityKey := s.createKey(t, a, "read")
		do(t, "GET", s.URL+"/v1/me", activityKey, nil)
		var lines []any
		for start := time.Now(); len(lines) == 0 && time.Since(start) < 10*time.Second; time.Sleep(200 * time.Millisecond) {
			lines = owner.do(t, ctReq{method: "GET", path: "/activity?limit=5", bearer: a.OwnerSecret, status: 200}).obj(t)["entries"].([]any)
		}
		if len(lines) == 0 || ctStr(lines[0], "op") != "GET /v1/me" {
			t.Fatalf("activity lines: %v", lines)
		}
		owner.do(t, ctReq{method: "GET", path: "/activity?colour=red", bearer: a.OwnerSecret, status: 422, code: "VALIDATION"})

		owner.do(t, ctReq{method: "PUT", path: "/plan", bearer: session, body: map[string]any{"plan": "base"}, status: 200})
		owner.do(t, ctReq{method: "PUT", path: "/plan", bearer: session, body: map[string]any{"plan": "gold"}, status: 422, code: "VALIDATION", invalid: true})
		owner.do(t, ctReq{method: "POST", path: "/password", bearer: session, body: map[string]any{"current_password": "wrong password", "new_password": "another long one"}, status: 401, code: "UNAUTHORIZED"})
		owner.do(t, ctReq{method: "POST", path: "/password", bearer: session, body: map[string]any{"current_password": a.Password, "new_password": "short"}, status: 422, code: "VALIDATION"})
		changed := ctStr(owner.do(t, ctReq{method: "POST", path: "/password", bearer: session, body: map[string]any{"current_password": a.Password, "new_password": "another long one"}, status: 200}).obj(t), "owner_secret")
		owner.do(t, ctReq{method: "GET", path: "/keys", bearer: a.OwnerSecret, status: 401, code: "UNAUTHORIZED"}) // replaced by the password change
		owner.do(t, ctReq{method: "POST", path: "/owner-secret", bearer: session, status: 422, code: "VALIDATION", invalid: true})
		owner.do(t, ctReq{method: "POST", path: "/owner-secret", bearer: session, body: map[string]any{"current_password": a.Password}, status: 401, code: "UNAUTHORIZED"})
		secret := ctStr(owner.do(t, ctReq{method: "POST", path: "/owner-secret", bearer: session, body: map[string]any{"current_password": "another long one"}, status: 200}).obj(t), "owner_secret")
		owner.do(t, ctReq{method: "POST", path: "/owner-secret", bearer: changed, body: map[string]any{"current_password": "another long one"}, status: 401, code: "UNAUTHORIZED"}) // rotated away
		owner.do(t, ctReq{method: "DELETE", path: "/sessions/current", bearer: secret, status: 422, code: "VALIDATION"})
		owner.do(t, ctReq{method: "DELETE", path: "/account", bearer: secret, body: map[string]any{"confirm": false}, status: 422, code: "VALIDATION", invalid: true})
		owner.do(t, ctReq{method: "DELETE", path: "/sessions/current", bearer: session, status: 204})
		owner.do(t, ctReq{method: "DELETE", path: "/account", bearer: secret, body: map[string]any{"confirm": true}, status: 422, code: "VALIDATION", invalid: true})
		owner.do(t, ctReq{method: "DELETE", path: "/account", bearer: secret, body: map[string]any{"confirm": true, "current_password": "wrong password"}, status: 401, code: "UNAUTHORIZED"})
		owner.do(t, ctReq{method: "DELETE", path: "/account", bearer: secret, body: map[string]any{"confirm": true, "current_password": "another long one"}, status: 204})
		owner.do(t, ctReq{method: "GET", path: "/keys", bearer: secret, status: 401, code: "UNAUTHORIZED"})
	})

	// Every operation ran into a success and into an error (the public
	// documents document no error: there is none to provoke).
	var missing []string
	for _, key := range agent.operations() {
		seen := agent.seen[key]
		op := agent.op(key)
		hasErrors := slices.ContainsFunc(slices.Collect(maps.Keys(op.Responses.Map())), func(s string) bool { return s[0] == '4' || s[0] == '5' })
		if seen == nil || len(seen.ok) == 0 || hasErrors && len(seen.failed) == 0 {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		t.Errorf("operations not exercised both ways: %v", missing)
	}
	t.Log("agent.json operations exercised (statuses seen):\n" + agent.summary())
	t.Log("owner.json operations exercised (statuses seen):\n" + owner.summary())
}

// ctContract validates traffic to one server against one document.
type ctContract struct {
	base, prefix string
	doc          *openapi3.T
	router       routers.Router

	mu   sync.Mutex
	seen map[string]*ctSeen // by "METHOD /path" of the document
}

// ctSeen is what an operation answered.
type ctSeen struct{ ok, failed []int }

// ctLoad loads a document from httpd/openapi and validates it.
func ctLoad(t *testing.T, s *server, name, prefix string) *ctContract {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "httpd", "openapi", name))
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &ctContract{base: s.URL, prefix: prefix, doc: doc, router: router, seen: map[string]*ctSeen{}}
}

// ctReq is one request and what the test expects of it.
type ctReq struct {
	method, path string // path below the prefix, query included
	bearer       string
	body         any    // nil, or a value sent as JSON
	raw          string // else a body sent as it is, as contentType
	contentType  string
	headers      []string
	status       int    // the wanted status; 0 takes any
	code         string // the wanted error code, if any
	// invalid says the request breaks the document: ValidateRequest must
	// refuse it, as the server does.
	invalid bool
}

// ctResponse is an answer that matched the document.
type ctResponse struct {
	response
}

func (r ctResponse) obj(t *testing.T) map[string]any {
	t.Helper()
	return r.JSON(t)
}

func init() {
	openapi3filter.RegisterBodyDecoder("text/markdown", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/jsonl", openapi3filter.PlainBodyDecoder) // BIP-329 label files
}

// ctAuthenticate accepts any bearer credential: whether the key is good is
// the server's to say (401), the document only says one is needed.
func ctAuthenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, token, found := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no bearer credential")
	}
	return nil
}

var ctOptions = &openapi3filter.Options{
	ExcludeRequestBody:    false,
	IncludeResponseStatus: true,
	MultiError:            true,
	AuthenticationFunc:    ctAuthenticate,
}

// do sends r, checks the request and the response against the document and
// the status and code the test wants, and records the outcome.
func (c *ctContract) do(t *testing.T, r ctReq) ctResponse {
	t.Helper()
	var body []byte
	contentType := "application/json"
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			t.Fatal(err)
		}
	} else if r.contentType != "" {
		body, contentType = []byte(r.raw), r.contentType
	}
	build := func() *http.Request {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(r.method, c.base+c.prefix+r.path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", contentType)
		}
		if r.bearer != "" {
			req.Header.Set("Authorization", "Bearer "+r.bearer)
		}
		for i := 0; i+1 < len(r.headers); i += 2 {
			req.Header.Set(r.headers[i], r.headers[i+1])
		}
		return req
	}
	what := r.method + " " + c.prefix + r.path

	checked := build()
	route, params, err := c.router.FindRoute(checked)
	if err != nil {
		t.Fatalf("%s: not an operation of the document: %v", what, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: checked, PathParams: params, Route: route, Options: ctOptions}
	verr := openapi3filter.ValidateRequest(context.Background(), in)
	switch {
	case r.invalid && verr == nil:
		t.Errorf("%s %s: the document accepts a request the test means to break it", what, body)
	case !r.invalid && verr != nil:
		t.Errorf("%s %s: the document refuses the request: %v", what, body, verr)
	}

	resp, err := httpClient.Do(build())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := ctResponse{response{Status: resp.StatusCode, Header: resp.Header, Body: got}}
	if r.status != 0 && out.Status != r.status {
		t.Fatalf("%s %s: status %d, want %d; body %s", what, body, out.Status, r.status, got)
	}
	if r.code != "" {
		if code := out.Code(t); code != r.code {
			t.Fatalf("%s: code %q, want %q; body %s", what, code, r.code, got)
		}
	}
	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: out.Status, Header: out.Header, Options: ctOptions}
	rin.SetBodyBytes(got)
	if err := openapi3filter.ValidateResponse(context.Background(), rin); err != nil {
		t.Errorf("%s: the %d response does not match the document: %v\nbody %.600s", what, out.Status, err, got)
	}

	key := route.Method + " " + route.Path
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.seen[key]
	if seen == nil {
		seen = &ctSeen{}
		c.seen[key] = seen
	}
	if out.Status < 400 {
		seen.ok = append(seen.ok, out.Status)
	} else {
		seen.failed = append(seen.failed, out.Status)
	}
	return out
}

// merge records c's outcomes in into (same document, another server).
func (c *ctContract) merge(into *ctContract) {
	c.mu.Lock()
	defer c.mu.Unlock()
	into.mu.Lock()
	defer into.mu.Unlock()
	for key, s := range c.seen {
		if into.seen[key] == nil {
			into.seen[key] = &ctSeen{}
		}
		into.seen[key].ok = append(into.seen[key].ok, s.ok...)
		into.seen[key].failed = append(into.seen[key].failed, s.failed...)
	}
}

// operations returns "METHOD /path" of every operation, sorted.
func (c *ctContract) operations() []string {
	var keys []string
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			keys = append(keys, method+" "+path)
		}
	}
	slices.Sort(keys)
	return keys
}

func (c *ctContract) op(key string) *openapi3.Operation {
	method, path, _ := strings.Cut(key, " ")
	return c.doc.Paths.Value(path).GetOperation(method)
}

// summary lists each operation with the distinct statuses it answered.
func (c *ctContract) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, key := range c.operations() {
		s := c.seen[key]
		if s == nil {
			fmt.Fprintf(&b, "  %-55s not exercised\n", key)
			continue
		}
		statuses := slices.Concat(s.ok, s.failed)
		slices.Sort(statuses)
		fmt.Fprintf(&b, "  %-55s %v\n", key, slices.Compact(statuses))
	}
	return b.String()
}

// ctAddress returns a valid, distinct Bitcoin mainnet P2PKH address for seed.
func ctAddress(seed string) string { return testaddr.P2PKH("addrwatch-contract-test:" + seed) }

// ctStr returns a string field of a JSON object.
func ctStr(v any, field string) string {
	m, _ := v.(map[string]any)
	s, _ := m[field].(string)
	return s
}

// ctWith returns a copy of m with field set, or removed when value is nil.
func ctWith(m map[string]any, field string, value any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if value == nil {
		delete(out, field)
	} else {
		out[field] = value
	}
	return out
}

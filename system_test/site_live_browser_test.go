package system_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The live view in a real browser: an agent's change through /v1 shows on
// the owner's open page without a reload, and an edit the owner is in the
// middle of is never replaced, on a server-drawn page and in the Sheet
// editor. The time from the agent's write to the change on screen is
// logged (polling once a second, it should be about a second).
func TestSiteLiveViewInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteSetUp(t, s, "live.owner")
	e := spEnv{s: s, acct: o.account}
	e.setPlan(t, "extended")
	e.grantCard(t, o.cards[0], "write")
	key := s.createKey(t, o.account, "write")
	b := newBrowser(t)
	siteSignIn(t, b, o, "live.owner")

	// agentRename renames the first card through /v1.
	agentRename := func(name string) time.Time {
		t.Helper()
		r := do(t, "GET", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, nil)
		expect(t, r, http.StatusOK, "")
		version := r.JSON(t)["card"].(map[string]any)["version"]
		r = do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+o.cards[0], key, map[string]any{"expected_version": version, "name": name})
		expect(t, r, http.StatusOK, "")
		return time.Now()
	}
	// stillTheSamePage is true while no navigation or reload happened.
	mark := func() { b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.addrwatchTestMark = true`)) }
	stillTheSamePage := func() bool {
		return run(b, "check the mark", chromedp.Evaluate[bool](`window.addrwatchTestMark === true`))
	}

	// The Portfolio list follows an agent's rename.
	b.open(s.URL + "/portfolio")
	mark()
	wrote := agentRename("Renamed by the agent")
	b.waitText("#row-"+o.cards[0], "Renamed by the agent")
	t.Logf("live view: an agent's rename was on the owner's Portfolio %v after the write", time.Since(wrote).Round(10*time.Millisecond))
	if !stillTheSamePage() {
		t.Fatal("the page was reloaded to show the change")
	}
	if said := b.text("#live-status"); !strings.Contains(said, "An agent changed this page") {
		t.Fatalf("the status line says %q", said)
	}

	// On the card's page the owner is typing a name when the agent renames
	// the card: the heading follows, the typed name stays.
	b.open(s.URL + "/portfolio/cards/" + o.cards[0])
	mark()
	b.fill("Name", "Typed by the owner")
	agentRename(siteHostileScript)
	b.waitText("#card-heading", siteHostileScript)
	if typed := b.value("#card-name"); typed != "Typed by the owner" {
		t.Fatalf("the owner's typing became %q", typed)
	}
	if said := b.waitText("#live-status", "kept as you typed it"); !stillTheSamePage() {
		t.Fatalf("reloaded; status %q", said)
	}
	// Saving now meets the agent's version: refused, the typed name kept.
	if status := b.submit(`form[action="/portfolio/cards/` + o.cards[0] + `"] button[type=submit]`); status != http.StatusConflict || b.value("#card-name") != "Typed by the owner" {
		t.Fatalf("saving after the agent: %d, name %q", status, b.value("#card-name"))
	}
	b.expectConsoleError("status of 409")

	// The Sheet editor: a row in view follows the agent; a row the owner
	// is editing turns into a conflict on screen before any save.
	id := spID(e.owner().createSpace(t, "Live sheet", "sheet"))
	e.grant(t, id, "write")
	agent := sheetAgent{t: t, url: s.URL + "/v1/bookmark-spaces/" + id + "/sheet", key: key}
	agent.patch(map[string]any{"rows": []map[string]any{{"index": 2, "cells": []string{"a", "bitcoin", "", "", ""}}}})
	b.open(s.URL + "/spaces/" + id + "/sheet")
	run(b, "wait for the Sheet", chromedp.Poll[bool](`performance.getEntriesByName("sheet-ready").length > 0`))
	mark()
	b.clearInput("#cell-3-0")
	b.typeInto("#cell-3-0", "owner typing")
	wrote = time.Now()
	agent.patch(map[string]any{"rows": []map[string]any{
		{"index": 2, "cells": []string{"a", "bitcoin", "", "", "agent's note"}},
		{"index": 3, "cells": []string{"agent's row", "bitcoin", "", "", ""}},
	}})
	run(b, "wait for index 2 to follow", chromedp.Poll[bool](`document.getElementById("cell-2-4").value === "agent's note"`))
	t.Logf("live view: an agent's Sheet write was in the owner's editor %v after the write", time.Since(wrote).Round(10*time.Millisecond))
	said := b.waitText("#conflict-3", "It now holds")
	if !strings.Contains(said, "agent's row") || b.value("#cell-3-0") != "owner typing" || !stillTheSamePage() {
		t.Fatalf("the conflict says %q; the cell reads %q", said, b.value("#cell-3-0"))
	}
	if got := agent.slot(3)[0]; got != "agent's row" {
		t.Fatalf("index 3 holds %q", got)
	}
	b.assertNoConsoleErrors()
}

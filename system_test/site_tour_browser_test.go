package system_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The README's tour: an account as an owner keeps one (Account cards, a
// Bitcoin Space, a Sheet, notes, two agents at work), and each page of the
// tour opened in a real browser, usable from the keyboard and free of
// console errors. With ADDRWATCH_TOUR_DIR set it saves a screenshot of
// each page there (`make screenshots` writes the README's, in docs/).
func TestSiteTourInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	o := siteAccount(t, s, "extended", "alice@example.com")
	e := spEnv{s: s, acct: o.account}
	owner := e.owner()

	var cards []string
	for i, c := range []struct{ name, note, color string }{
		{"Cold storage", "multisig, 2 of 3", "blue"},
		{"Savings", "DCA every Friday", "green"},
		{"Donations", "", "amber"},
	} {
		card := owOwnerCard(t, s, o.OwnerSecret, owAddress(700+i), c.name)
		cards = append(cards, spID(card))
		expect(t, do(t, "PATCH", s.URL+"/owner/v1/portfolio/cards/"+spID(card), o.OwnerSecret, map[string]any{"expected_version": card["version"], "note": c.note, "color_key": c.color}), http.StatusOK, "")
	}
	e.grantCard(t, cards[0], "read")
	e.grantCard(t, cards[1], "write")
	_, reader := owKey(t, s, o.OwnerSecret, "read", "nightly report agent")
	_, writer := owKey(t, s, o.OwnerSecret, "write", "rebalancing agent")

	first := spID(owner.list(t).spaces[0])
	rename := do(t, "PATCH", s.URL+"/owner/v1/bookmark-spaces/"+first, o.OwnerSecret, map[string]any{"expected_bookmark_revision": owner.list(t).rev, "name": "Watch list"})
	expect(t, rename, http.StatusOK, "")
	for i, name := range []string{"Exchange deposit", "Merchant payouts", "Old paper wallet"} {
		owner.addCard(t, first, map[string]any{"address": owAddress(720 + i), "name": name, "note": ""})
	}
	e.grant(t, first, "read")
	ledger := spID(owner.createSpace(t, "Ledger", "sheet"))
	e.grant(t, ledger, "write")
	rows := []map[string]any{}
	for i := 0; i < 40; i++ {
		rows = append(rows, map[string]any{"index": i, "cells": []string{owAddress(740 + i), "bitcoin",
			fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint("tour tx ", i)))), time.Date(2026, time.Month(1+i%11), 1+i%27, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), []string{"payout", "refund", "fee", ""}[i%4]}})
	}
	sheet := s.URL + "/v1/bookmark-spaces/" + ledger + "/sheet"
	agent := sheetAgent{t: t, url: sheet, key: writer}
	agent.patch(map[string]any{"rows": rows})

	// The agents at work: reads, a note, a refused write.
	r := do(t, "GET", s.URL+"/v1/history/cards/"+cards[1]+"/transactions?limit=3", writer, nil)
	expect(t, r, http.StatusOK, "")
	txs := r.JSON(t)["transactions"].([]any)
	if len(txs) == 0 {
		t.Fatal("the simulated chain gave the card no transactions")
	}
	txid := txs[0].(map[string]any)["txid"].(string)
	expect(t, do(t, "PUT", s.URL+"/v1/history/notes/"+txid, writer, map[string]any{"note": "rebalanced to cold"}), http.StatusOK, "")
	for range 3 {
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards", reader, nil), http.StatusOK, "")
	}
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+cards[0], reader, map[string]any{"expected_version": "x", "name": "y"}), http.StatusForbidden, "FORBIDDEN")

	b := newBrowser(t)
	siteSignIn(t, b, o, "alice@example.com")
	dir := os.Getenv("ADDRWATCH_TOUR_DIR")
	stop := func(name, path string, ready func()) {
		t.Helper()
		if status := b.open(s.URL + path); status != http.StatusOK {
			t.Fatalf("%s: %d", path, status)
		}
		if ready != nil {
			ready()
		}
		b.assertUsable(name)
		b.assertNoConsoleErrors()
		if dir != "" {
			b.screenshot(filepath.Join(dir, name+".png"))
		}
	}
	stop("site-portfolio", "/portfolio", nil)
	stop("site-card", "/portfolio/cards/"+cards[1], nil)
	stop("site-space", "/spaces/"+first, nil)
	stop("site-sheet", "/spaces/"+ledger+"/sheet", func() {
		run(b, "wait for the Sheet", chromedp.Poll[bool](`performance.getEntriesByName("sheet-ready").length > 0`))
	})
	stop("site-history", "/history/cards/"+cards[1], func() {
		if got := b.value("#note-" + txid); got != "rebalanced to cold" {
			t.Fatalf("the agent's note reads %q", got)
		}
	})
	stop("site-activity", "/activity", func() {
		for start := time.Now(); !strings.Contains(b.text("main"), "403 FORBIDDEN") && time.Since(start) < 15*time.Second; {
			time.Sleep(300 * time.Millisecond)
			b.open(s.URL + "/activity")
		}
		if !strings.Contains(b.text("main"), "nightly report agent") {
			t.Fatalf("the activity page: %s", b.text("main"))
		}
	})
	stop("site-panel", "/access", nil)
}

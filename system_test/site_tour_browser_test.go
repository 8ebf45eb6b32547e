package system_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// tourAccount is an account as an owner keeps one, with what a hostile or
// careless name does to a page: Account cards (one named with markup, one
// with a long name, one in Hebrew), a Bitcoin Space of bookmarks (one
// named with markup), a Sheet of 40 rows, notes (one with markup), two
// agents at work (reads, a note, a refused write), a webhook channel
// named with markup and a rule of a card's own.
type tourAccount struct {
	siteOwner
	cards     []string // Account card IDs: Cold storage, Savings, Donations, then the hostile ones
	watchList string   // the Bitcoin Space's ID
	ledger    string   // the Sheet Space's ID
	bookmark  string   // a bookmark card of the watch list
	readerID  string   // the read key's ID
	noteTxid  string   // the transaction of Savings the agent noted
	channel   string   // the webhook channel's ID
}

// tourLogin is the tour account's login.
const tourLogin = "alice@example.com"

// tourAccountOn makes the tour account on s, which must run with
// --notify-allow-private (the webhook's receiver is on loopback).
func tourAccountOn(t *testing.T, s *server) tourAccount {
	t.Helper()
	o := siteAccount(t, s, "extended", tourLogin)
	a := tourAccount{siteOwner: o}
	e := spEnv{s: s, acct: o.account}
	owner := e.owner()

	for i, c := range []struct{ name, note, color string }{
		{"Cold storage", "multisig, 2 of 3", "blue"},
		{"Savings", "DCA every Friday", "green"},
		{"Donations", "", "amber"},
		{siteHostileImg, siteHostileNote, "rose"},
		{strings.TrimSpace(strings.Repeat("A very long card name ", 4)), "a note that goes on and on about what this card is for, long enough to wrap", "violet"},
		{"ארנק חיסכון", "", "teal"},
	} {
		card := owOwnerCard(t, s, o.OwnerSecret, owAddress(700+i), c.name)
		a.cards = append(a.cards, spID(card))
		expect(t, do(t, "PATCH", s.URL+"/owner/v1/portfolio/cards/"+spID(card), o.OwnerSecret, map[string]any{"expected_version": card["version"], "note": c.note, "color_key": c.color}), http.StatusOK, "")
	}
	e.grantCard(t, a.cards[0], "read")
	e.grantCard(t, a.cards[1], "write")
	e.grantCard(t, a.cards[3], "read")
	var reader, writer string
	a.readerID, reader = owKey(t, s, o.OwnerSecret, "read", "nightly report agent")
	_, writer = owKey(t, s, o.OwnerSecret, "write", "rebalancing agent")
	_, hostile := owKey(t, s, o.OwnerSecret, "read", siteHostileScript)

	a.watchList = spID(owner.list(t).spaces[0])
	rename := do(t, "PATCH", s.URL+"/owner/v1/bookmark-spaces/"+a.watchList, o.OwnerSecret, map[string]any{"expected_bookmark_revision": owner.list(t).rev, "name": "Watch list"})
	expect(t, rename, http.StatusOK, "")
	for i, name := range []string{"Exchange deposit", "Merchant payouts", "Old paper wallet", siteHostileScript} {
		card := owner.addCard(t, a.watchList, map[string]any{"address": owAddress(720 + i), "name": name, "note": map[bool]string{true: siteHostileNote}[i == 3]})
		if i == 0 {
			a.bookmark = spID(card)
		}
	}
	e.grant(t, a.watchList, "read")
	a.ledger = spID(owner.createSpace(t, "Ledger", "sheet"))
	e.grant(t, a.ledger, "write")
	rows := []map[string]any{}
	for i := 0; i < 40; i++ {
		rows = append(rows, map[string]any{"index": i, "cells": []string{owAddress(740 + i), "bitcoin",
			fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint("tour tx ", i)))), time.Date(2026, time.Month(1+i%11), 1+i%27, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), []string{"payout", "refund", "fee", siteHostileImg}[i%4]}})
	}
	agent := sheetAgent{t: t, url: s.URL + "/v1/bookmark-spaces/" + a.ledger + "/sheet", key: writer}
	agent.patch(map[string]any{"rows": rows})

	// The agents at work: reads, a note, a refused write.
	r := do(t, "GET", s.URL+"/v1/history/cards/"+a.cards[1]+"/transactions?limit=3", writer, nil)
	expect(t, r, http.StatusOK, "")
	txs := r.JSON(t)["transactions"].([]any)
	if len(txs) < 2 {
		t.Fatal("the simulated chain gave the card fewer than two transactions")
	}
	a.noteTxid = txs[0].(map[string]any)["txid"].(string)
	expect(t, do(t, "PUT", s.URL+"/v1/history/notes/"+a.noteTxid, writer, map[string]any{"note": "rebalanced to cold"}), http.StatusOK, "")
	expect(t, do(t, "PUT", s.URL+"/owner/v1/history/notes/"+txs[1].(map[string]any)["txid"].(string), o.OwnerSecret, map[string]any{"note": siteHostileNote}), http.StatusOK, "")
	for range 3 {
		expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards", reader, nil), http.StatusOK, "")
	}
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+a.cards[0], reader, map[string]any{"expected_version": "x", "name": "y"}), http.StatusForbidden, "FORBIDDEN")
	// A key named with markup reads the card named with markup: Agent
	// activity shows both as text.
	expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+a.cards[3], hostile, nil), http.StatusOK, "")

	// Notifications: a webhook named with markup, a rule of a card's own,
	// and a test message in the delivery log.
	hook := newReceiver(t, nil)
	a.channel, _ = webhookChannel(t, s, o.account, siteHostileScript, hook.URL+"/hook")
	expect(t, do(t, "PUT", ntURL(s, "/rules/cards/"+a.cards[1]), o.OwnerSecret, map[string]any{"depth": 1, "channels": []string{a.channel}}), http.StatusOK, "")
	expect(t, do(t, "POST", ntURL(s, "/channels/"+a.channel+"/test"), o.OwnerSecret, nil), http.StatusOK, "")
	return a
}

// The README's tour: the tour account's pages opened in a real browser,
// usable from the keyboard and free of console errors. With
// ADDRWATCH_TOUR_DIR set it saves a screenshot of each page there at
// 1280 px, and of the main pages at a phone's 390 px (site-phone-*.png):
// `make screenshots` writes the README's, in docs/.
func TestSiteTourInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--notify-allow-private")
	a := tourAccountOn(t, s)

	b := newBrowser(t)
	siteSignIn(t, b, a.siteOwner, tourLogin)
	dir := os.Getenv("ADDRWATCH_TOUR_DIR")
	waitSheet := func() {
		run(b, "wait for the Sheet", chromedp.Poll[bool](`performance.getEntriesByName("sheet-ready").length > 0`))
	}
	// A phone's picture is of the top of the page: a long page whole
	// would be a strip too narrow to read in the README.
	phone := false
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
		switch {
		case dir == "":
		case phone:
			b.screenshotTop(filepath.Join(dir, name+".png"), phoneScreenshotHeight)
		default:
			b.screenshot(filepath.Join(dir, name+".png"))
		}
	}
	stop("site-portfolio", "/portfolio", nil)
	stop("site-card", "/portfolio/cards/"+a.cards[1], nil)
	stop("site-space", "/spaces/"+a.watchList, nil)
	stop("site-sheet", "/spaces/"+a.ledger+"/sheet", waitSheet)
	stop("site-history", "/history/cards/"+a.cards[1], func() {
		if got := b.value("#note-" + a.noteTxid); got != "rebalanced to cold" {
			t.Fatalf("the agent's note reads %q", got)
		}
	})
	// The agents' work in the owner's words: the reader's refused change
	// names the card, and the writer's note and History read are there.
	refused := "was refused: change Account card “Cold storage” (403 FORBIDDEN)"
	stop("site-activity", "/activity", func() {
		for start := time.Now(); !strings.Contains(plainText(b.text("main")), refused) && time.Since(start) < 15*time.Second; {
			time.Sleep(300 * time.Millisecond)
			b.open(s.URL + "/activity")
		}
		main := plainText(b.text("main"))
		for _, want := range []string{refused, "nightly report agent", "read the History of Account card “Savings”", "saved a note on transaction ", siteHostileScript, "Account card “" + siteHostileImg + "”"} {
			if !strings.Contains(main, want) {
				t.Fatalf("the activity page has no %q: %s", want, main)
			}
		}
	})
	stop("site-panel", "/access", nil)

	// The same account on a phone.
	b.viewport(phoneWidth, phoneHeight)
	phone = true
	stop("site-phone-portfolio", "/portfolio", nil)
	stop("site-phone-space", "/spaces/"+a.watchList, nil)
	stop("site-phone-sheet", "/spaces/"+a.ledger+"/sheet", waitSheet)
	stop("site-phone-history", "/history/cards/"+a.cards[1], nil)
	stop("site-phone-activity", "/activity", nil)
}

// phoneScreenshotHeight is how much of a page a phone's picture shows, in
// CSS pixels: about a screen and a half.
const phoneScreenshotHeight = 1300

// screenshotTop saves a PNG of the top of the page, at most height CSS
// pixels of it, creating path's directory.
func (b *browserTab) screenshotTop(path string, height float64) {
	b.t.Helper()
	size := run(b, "measure the page", chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, document.documentElement.scrollHeight]`))
	shot := within(b, "screenshot the top of the page", func(ctx context.Context) (page.CaptureScreenshotResult, error) {
		return chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			CaptureBeyondViewport: new(true),
			Clip:                  &page.Viewport{Width: size[0], Height: min(size[1], height), Scale: 1},
		})
	})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, shot.Data, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

package system_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// End-to-end tests of the History CSV downloads of the owner API, over
// loopback against the real server and a chain.Sim upstream: the rows and
// notes are checked against the reference Sim, after encoding/csv has
// parsed the file.

// csvGet downloads a CSV that must be served and parses it.
func csvGet(t testing.TB, s *server, owner, path string) ([][]string, response) {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1"+path, owner, nil)
	expect(t, r, http.StatusOK, "")
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	if d := r.Header.Get("Content-Disposition"); !strings.HasPrefix(d, `attachment; filename="addrwatch-`) || !strings.HasSuffix(d, `.csv"`) {
		t.Fatalf("GET %s: Content-Disposition %q", path, d)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("GET %s: not RFC 4180 CSV: %v\n%.400s", path, err, r.Body)
	}
	return rows, r
}

func csvCardPath(cardID string) string { return "/history/cards/" + cardID + "/transactions.csv" }

// csvCheckCard checks a card's file row by row against the transactions
// the reference lists for it, and the notes saved on them.
func csvCheckCard(t testing.TB, what string, rows [][]string, ref hiRef, txs []chain.Tx, notes map[string]string) {
	t.Helper()
	if want := []string{"time", "confirmed", "block_height", "txid", "direction", "amount_sat", "fee_sat", "note"}; !slices.Equal(rows[0], want) {
		t.Fatalf("%s: header %q", what, rows[0])
	}
	if len(rows)-1 != len(txs) {
		t.Fatalf("%s: %d rows, want %d transactions", what, len(rows)-1, len(txs))
	}
	for i, tx := range txs {
		row := rows[1+i]
		at := ""
		if tx.Confirmed {
			at = tx.BlockTime.UTC().Format(time.RFC3339)
		}
		if row[0] != at || row[3] != tx.TxID || row[5] != fmt.Sprint(tx.NetAmount(ref.addr)) || row[6] != fmt.Sprint(tx.Fee) || row[1] != fmt.Sprint(tx.Confirmed) {
			t.Fatalf("%s: row %d %q, want %s at %q amount %d fee %d", what, 1+i, row, tx.TxID, at, tx.NetAmount(ref.addr), tx.Fee)
		}
		if want := csvCell(notes[tx.TxID]); row[7] != want {
			t.Fatalf("%s: row %d note %q, want %q", what, 1+i, row[7], want)
		}
	}
}

// csvCell is a note as the file shows it: with a leading quote when a
// spreadsheet would take it for a formula.
func csvCell(note string) string {
	if note != "" && strings.ContainsRune("=+-@\t\r", rune(note[0])) {
		return "'" + note
	}
	return note
}

func TestHistoryCSVDownloads(t *testing.T) {
	t.Parallel()
	s, sim := hiSimUpstream(t)
	acct := s.createAccount(t, "extended")
	owner := acct.OwnerSecret
	busy, hub := hiBusy(t), hiReference(t, hiHubQ)
	busyID := apID(apOwnerCreateCard(t, s, acct, busy.addr, `Savings, "main"`))
	hubID := apID(apOwnerCreateCard(t, s, acct, hub.addr, "=HUB()"))

	// Notes on a recent and an old transaction of the busy card and on the
	// unconfirmed transaction the hub shares with hiGenesis and hiHub3.
	old, _ := busy.firstOld(t)
	shared := hub.txs[0]
	if shared.Confirmed {
		t.Fatalf("the hub's first transaction is confirmed")
	}
	notes := map[string]string{
		busy.recent()[2].TxID: "rent, \"May\"\nsecond line",
		old.TxID:              "=1+1 old one",
		shared.TxID:           "@hub payout",
	}
	for txid, note := range notes {
		expect(t, hiPutNote(t, s, "/owner/v1", owner, txid, note), http.StatusOK, "")
	}

	// Extended: each card's file is its whole history, with the notes.
	rows, r := csvGet(t, s, owner, csvCardPath(busyID))
	csvCheckCard(t, "extended busy card", rows, busy, busy.txs, notes)
	if d := r.Header.Get("Content-Disposition"); !strings.Contains(d, "savings-main-card-"+busyID+"-full-to-") {
		t.Fatalf("Content-Disposition %q", d)
	}
	rows, _ = csvGet(t, s, owner, csvCardPath(hubID))
	csvCheckCard(t, "extended hub card", rows, hub, hub.txs, notes)

	// The combined file: a row per transaction and card, naming the card.
	rows, r = csvGet(t, s, owner, "/history.csv")
	if !strings.Contains(r.Header.Get("Content-Disposition"), "addrwatch-history-") {
		t.Fatalf("combined Content-Disposition %q", r.Header.Get("Content-Disposition"))
	}
	want := map[string]bool{}
	for _, c := range []struct {
		id  string
		ref hiRef
	}{{busyID, busy}, {hubID, hub}} {
		for _, tx := range c.ref.txs {
			want[c.id+" "+tx.TxID] = true
		}
	}
	if len(rows)-1 != len(want) {
		t.Fatalf("combined: %d rows, want %d", len(rows)-1, len(want))
	}
	names := map[string]string{busyID: `Savings, "main"`, hubID: "'=HUB()"}
	for _, row := range rows[1:] {
		if !want[row[3]+" "+row[5]] || row[4] != names[row[3]] || row[9] != csvCell(notes[row[5]]) {
			t.Fatalf("combined row %q: unexpected, or wrong card name or note", row)
		}
	}

	// Base: the latest calendar year only; an old transaction's note stays
	// saved but its row is outside the file; a dormant card's file is
	// empty although its JSON History previews older transactions.
	r = do(t, "PUT", s.URL+"/owner/v1/plan", owner, map[string]any{"plan": "base"})
	expect(t, r, http.StatusOK, "")
	rows, r = csvGet(t, s, owner, csvCardPath(busyID))
	csvCheckCard(t, "base busy card", rows, busy, busy.recent(), notes)
	from, to := hiWindow()
	if d := r.Header.Get("Content-Disposition"); !strings.HasSuffix(d, fmt.Sprintf(`-%s-to-%s.csv"`, from.Format(time.DateOnly), to.Format(time.DateOnly))) {
		t.Fatalf("base Content-Disposition %q", d)
	}
	hiHasNote(t, "the old note", s, "/owner/v1", owner, old.TxID, notes[old.TxID])
	dormantID := apID(apOwnerCreateCard(t, s, acct, hiDormant1, "Dormant"))
	if p := hiGetPage(t, s, owner, "/owner/v1", dormantID, ""); !p.HistoryExport.OlderPreview || len(p.Transactions) == 0 {
		t.Fatalf("the dormant card's JSON History shows no preview")
	}
	if rows, _ = csvGet(t, s, owner, csvCardPath(dormantID)); len(rows) != 1 {
		t.Fatalf("the dormant card's base file has %d rows; the preview must not extend it", len(rows)-1)
	}

	// The upstream fails on a card the server has not read yet: the spec's
	// error, and no file.
	freshID := apID(apOwnerCreateCard(t, s, acct, hiDormant2, "Fresh"))
	sim.SetFault(chain.SimFault{Status: http.StatusInternalServerError})
	expect(t, do(t, "GET", s.URL+"/owner/v1"+csvCardPath(freshID), owner, nil), http.StatusServiceUnavailable, "HTTP_ERROR")
	expect(t, do(t, "GET", s.URL+"/owner/v1/history.csv", owner, nil), http.StatusServiceUnavailable, "HTTP_ERROR")
	sim.SetFault(chain.SimFault{})
	expect(t, do(t, "GET", s.URL+"/owner/v1"+csvCardPath("nosuchcard"), owner, nil), http.StatusNotFound, "NOT_FOUND")
	expect(t, do(t, "GET", s.URL+"/owner/v1/history.csv", "", nil), http.StatusUnauthorized, "")
}

// The upstream fails after the first page has gone out: the file ends
// with the INCOMPLETE row, so a spreadsheet user sees it is cut short.
func TestHistoryCSVUpstreamFailureMidFile(t *testing.T) {
	t.Parallel()
	s, sim := hiSimUpstream(t)
	acct := s.createAccount(t, "extended")
	busy := hiBusy(t)
	if len(busy.txs) <= chain.HistoryPageLimitMax {
		t.Fatalf("%s has %d transactions, one page", busy.addr, len(busy.txs))
	}
	id := apID(apOwnerCreateCard(t, s, acct, busy.addr, "Busy"))
	// The first page of 100 is read now and cached (for a minute); the
	// download finds it there and needs the upstream for the second.
	hiGetPage(t, s, acct.OwnerSecret, "/owner/v1", id, "limit=100")
	sim.SetFault(chain.SimFault{Status: http.StatusInternalServerError})
	rows, _ := csvGet(t, s, acct.OwnerSecret, csvCardPath(id))
	last := rows[len(rows)-1]
	if last[0] != "INCOMPLETE" || !strings.Contains(last[1], "after 100 transactions") || len(rows) != 1+100+1 {
		t.Fatalf("%d rows, last %q; want 100 transactions and the INCOMPLETE row", len(rows)-1, last)
	}
}

package system_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// Issue 28: a BIP-329 import of 3,000 lines that the plan refuses grew the
// raft log by 3,001 entries. On a real node, read from the applied index
// of /admin/v1/cluster: a 3,000-line file of which the plan (10 Account
// cards) takes 10 adds a handful of entries, and the same file again,
// now all unchanged or refused, adds none.
func TestLabelImportWritesAHandfulOfLogEntries(t *testing.T) {
	t.Parallel()
	// The chain follower reads the cards' addresses at its next sweep (every
	// five polls of --chain-poll) and records what it saw in entries of its
	// own, which would land in the count whenever the sweep fell between the
	// two reads of applied_index. Polling every ten minutes keeps its sweeps
	// out of this test's few seconds.
	s := startServer(t, "--chain-poll", "10m")
	a := s.createAccount(t, "base")
	var file strings.Builder
	for i := range 3000 {
		h := sha256.Sum256(fmt.Append(nil, "label import ", i))
		addr, err := btcutil.NewAddressPubKeyHash(h[:20], &chaincfg.MainNetParams)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&file, `{"type":"addr","ref":%q,"label":"wallet %d"}`+"\n", addr.EncodeAddress(), i)
	}
	for round, want := range []struct {
		imported, unchanged, skipped int
		entriesMax                   int
	}{
		{10, 0, 2990, 2}, // one command of 10 lines (and room for an unrelated entry)
		{0, 10, 2990, 1},
	} {
		before := owNumber(t, owClusterStatus(t, s), "applied_index")
		r := do(t, "POST", s.URL+"/owner/v1/labels.jsonl", a.OwnerSecret, file.String())
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if owNumber(t, m, "imported") != want.imported || owNumber(t, m, "unchanged") != want.unchanged || owNumber(t, m, "skipped") != want.skipped {
			t.Fatalf("import %d: imported %v, unchanged %v, skipped %v", round+1, m["imported"], m["unchanged"], m["skipped"])
		}
		added := owNumber(t, owClusterStatus(t, s), "applied_index") - before
		t.Logf("import %d of 3,000 lines: %d log entries", round+1, added)
		if added > want.entriesMax {
			t.Fatalf("import %d of 3,000 lines added %d log entries, want at most %d", round+1, added, want.entriesMax)
		}
	}
}

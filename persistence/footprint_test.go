package persistence

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// The memory footprint of a full extended-plan account: how many bytes of
// heap one such account costs a node, next to the bytes its snapshot
// encoding takes. Everything here is prefixed fp so that it cannot collide
// with the package's other test helpers.
//
//	go test ./persistence -run '^$' -bench FullExtendedAccountFootprint -benchtime 1x
//	go test ./persistence -run '^$' -bench FullExtendedAccountHeapBreakdown -benchtime 1x
//
// For a heap profile of the measured state, add -memprofile mem.out
// -memprofilerate 1: the accounts of the last run stay reachable (fpLive)
// until the profile is written, then
// go tool pprof -sample_index=inuse_space -top persistence.test mem.out.

// The shape of a full extended-plan account (spec: Limits, Spaces, Sheet).
const (
	fpPortfolioCards  = 10   // the plan's Account card limit
	fpSpaces          = 10   // the extended plan's Space limit
	fpBookmarkSpaces  = 9    // bitcoin Spaces, the first one included
	fpCardsPerSpace   = 10   // bookmark cards per Space
	fpSheetRows       = 1000 // every row slot stored
	fpSheetColumns    = 5
	fpSheetCellChars  = 40
	fpSheetPatchRows  = 100 // the spec's PATCH maximum
	fpNotes           = 200
	fpNotesPerCard    = fpNotes / fpPortfolioCards
	fpFootprintAccts  = 50
	fpSheetFifthTitle = "Counterparty and memo"
)

// fpAt0 is the leader time of an account's first command.
var fpAt0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixNano()

var fpBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func fpHash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// fpID is an opaque id shaped like the edge's (httpd newID: 10 bytes in
// lower-case base32, 16 characters), derived from seed.
func fpID(seed string) string {
	h := fpHash("id/" + seed)
	return fpBase32.EncodeToString(h[:10])
}

// fpAddress derives a valid, canonical Bitcoin mainnet address from seed,
// a mix of P2PKH, P2SH, P2WPKH and P2TR.
func fpAddress(t testing.TB, seed string) string {
	t.Helper()
	h := fpHash("address/" + seed)
	var (
		a   btcutil.Address
		err error
	)
	switch h[31] % 4 {
	case 0:
		a, err = btcutil.NewAddressPubKeyHash(h[:20], &chaincfg.MainNetParams)
	case 1:
		a, err = btcutil.NewAddressScriptHashFromHash(h[:20], &chaincfg.MainNetParams)
	case 2:
		a, err = btcutil.NewAddressWitnessPubKeyHash(h[:20], &chaincfg.MainNetParams)
	default:
		a, err = btcutil.NewAddressTaproot(h[:32], &chaincfg.MainNetParams)
	}
	if err != nil {
		t.Fatalf("derive address %q: %v", seed, err)
	}
	s := a.EncodeAddress()
	if canonical, err := chain.ValidateBitcoinAddress(s); err != nil || canonical != s {
		t.Fatalf("derived address %s: canonical %q, %v", s, canonical, err)
	}
	return s
}

// fpTxID is a canonical transaction ID (64 lower-case hex) derived from seed.
func fpTxID(seed string) string {
	h := fpHash("tx/" + seed)
	return hex.EncodeToString(h[:])
}

var fpWords = []string{
	"cold", "storage", "vault", "exchange", "deposit", "payroll", "savings", "mining",
	"payout", "treasury", "multisig", "donations", "merchant", "invoice", "refund", "rent",
	"escrow", "hardware", "wallet", "change", "supplier", "monthly", "quarterly", "customer",
	"batch", "settlement", "backup", "family", "trust", "lightning", "channel", "swap",
	"fees", "OTC", "desk", "Q1", "Q3", "2025", "2026", "March", "pool", "reserve",
}

// fpText is readable ASCII text of minChars to maxChars characters (chosen
// by seed), made of fpWords.
func fpText(seed string, minChars, maxChars int) string {
	h := fpHash("text/" + seed)
	target := minChars + int(h[0])%(maxChars-minChars+1)
	var sb strings.Builder
	for i := 1; sb.Len() < target; i++ {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(fpWords[(int(h[i%32])+i)%len(fpWords)])
	}
	s := sb.String()[:target]
	if strings.HasSuffix(s, " ") {
		s = s[:target-1] + "."
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fpAgentCredential is the bearer credential of the account's write key, as
// the edge builds it from awk.<account>.<key id>.<secret>.
func fpAgentCredential(id string) actors.Credential {
	keyID := fpID(id + "/key")
	secret := "awk." + id + "." + keyID + "." + fpBase32.EncodeToString(func() []byte { h := fpHash(id + "/key-secret"); return h[:] }())
	return actors.Credential{Kind: actors.CredentialAPIKey, AccountID: id, ID: keyID, Hash: sha256.Sum256([]byte(secret)), Now: fpAt0 + int64(time.Hour)}
}

// fpIdem is the Idempotency-Key an agent sends with a create.
func fpIdem(seed, path string) *actors.IdempotencyRequest {
	h := fpHash("idem/" + seed)
	return &actors.IdempotencyRequest{Token: "idem-" + hex.EncodeToString(h[:16]), Method: "POST", Path: path, BodyHash: fpHash("body/" + seed), PerPrincipal: true}
}

// fpBuilder drives one account through actors.Apply, as its actor does.
type fpBuilder struct {
	t     testing.TB
	id    string
	a     *actors.Account
	at    int64
	agent actors.Principal
	cred  actors.Credential
}

// apply applies one command that must succeed, step after the previous
// one. The command is first round-tripped through the log encoding: a
// replica applies what it decodes from the log, so the state then holds
// separately allocated strings exactly like a replica's, and none of the
// fixture's own strings.
func (b *fpBuilder) apply(p actors.Principal, payload actors.Payload, idem *actors.IdempotencyRequest, step time.Duration) actors.Result {
	b.t.Helper()
	b.at += int64(step)
	entry, err := EncodeCommands([]*actors.Command{{Account: b.id, At: b.at, Principal: p, Idempotency: idem, Payload: payload}})
	if err != nil {
		b.t.Fatalf("%s: encode %T: %v", b.id, payload, err)
	}
	cmds, err := DecodeCommands(entry)
	if err != nil || len(cmds) != 1 {
		b.t.Fatalf("%s: decode %T: %d commands, %v", b.id, payload, len(cmds), err)
	}
	var res actors.Result
	b.a, res = actors.Apply(b.a, cmds[0])
	if _, err := res.Outcome(); err != nil {
		b.t.Fatalf("%s: %T: %v", b.id, payload, err)
	}
	if b.a == nil {
		b.t.Fatalf("%s: %T: Apply returned no account", b.id, payload)
	}
	return res
}

// query runs a read as the agent, the way an agent learns versions and
// revisions before it writes.
func (b *fpBuilder) query(q actors.Query) actors.Result {
	b.t.Helper()
	cred := b.cred
	cred.Now = b.at
	res := actors.RunQuery(b.a, cred, q)
	if _, err := res.Outcome(); err != nil {
		b.t.Fatalf("%s: %T: %v", b.id, q, err)
	}
	return res
}

func fpBody[T any](t testing.TB, res actors.Result) T {
	t.Helper()
	v, isT := res.Body.(T)
	if !isT {
		var zero T
		t.Fatalf("result body is %T, want %T", res.Body, zero)
	}
	return v
}

// fpSheetCells is the content of Sheet row i: five cells of exactly
// fpSheetCellChars characters (Address, Blockchain, Transaction ID, Date,
// memo). Sheet cells are plain text and never interpreted.
func fpSheetCells(t testing.TB, seed string, i int) []string {
	t.Helper()
	h := fpHash(fmt.Sprintf("row/%s/%d", seed, i))
	date := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 7 * time.Hour)
	cells := []string{
		"bc1q" + fpBase32.EncodeToString(h[:])[:36],
		fmt.Sprintf("bitcoin mainnet segwit-v0 wallet %07d", int(h[0])<<8|int(h[1])),
		fpTxID(fmt.Sprintf("%s/row/%d", seed, i))[:40],
		fmt.Sprintf("%s block %06d conf %d", date.Format(time.RFC3339), 875000+i*6, 1+int(h[2])%9),
		fpText(fmt.Sprintf("%s/memo/%d", seed, i), fpSheetCellChars, fpSheetCellChars),
	}
	for _, c := range cells {
		if utf8.RuneCountInString(c) != fpSheetCellChars {
			t.Fatalf("fixture cell %q has %d characters, want %d", c, utf8.RuneCountInString(c), fpSheetCellChars)
		}
	}
	return cells
}

// buildFullExtendedAccount builds, only through actors.Apply and with the
// commands the edge would propose, a full extended-plan account: 10
// Account cards; 10 Spaces, of which 9 bitcoin Spaces (the first Space
// among them) of 10 bookmark cards each and one Sheet Space with all
// 1,000 rows stored (5 cells of 40 characters, written with 100-row
// PATCHes under the Sheet-write budget, with a custom fifth heading); and
// 200 transaction notes on transactions of the Account cards' addresses.
// It also holds what building it leaves behind: a write key, an owner
// session, the audit events and the idempotency records of the creates
// (all still within their windows).
func buildFullExtendedAccount(t testing.TB, id string) *actors.Account {
	t.Helper()
	b := &fpBuilder{t: t, id: id, at: fpAt0, cred: fpAgentCredential(id)}
	b.agent = actors.Principal{Kind: actors.PrincipalAgent, KeyID: b.cred.ID}
	system := actors.Principal{Kind: actors.PrincipalSystem}
	passwordHash := "$2a$10$" + hex.EncodeToString(func() []byte { h := fpHash(id + "/password"); return h[:] }())[:53]
	firstSpace := fpID(id + "/space/0")

	// Sign-up, sign-in, a write key for the agent and the owner's grant on
	// the first Space (which starts at none), so the agent can work there
	// and create the other Spaces.
	b.apply(system, &actors.CreateAccount{Plan: actors.PlanExtended, OwnerSecretHash: fpHash("aws." + id + ".owner-secret"),
		PasswordHash: passwordHash, FirstSpaceID: firstSpace}, nil, time.Second)
	sessionID := fpID(id + "/session")
	b.apply(system, &actors.CreateSession{SessionID: sessionID, Hash: fpHash("awt." + id + "." + sessionID + ".secret"),
		ExpiresAt: b.at + int64(24*time.Hour), PasswordHash: passwordHash}, nil, 30*time.Second)
	owner := actors.Principal{Kind: actors.PrincipalOwner, SessionID: sessionID}
	b.apply(owner, &actors.CreateKey{KeyID: b.cred.ID, Name: "Portfolio bookkeeping agent", Capability: actors.LevelWrite, Hash: b.cred.Hash}, nil, 20*time.Second)
	b.apply(owner, &actors.SetGrant{Resource: actors.ResourceSpace, ID: firstSpace, Level: actors.LevelWrite}, nil, 10*time.Second)

	// Account cards (the agent creates them, so they start at write).
	cardAddresses := make([]string, 0, fpPortfolioCards)
	for i := range fpPortfolioCards {
		seed := fmt.Sprintf("%s/card/%d", id, i)
		addr := fpAddress(t, seed)
		cardAddresses = append(cardAddresses, addr)
		name, note, color := fpText(seed+"/name", 20, 40), fpText(seed+"/note", 20, 40), actors.ColorKeys[i%len(actors.ColorKeys)]
		res := b.apply(b.agent, &actors.CreatePortfolioCard{CardID: fpID(seed), Address: addr,
			CardFields: actors.CardFields{Name: &name, Note: &note, ColorKey: &color}}, fpIdem(seed, "/v1/portfolio/cards"), time.Second)
		if res.Status != 201 {
			t.Fatalf("%s: create card: status %d", id, res.Status)
		}
	}

	// Spaces: read the Space set for its revision, then create 8 more
	// bitcoin Spaces and the Sheet Space, each create naming the revision
	// the previous answer returned.
	list := fpBody[actors.SpaceListView](t, b.query(actors.ListSpacesQuery{}))
	revision := list.BookmarkRevision
	type spaceRef struct{ id, version string }
	bookmarkSpaces := []spaceRef{{firstSpace, fpBody[actors.SpaceEnvelope](t, b.query(actors.GetSpaceQuery{SpaceID: firstSpace})).Space.Version}}
	for i := 1; i < fpSpaces; i++ {
		seed := fmt.Sprintf("%s/space/%d", id, i)
		typ, name := actors.SpaceBitcoin, fpText(seed+"/name", 20, 40)
		if i == fpSpaces-1 {
			typ, name = actors.SpaceSheet, "Transaction ledger 2025 (imported)"
		}
		env := fpBody[actors.SpaceEnvelope](t, b.apply(b.agent, &actors.CreateSpace{SpaceID: fpID(seed), ExpectedBookmarkRevision: revision, Name: name, Type: typ},
			fpIdem(seed, "/v1/bookmark-spaces"), time.Second))
		revision = env.BookmarkRevision
		if typ == actors.SpaceBitcoin {
			bookmarkSpaces = append(bookmarkSpaces, spaceRef{env.Space.ID, env.Space.Version})
		}
	}
	sheetSpace := fpID(fmt.Sprintf("%s/space/%d", id, fpSpaces-1))

	// Bookmark cards: each create names the Space version the previous
	// create returned.
	for si, s := range bookmarkSpaces {
		version := s.version
		for j := range fpCardsPerSpace {
			seed := fmt.Sprintf("%s/space/%d/card/%d", id, si, j)
			name, note, color := fpText(seed+"/name", 20, 40), fpText(seed+"/note", 20, 40), actors.ColorKeys[(si+j)%len(actors.ColorKeys)]
			env := fpBody[actors.BookmarkEnvelope](t, b.apply(b.agent, &actors.CreateBookmarkCard{CardID: fpID(seed), SpaceID: s.id, ExpectedSpaceVersion: version,
				Address: fpAddress(t, seed), CardFields: actors.CardFields{Name: &name, Note: &note, ColorKey: &color}},
				fpIdem(seed, "/v1/bookmark-spaces/"+s.id+"/cards"), time.Second))
			version = env.Space.Version
		}
	}

	// The Sheet: read it for its revision, then fill all 1,000 slots with
	// 100-row PATCHes (the first also renames the fifth heading), each
	// naming the revision the previous one returned, under the spec's
	// Sheet-write budget (30 writes a minute) with 2 s between writes.
	sheet := fpBody[actors.SheetView](t, b.query(actors.SheetQuery{SpaceID: sheetSpace, Offset: 0, Limit: 100}))
	sheetRevision := sheet.Revision
	for start := 0; start < fpSheetRows; start += fpSheetPatchRows {
		p := &actors.PatchSheet{SheetWrite: actors.SheetWrite{SpaceID: sheetSpace, ExpectedRevision: sheetRevision, EnforceBudget: true}}
		if start == 0 {
			p.Headers = []string{"Address", "Blockchain", "Transaction ID", "Date", fpSheetFifthTitle}
		}
		for i := start; i < start+fpSheetPatchRows; i++ {
			p.Rows = append(p.Rows, actors.SheetRowInput{Index: i, Cells: fpSheetCells(t, id, i)})
		}
		patched := fpBody[actors.SheetPatchedView](t, b.apply(b.agent, p, nil, 2*time.Second))
		if len(patched.UpdatedRows) != fpSheetRowsPerPatch(start) {
			t.Fatalf("%s: PATCH at %d updated %d rows", id, start, len(patched.UpdatedRows))
		}
		sheetRevision = patched.Revision
	}

	// Notes: 20 per Account card, each on a transaction that involves the
	// card's address and two other addresses (counterparty and change), as
	// the edge verified it upstream.
	for n := range fpNotes {
		card := n / fpNotesPerCard
		seed := fmt.Sprintf("%s/note/%d", id, n)
		b.apply(b.agent, &actors.PutNote{
			TxID:      fpTxID(seed),
			Text:      fpText(seed, 20, 40),
			Addresses: []string{fpAddress(t, seed+"/counterparty"), cardAddresses[card], fpAddress(t, seed+"/change")},
			Eligible:  n%3 == 0, // extended plan: older transactions may be noted too
		}, nil, time.Second)
	}
	return b.a
}

func fpSheetRowsPerPatch(start int) int { return min(fpSheetPatchRows, fpSheetRows-start) }

// fpServeReads runs, as the agent, the reads an agent makes of a full
// account: /me, the lists, every Space and its cards, the Sheet's dense,
// sparse and filtered pages, notes and the change feed. Reads may build
// derived state (the Sheet's Address + Blockchain index), which a serving
// node then holds.
func fpServeReads(t testing.TB, a *actors.Account, cred actors.Credential) {
	t.Helper()
	run := func(q actors.Query) actors.Result {
		t.Helper()
		res := actors.RunQuery(a, cred, q)
		if _, err := res.Outcome(); err != nil {
			t.Fatalf("%s: %T: %v", a.ID, q, err)
		}
		return res
	}
	run(actors.MeQuery{})
	run(actors.ListPortfolioQuery{})
	run(actors.HistoryCardsQuery{})
	txids := make([]string, 0, len(a.Notes))
	for _, n := range a.Notes {
		txids = append(txids, n.TxID)
	}
	run(actors.NotesBatchQuery{TxIDs: txids})
	run(actors.EventsQuery{FeedCursor: actors.FeedCursor{Limit: 100}})
	for _, s := range fpBody[actors.SpaceListView](t, run(actors.ListSpacesQuery{})).Spaces {
		run(actors.GetSpaceQuery{SpaceID: s.ID})
		if s.Type != actors.SpaceSheet {
			run(actors.ListBookmarksQuery{SpaceID: s.ID})
			continue
		}
		var first []string
		for _, sparse := range []bool{false, true} {
			for offset := 0; ; {
				v := fpBody[actors.SheetView](t, run(actors.SheetQuery{SpaceID: s.ID, Offset: offset, Limit: 100, Sparse: sparse}))
				if first == nil && len(v.Rows) > 0 {
					first = v.Rows[0].Cells
				}
				if v.NextOffset == nil {
					break
				}
				offset = *v.NextOffset
			}
		}
		if first != nil {
			address, chainName := first[0], first[1]
			run(actors.SheetQuery{SpaceID: s.ID, Address: &address, Chain: &chainName})
			run(actors.SheetQuery{SpaceID: s.ID, Address: &address})
		}
	}
}

// fpSnapshot writes encoded accounts as one snapshot, as a node does.
func fpSnapshot(t testing.TB, encoded [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw, err := NewSnapshotWriter(&buf)
	if err != nil {
		t.Fatalf("NewSnapshotWriter: %v", err)
	}
	for _, e := range encoded {
		if err := sw.WriteAccount(e); err != nil {
			t.Fatalf("WriteAccount: %v", err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatalf("snapshot Close: %v", err)
	}
	return buf.Bytes()
}

func fpEncode(t testing.TB, a *actors.Account) []byte {
	t.Helper()
	e, err := EncodeAccount(a)
	if err != nil {
		t.Fatalf("EncodeAccount(%s): %v", a.ID, err)
	}
	return e
}

func TestFullExtendedAccountIsFull(t *testing.T) {
	const id = "acctfootprint001"
	a := buildFullExtendedAccount(t, id)
	fpAssertFull(t, "built", a)

	// The restored account (what variant (b) of the benchmark measures) is
	// the same account.
	encoded := fpEncode(t, a)
	restored, err := ReadSnapshot(bytes.NewReader(fpSnapshot(t, [][]byte{encoded})))
	if err != nil || len(restored) != 1 {
		t.Fatalf("ReadSnapshot: %d accounts, %v", len(restored), err)
	}
	fpAssertFull(t, "restored", restored[0])
	fpServeReads(t, restored[0], fpAgentCredential(id))
	if again := fpEncode(t, restored[0]); !bytes.Equal(again, encoded) {
		t.Fatalf("restored account encodes differently (%d bytes, built %d)", len(again), len(encoded))
	}
	t.Logf("snapshot encoding: %d bytes; seq %d, %d audit events, %d idempotency records, %d Sheet writes in the budget window",
		len(encoded), a.Seq, len(a.Audit), a.Idempotency.Len(), len(a.SheetWrites))
}

// fpAssertFull checks that a really is a full extended-plan account, so
// the footprint benchmark cannot silently measure something smaller.
func fpAssertFull(t *testing.T, what string, a *actors.Account) {
	t.Helper()
	if a.Plan != actors.PlanExtended || a.Deleted {
		t.Fatalf("%s: plan %v deleted %v, want a live extended account", what, a.Plan, a.Deleted)
	}
	if len(a.Keys) != 1 || len(a.Sessions) != 1 {
		t.Fatalf("%s: %d keys, %d sessions, want 1 and 1", what, len(a.Keys), len(a.Sessions))
	}

	portfolio := map[string]bool{}
	if len(a.Portfolio) != fpPortfolioCards {
		t.Fatalf("%s: %d Account cards, want %d", what, len(a.Portfolio), fpPortfolioCards)
	}
	for _, c := range a.Portfolio {
		if c.Grant != actors.LevelWrite || portfolio[c.Address] {
			t.Fatalf("%s: Account card %+v (grant or duplicate address)", what, c)
		}
		fpAssertCardText(t, what, c)
		portfolio[c.Address] = true
	}

	if len(a.Spaces) != fpSpaces {
		t.Fatalf("%s: %d Spaces, want %d", what, len(a.Spaces), fpSpaces)
	}
	if a.Spaces[0].Type != actors.SpaceBitcoin || a.Spaces[0].Name != "Bitcoin" {
		t.Fatalf("%s: first Space %q is %s, want the account's Bitcoin Space", what, a.Spaces[0].Name, a.Spaces[0].Type)
	}
	bookmarkSpaces, bookmarkCards, sheets := 0, 0, 0
	for _, s := range a.Spaces {
		if s.Grant != actors.LevelWrite {
			t.Fatalf("%s: Space %q has grant %v", what, s.Name, s.Grant)
		}
		switch s.Type {
		case actors.SpaceBitcoin:
			bookmarkSpaces++
			if s.Sheet != nil || len(s.Cards) != fpCardsPerSpace {
				t.Fatalf("%s: bookmark Space %q holds %d cards (sheet %v), want %d", what, s.Name, len(s.Cards), s.Sheet != nil, fpCardsPerSpace)
			}
			seen := map[string]bool{}
			for _, c := range s.Cards {
				if seen[c.Address] {
					t.Fatalf("%s: Space %q holds %s twice", what, s.Name, c.Address)
				}
				seen[c.Address] = true
				fpAssertCardText(t, what, c)
				bookmarkCards++
			}
		case actors.SpaceSheet:
			sheets++
			fpAssertFullSheet(t, what, s)
		default:
			t.Fatalf("%s: Space %q has type %s", what, s.Name, s.Type)
		}
	}
	if bookmarkSpaces != fpBookmarkSpaces || bookmarkCards != fpBookmarkSpaces*fpCardsPerSpace || sheets != 1 {
		t.Fatalf("%s: %d bookmark Spaces with %d cards and %d Sheet Spaces, want %d, %d and 1",
			what, bookmarkSpaces, bookmarkCards, sheets, fpBookmarkSpaces, fpBookmarkSpaces*fpCardsPerSpace)
	}

	if len(a.Notes) != fpNotes {
		t.Fatalf("%s: %d notes, want %d", what, len(a.Notes), fpNotes)
	}
	txids := map[string]bool{}
	for _, n := range a.Notes {
		involved := 0
		for _, addr := range n.Addresses {
			if portfolio[addr] {
				involved++
			}
		}
		chars := utf8.RuneCountInString(n.Text)
		if involved != 1 || len(n.Addresses) != 3 || chars < 20 || chars > 40 || !actors.ValidTxID(n.TxID) || txids[n.TxID] {
			t.Fatalf("%s: note %+v (involves %d Account cards, %d characters)", what, n, involved, chars)
		}
		txids[n.TxID] = true
	}
}

func fpAssertCardText(t *testing.T, what string, c *actors.Card) {
	t.Helper()
	for _, s := range []string{c.Name, c.Note} {
		if n := utf8.RuneCountInString(s); n < 20 || n > 40 {
			t.Fatalf("%s: card %s has name %q and note %q, want 20 to 40 characters each", what, c.ID, c.Name, c.Note)
		}
	}
}

func fpAssertFullSheet(t *testing.T, what string, s *actors.Space) {
	t.Helper()
	sheet := s.Sheet
	if sheet == nil || len(s.Cards) != 0 {
		t.Fatalf("%s: Sheet Space %q: sheet %v, %d cards", what, s.Name, sheet != nil, len(s.Cards))
	}
	want := [fpSheetColumns]string{"Address", "Blockchain", "Transaction ID", "Date", fpSheetFifthTitle}
	if sheet.Headers != want {
		t.Fatalf("%s: Sheet headers %q, want %q", what, sheet.Headers, want)
	}
	if len(sheet.Rows) != fpSheetRows {
		t.Fatalf("%s: Sheet stores %d rows, want all %d", what, len(sheet.Rows), fpSheetRows)
	}
	if patches := int64(fpSheetRows / fpSheetPatchRows); sheet.Revision != patches {
		t.Fatalf("%s: Sheet revision %d, want %d (one per PATCH)", what, sheet.Revision, patches)
	}
	keys := map[[2]string]bool{}
	for i, r := range sheet.Rows {
		if r.Index != i {
			t.Fatalf("%s: Sheet row %d sits in slot %d", what, i, r.Index)
		}
		for c, cell := range r.Cells {
			if utf8.RuneCountInString(cell) != fpSheetCellChars {
				t.Fatalf("%s: Sheet row %d cell %d is %q (%d characters), want %d", what, i, c, cell, utf8.RuneCountInString(cell), fpSheetCellChars)
			}
		}
		k := [2]string{r.Cells[0], r.Cells[1]}
		if keys[k] {
			t.Fatalf("%s: Sheet row %d repeats Address + Blockchain %q", what, i, k)
		}
		keys[k] = true
	}
}

// fpHeap is the live heap after a full collection.
func fpHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func fpPerAccount(after, before uint64, n int) float64 {
	return (float64(after) - float64(before)) / float64(n)
}

// fpLive keeps the accounts of the last footprint run reachable, so that
// -memprofile (written after the benchmarks, after a GC) shows them.
var fpLive [][]*actors.Account

func fpAccountIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fpID(fmt.Sprintf("account/%d", i))
	}
	return ids
}

// BenchmarkFullExtendedAccountFootprint measures, once whatever b.N, the
// live heap of fpFootprintAccts full extended-plan accounts and compares it
// with their snapshot encoding, for (a) accounts as built by Apply and (b)
// accounts restored from a snapshot, both after serving the usual reads
// (which build the Sheet index); "restored-cold" is (b) before any read.
func BenchmarkFullExtendedAccountFootprint(b *testing.B) {
	fpLive = nil
	ids := fpAccountIDs(fpFootprintAccts)
	n := len(ids)

	// (a) As built. Building allocates much garbage (commands, results,
	// replaced slices); the collections before reading the heap leave
	// only what the accounts keep reachable.
	built := make([]*actors.Account, 0, n)
	before := fpHeap()
	for _, id := range ids {
		a := buildFullExtendedAccount(b, id)
		fpServeReads(b, a, fpAgentCredential(id))
		built = append(built, a)
	}
	after := fpHeap()
	heapBuilt := fpPerAccount(after, before, n)

	encoded := make([][]byte, n)
	snapshotBytes := 0
	for i, a := range built {
		encoded[i] = fpEncode(b, a)
		snapshotBytes += len(encoded[i])
	}
	perSnapshot := float64(snapshotBytes) / float64(n)
	snap := fpSnapshot(b, encoded)
	encoded = nil

	// (b) Restored from the snapshot, as a node restores it; the snapshot
	// bytes are live in both readings, so only the accounts count.
	before = fpHeap()
	restored, err := ReadSnapshot(bytes.NewReader(snap))
	if err != nil || len(restored) != n {
		b.Fatalf("ReadSnapshot: %d accounts, %v", len(restored), err)
	}
	cold := fpHeap()
	for i, a := range restored {
		fpServeReads(b, a, fpAgentCredential(ids[i]))
	}
	warm := fpHeap()
	heapRestoredCold := fpPerAccount(cold, before, n)
	heapRestored := fpPerAccount(warm, before, n)
	runtime.KeepAlive(snap)
	runtime.KeepAlive(built)
	runtime.KeepAlive(restored)
	fpLive = [][]*actors.Account{built, restored}

	b.ReportMetric(heapBuilt, "heap-B/account")
	b.ReportMetric(perSnapshot, "snapshot-B/account")
	b.ReportMetric(heapBuilt/perSnapshot, "heap/snapshot")
	b.ReportMetric(heapRestored, "heap-B/account-restored")
	b.ReportMetric(heapRestored/perSnapshot, "heap/snapshot-restored")
	b.ReportMetric(heapRestoredCold, "heap-B/account-restored-cold")
	b.ReportMetric(heapRestoredCold/perSnapshot, "heap/snapshot-restored-cold")
}

// BenchmarkFullExtendedAccountHeapBreakdown attributes the heap of full
// accounts to their parts: it releases one part at a time from every
// account and reads how much heap each release frees, next to the JSON
// bytes that part takes in the snapshot. "rest" is what is left: the
// Account struct, keys, sessions, Space structs and Sheet headers.
func BenchmarkFullExtendedAccountHeapBreakdown(b *testing.B) {
	ids := fpAccountIDs(fpFootprintAccts)
	build := func() []*actors.Account {
		accounts := make([]*actors.Account, len(ids))
		for i, id := range ids {
			accounts[i] = buildFullExtendedAccount(b, id)
			fpServeReads(b, accounts[i], fpAgentCredential(id))
		}
		return accounts
	}
	restore := func() []*actors.Account {
		encoded := make([][]byte, len(ids))
		for i, id := range ids {
			encoded[i] = fpEncode(b, buildFullExtendedAccount(b, id))
		}
		accounts, err := ReadSnapshot(bytes.NewReader(fpSnapshot(b, encoded)))
		if err != nil {
			b.Fatal(err)
		}
		for i, a := range accounts {
			fpServeReads(b, a, fpAgentCredential(ids[i]))
		}
		return accounts
	}
	for _, variant := range []struct {
		name string
		make func() []*actors.Account
	}{{"built", build}, {"restored", restore}} {
		b.Run(variant.name, func(b *testing.B) {
			accounts := variant.make()
			fpBreakdown(b, accounts)
		})
	}
}

func fpSheetSpace(a *actors.Account) *actors.Space {
	for _, s := range a.Spaces {
		if s.Sheet != nil {
			return s
		}
	}
	return nil
}

func fpBreakdown(b *testing.B, accounts []*actors.Account) {
	n := len(accounts)
	jsonLen := func(v any) int {
		e, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return len(e)
	}
	total := 0
	for _, a := range accounts {
		total += len(fpEncode(b, a))
	}
	parts := []struct {
		name    string
		snap    func(a *actors.Account) int
		release func(a *actors.Account)
	}{
		// The index holds row pointers only: a Sheet rebuilt from its
		// exported fields keeps the rows and drops the index.
		{"sheet-index", func(*actors.Account) int { return 0 }, func(a *actors.Account) {
			s := fpSheetSpace(a)
			s.Sheet = &actors.Sheet{Headers: s.Sheet.Headers, Revision: s.Sheet.Revision, Rows: s.Sheet.Rows}
		}},
		{"sheet-rows", func(a *actors.Account) int { return jsonLen(fpSheetSpace(a).Sheet.Rows) }, func(a *actors.Account) { fpSheetSpace(a).Sheet.Rows = nil }},
		{"audit", func(a *actors.Account) int { return jsonLen(a.Audit) }, func(a *actors.Account) { a.Audit = nil }},
		{"idempotency", func(a *actors.Account) int { return jsonLen(a.Idempotency) }, func(a *actors.Account) { a.Idempotency = actors.IdempotencyRecords{} }},
		{"notes", func(a *actors.Account) int { return jsonLen(a.Notes) }, func(a *actors.Account) { a.Notes = nil }},
		{"bookmark-cards", func(a *actors.Account) int {
			size := 0
			for _, s := range a.Spaces {
				size += jsonLen(s.Cards)
			}
			return size
		}, func(a *actors.Account) {
			for _, s := range a.Spaces {
				s.Cards = nil
			}
		}},
		{"portfolio", func(a *actors.Account) int { return jsonLen(a.Portfolio) }, func(a *actors.Account) { a.Portfolio = nil }},
	}
	snapParts := 0
	heap := fpHeap()
	start := heap
	for _, p := range parts {
		size := 0
		for _, a := range accounts {
			size += p.snap(a)
			p.release(a)
		}
		snapParts += size
		now := fpHeap()
		b.ReportMetric(fpPerAccount(heap, now, n), p.name+"-heap-B/account")
		b.ReportMetric(float64(size)/float64(n), p.name+"-snap-B/account")
		heap = now
	}
	// Release the accounts themselves (the caller's slice may still be
	// reachable, its elements no longer are).
	for i := range accounts {
		accounts[i] = nil
	}
	end := fpHeap()
	b.ReportMetric(fpPerAccount(heap, end, n), "rest-heap-B/account")
	b.ReportMetric(float64(total-snapParts)/float64(n), "rest-snap-B/account")
	b.ReportMetric(fpPerAccount(start, end, n), "total-heap-B/account")
	b.ReportMetric(float64(total)/float64(n), "total-snap-B/account")
}

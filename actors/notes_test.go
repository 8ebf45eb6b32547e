package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Tests of the transaction-note rules (PutNote, DeleteNote) and the History
// queries. The edge verifies a transaction against the upstream and puts
// what it found (the addresses, whether a base-plan account may start a
// note on it) into the command; these tests drive the rules with those
// facts directly.

// noteTxID returns a canonical transaction ID (64 lower-case hex) for n.
func noteTxID(n int) string { return fmt.Sprintf("%064x", 0xabc000+n) }

// notePut is a PutNote the edge would build.
func notePut(txid, text string, eligible bool, addresses ...string) *PutNote {
	return &PutNote{TxID: txid, Text: text, Addresses: addresses, Eligible: eligible}
}

// noteViewOf returns the NoteView of a successful note write.
func noteViewOf(t *testing.T, res Result) NoteView {
	t.Helper()
	v, isView := res.Body.(NoteView)
	if !isView {
		t.Fatalf("note write body is %T, want NoteView", res.Body)
	}
	return v
}

// noteStored returns the stored note of txid, or nil.
func (ta *testAccount) noteStored(txid string) *Note {
	_, n := ta.a.note(txid)
	return n
}

// noteBatch runs NotesBatchQuery and returns the txids of the notes the
// credential may read, in answer order.
func (ta *testAccount) noteBatch(cred Credential, txids ...string) []string {
	ta.t.Helper()
	v := ta.mustQuery(cred, NotesBatchQuery{TxIDs: txids}).Body.(NotesView)
	if v.Notes == nil {
		ta.t.Fatalf("NotesBatchQuery returned a nil notes list (encodes as null)")
	}
	ids := []string{}
	for _, n := range v.Notes {
		ids = append(ids, n.TxID)
	}
	return ids
}

// noteFixture is a base-plan account with a write key, a read key and
// three Account cards: A and B created by the write key (grant write), H
// created by the owner (grant none, hidden from keys).
type noteFixture struct {
	*testAccount
	w, r        Principal
	cardA       CardView
	cardB       CardView
	cardH       CardView
	addrA       string
	addrB       string
	addrH       string
	addrOutside string // no card holds it
}

func newNoteFixture(t *testing.T, plan Plan) *noteFixture {
	t.Helper()
	ta := newTestAccount(t, plan)
	f := &noteFixture{testAccount: ta, addrA: addrs[0], addrB: addrs[1], addrH: addrs[2], addrOutside: addrs[3]}
	f.w = ta.addKey(LevelWrite)
	f.r = ta.addKey(LevelRead)
	f.cardA = ta.createCard(f.w, f.addrA)
	f.cardB = ta.createCard(f.w, f.addrB)
	f.cardH = ta.createCard(ta.owner, f.addrH)
	return f
}

func TestPutNoteSavesNoteAndView(t *testing.T) {
	f := newNoteFixture(t, PlanBase)
	tx := noteTxID(1)
	res := f.mustOK(f.w, notePut(tx, "rent for March", true, f.addrA, f.addrOutside))
	if res.Status != 200 {
		t.Fatalf("status %d, want 200", res.Status)
	}
	v := noteViewOf(t, res)
	if v.TxID != tx || v.Note != "rent for March" || v.UpdatedAt != formatTime(f.at) {
		t.Fatalf("view %+v, want txid %s note %q updated_at %s", v, tx, "rent for March", formatTime(f.at))
	}
	n := f.noteStored(tx)
	if n == nil || n.Text != "rent for March" || n.UpdatedAt != f.at {
		t.Fatalf("stored note %+v", n)
	}
	want := []string{f.addrA, f.addrOutside}
	slices.Sort(want)
	if !slices.Equal(n.Addresses, want) {
		t.Fatalf("stored addresses %v, want every address of the transaction %v", n.Addresses, want)
	}
	// The JSON shape the API shows.
	b := bodyJSON(t, v)
	if !strings.Contains(b, `"txid":"`+tx+`"`) || !strings.Contains(b, `"note":"rent for March"`) || !strings.Contains(b, `"updated_at":`) {
		t.Fatalf("note view JSON %s", b)
	}
}

func TestPutNoteReadOnlyKeyIsForbidden(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	// The card is write; the key's read capability is the ceiling.
	err := f.mustFail(CodeForbidden, f.r, notePut(noteTxID(1), "x", true, f.addrA))
	if err.Error() != errReadOnlyKey.Error() {
		t.Fatalf("error %v, want the read-only key error", err)
	}
	// Checked before anything else: even a malformed write is refused as
	// a write by a read-only key.
	f.mustFail(CodeForbidden, f.r, notePut("zz", "", false))
}

func TestPutNoteTxIDShape(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	good := noteTxID(7)
	for name, txid := range map[string]string{
		"empty":      "",
		"63 chars":   good[:63],
		"65 chars":   good + "0",
		"upper case": strings.ToUpper(good[:60]) + "ABCD",
		"non-hex":    good[:63] + "g",
		"spaces":     " " + good[1:],
		"0x prefix":  "0x" + good[2:],
		"multibyte":  good[:62] + "é",
	} {
		t.Run(name, func(t *testing.T) {
			f.t = t
			f.mustFail(CodeValidation, f.w, notePut(txid, "fine", true, f.addrA))
		})
	}
	f.t = t
	f.mustOK(f.w, notePut(good, "fine", true, f.addrA))
}

func TestPutNoteLengthInCodePoints(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	cases := []struct {
		name string
		text string
		ok   bool
	}{
		{"one char", "a", true},
		{"50 ascii", strings.Repeat("a", 50), true},
		{"50 two-byte", strings.Repeat("é", 50), true},
		{"50 four-byte", strings.Repeat("😀", 50), true},
		{"50 mixed", strings.Repeat("a€😀", 16) + "ab", true},
		{"51 ascii", strings.Repeat("a", 51), false},
		{"51 four-byte", strings.Repeat("😀", 51), false},
		{"empty", "", false},
		{"invalid utf-8", "ab\xffcd", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.t = t
			tx := noteTxID(100 + i)
			if c.ok {
				f.mustOK(f.w, notePut(tx, c.text, true, f.addrA))
				if n := f.noteStored(tx); n == nil || n.Text != c.text {
					t.Fatalf("stored %+v, want text %q", n, c.text)
				}
				return
			}
			f.mustFail(CodeValidation, f.w, notePut(tx, c.text, true, f.addrA))
		})
	}
	f.t = t
	// Replacing an existing note is held to the same bound.
	tx := noteTxID(100)
	f.mustFail(CodeValidation, f.w, notePut(tx, strings.Repeat("ü", 51), true, f.addrA))
	f.mustFail(CodeValidation, f.w, notePut(tx, "", true, f.addrA))
}

func TestPutNoteNeedsAnInvolvedAccountCard(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	// Nothing in the transaction belongs to an Account card.
	f.mustFail(CodeNotFound, f.w, notePut(noteTxID(1), "x", true, f.addrOutside, addrs[4]))
	f.mustFail(CodeNotFound, f.w, notePut(noteTxID(1), "x", true))
	// The owner is held to the same rule: a note belongs to a card's
	// History.
	f.mustFail(CodeNotFound, f.owner, notePut(noteTxID(1), "x", true, f.addrOutside))
	// A card the key cannot see is absent to it.
	err := f.mustFail(CodeNotFound, f.w, notePut(noteTxID(2), "x", true, f.addrH))
	mustNotMention(t, "hidden-card error", err.Error(), f.addrH, f.cardH.ID)
	// One involved card hidden, another writable: still refused, and
	// refused the same way, so the key learns nothing of the hidden card.
	f.mustFail(CodeNotFound, f.w, notePut(noteTxID(3), "x", true, f.addrA, f.addrH))
	// The owner writes on the hidden card.
	f.mustOK(f.owner, notePut(noteTxID(2), "owner", false, f.addrH))
}

func TestPutNoteNeedsWriteOnEveryInvolvedCard(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	tx := noteTxID(1)
	f.setGrant(f.cardB.ID, LevelRead)
	// Single read card: forbidden, not hidden.
	f.mustFail(CodeForbidden, f.w, notePut(tx, "x", true, f.addrB))
	// Two cards, one write and one read: forbidden, in either order.
	f.mustFail(CodeForbidden, f.w, notePut(tx, "x", true, f.addrA, f.addrB))
	f.mustFail(CodeForbidden, f.w, notePut(tx, "x", true, f.addrB, f.addrA, f.addrOutside))
	// Write on both: allowed.
	f.setGrant(f.cardB.ID, LevelWrite)
	f.mustOK(f.w, notePut(tx, "x", true, f.addrB, f.addrA, f.addrOutside))
	// The grant is re-checked on every write: edit after B drops to read.
	f.setGrant(f.cardB.ID, LevelRead)
	f.mustFail(CodeForbidden, f.w, notePut(tx, "edit", true, f.addrA, f.addrB))
	if n := f.noteStored(tx); n.Text != "x" {
		t.Fatalf("refused edit changed the note to %q", n.Text)
	}
	// The owner needs no grant.
	f.mustOK(f.owner, notePut(tx, "owner edit", true, f.addrA, f.addrB))
}

func TestPutNoteBasePlanEligibility(t *testing.T) {
	f := newNoteFixture(t, PlanBase)
	// A new note on the base plan needs an eligible transaction, for keys
	// and the owner alike.
	f.mustFail(CodeForbidden, f.w, notePut(noteTxID(1), "old", false, f.addrA))
	f.mustFail(CodeForbidden, f.owner, notePut(noteTxID(1), "old", false, f.addrA))
	f.mustOK(f.w, notePut(noteTxID(1), "recent", true, f.addrA))

	// Editing an existing note needs no eligibility: a saved note outlives
	// the window.
	f.mustOK(f.w, notePut(noteTxID(1), "edited after it aged out", false, f.addrA))
	if n := f.noteStored(noteTxID(1)); n == nil || n.Text != "edited after it aged out" {
		t.Fatalf("edit on base plan not saved: %+v", n)
	}

	// The extended plan needs none.
	e := newNoteFixture(t, PlanExtended)
	e.mustOK(e.w, notePut(noteTxID(2), "any age", false, e.addrA))
	e.mustOK(e.owner, notePut(noteTxID(3), "any age", false, e.addrA))
}

func TestNoteSurvivesDowngrade(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	old := noteTxID(1)
	f.mustOK(f.w, notePut(old, "written on extended", false, f.addrA))
	f.mustOK(f.owner, &SetPlan{Plan: PlanBase})

	// Still readable by the key and the owner.
	if got := f.noteBatch(f.keyCred(f.w), old); !slices.Equal(got, []string{old}) {
		t.Fatalf("after downgrade the key reads %v, want the note", got)
	}
	if got := f.noteBatch(f.ownerCred(), old); !slices.Equal(got, []string{old}) {
		t.Fatalf("after downgrade the owner reads %v, want the note", got)
	}
	// Editable by the key (grants permit) and the owner without
	// eligibility, and it stays one note.
	f.mustOK(f.w, notePut(old, "edited by key", false, f.addrA))
	f.mustOK(f.owner, notePut(old, "edited by owner", false, f.addrA))
	if len(f.a.Notes) != 1 || f.a.Notes[0].Text != "edited by owner" {
		t.Fatalf("notes after edits: %+v", f.a.Notes)
	}
	// A new old note is refused on base.
	f.mustFail(CodeForbidden, f.w, notePut(noteTxID(2), "new", false, f.addrA))
	// Deletable by the owner.
	f.mustOK(f.owner, &DeleteNote{TxID: old})
	if len(f.a.Notes) != 0 {
		t.Fatalf("notes after delete: %+v", f.a.Notes)
	}
}

func TestPutNoteReplaceKeepsOneNote(t *testing.T) {
	f := newNoteFixture(t, PlanBase)
	tx := noteTxID(1)
	f.mustOK(f.w, notePut(tx, "first", true, f.addrA))
	first := f.noteStored(tx).UpdatedAt
	f.mustOK(f.w, notePut(tx, "second", true, f.addrA, f.addrB))
	f.mustOK(f.owner, notePut(tx, "third", false, f.addrB, f.addrA))
	if len(f.a.Notes) != 1 {
		t.Fatalf("%d notes after three writes of one txid, want 1: %+v", len(f.a.Notes), f.a.Notes)
	}
	n := f.a.Notes[0]
	want := []string{f.addrA, f.addrB}
	slices.Sort(want)
	if n.TxID != tx || n.Text != "third" || n.UpdatedAt != f.at || n.UpdatedAt <= first || !slices.Equal(n.Addresses, want) {
		t.Fatalf("note after replace %+v", n)
	}
	// Another txid is another note.
	f.mustOK(f.w, notePut(noteTxID(2), "other", true, f.addrA))
	if len(f.a.Notes) != 2 {
		t.Fatalf("%d notes, want 2", len(f.a.Notes))
	}
}

func TestPutNoteAccountLimit(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	// Fill to one below the limit directly (the rules are tested below).
	for i := range notesMax - 1 {
		f.a.Notes = append(f.a.Notes, &Note{TxID: noteTxID(10_000 + i), Text: "n", Addresses: []string{f.addrA}, UpdatedAt: f.at})
	}
	f.mustOK(f.w, notePut(noteTxID(1), "the last one", false, f.addrA))
	if len(f.a.Notes) != notesMax {
		t.Fatalf("%d notes, want %d", len(f.a.Notes), notesMax)
	}
	f.mustFail(CodeConflict, f.w, notePut(noteTxID(2), "one too many", false, f.addrA))
	f.mustFail(CodeConflict, f.owner, notePut(noteTxID(2), "one too many", false, f.addrA))
	// Replacing at the limit is not a new note.
	f.mustOK(f.w, notePut(noteTxID(1), "replaced at the limit", false, f.addrA))
	f.mustOK(f.w, notePut(noteTxID(10_000), "replaced too", false, f.addrA))
	// A delete makes room.
	f.mustOK(f.w, &DeleteNote{TxID: noteTxID(10_001)})
	f.mustOK(f.w, notePut(noteTxID(2), "fits now", false, f.addrA))
	if len(f.a.Notes) != notesMax {
		t.Fatalf("%d notes, want %d", len(f.a.Notes), notesMax)
	}
}

func TestDeleteNoteRules(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	txA, txAB, txH := noteTxID(1), noteTxID(2), noteTxID(3)
	f.mustOK(f.w, notePut(txA, "a", true, f.addrA))
	f.mustOK(f.w, notePut(txAB, "ab", true, f.addrA, f.addrB))
	f.mustOK(f.owner, notePut(txH, "hidden", true, f.addrH))

	// Absent and hidden notes are 404 alike.
	f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: noteTxID(99)})
	err := f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: txH})
	absent := f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: noteTxID(98)})
	if err.Error() != absent.Error() {
		t.Fatalf("hidden note error %q differs from the absent one %q", err, absent)
	}
	// A read-only key is refused first, whatever the note.
	f.mustFail(CodeForbidden, f.r, &DeleteNote{TxID: txA})
	f.mustFail(CodeForbidden, f.r, &DeleteNote{TxID: noteTxID(99)})
	// Read on one involved card: 403.
	f.setGrant(f.cardB.ID, LevelRead)
	f.mustFail(CodeForbidden, f.w, &DeleteNote{TxID: txAB})
	// None on it: hidden.
	f.setGrant(f.cardB.ID, LevelNone)
	f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: txAB})

	// Write on every involved card: deleted.
	res := f.mustOK(f.w, &DeleteNote{TxID: txA})
	if b := bodyJSON(t, res.Body); res.Status != 200 || b != `{"deleted":true}` {
		t.Fatalf("delete answered %d %s, want 200 {\"deleted\":true}", res.Status, b)
	}
	if f.noteStored(txA) != nil {
		t.Fatalf("note still stored after delete")
	}
	f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: txA})

	// The owner deletes any note, grants or not.
	f.mustOK(f.owner, &DeleteNote{TxID: txAB})
	f.mustOK(f.owner, &DeleteNote{TxID: txH})
	if len(f.a.Notes) != 0 {
		t.Fatalf("notes left: %+v", f.a.Notes)
	}
	f.mustFail(CodeNotFound, f.owner, &DeleteNote{TxID: txH})
}

func TestDeleteNoteAfterCardsDeleted(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	tx := noteTxID(1)
	f.mustOK(f.w, notePut(tx, "orphan to be", true, f.addrA))
	f.mustOK(f.w, &DeletePortfolioCard{CardID: f.cardA.ID, ExpectedVersion: versionString(f.card(f.cardA.ID).Version)})
	// No involved card remains: no grant covers the note, so keys cannot
	// see it, but the owner still can and may delete it.
	f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: tx})
	if got := f.noteBatch(f.keyCred(f.w), tx); len(got) != 0 {
		t.Fatalf("key reads an orphaned note: %v", got)
	}
	if got := f.noteBatch(f.ownerCred(), tx); !slices.Equal(got, []string{tx}) {
		t.Fatalf("owner reads %v, want the orphaned note", got)
	}
	f.mustOK(f.owner, &DeleteNote{TxID: tx})
}

func TestNotesBatchVisibility(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	txA, txAB, txH, txAH := noteTxID(1), noteTxID(2), noteTxID(3), noteTxID(4)
	f.mustOK(f.w, notePut(txA, "a", true, f.addrA))
	f.mustOK(f.w, notePut(txAB, "ab", true, f.addrA, f.addrB, f.addrOutside))
	f.mustOK(f.owner, notePut(txH, "h", true, f.addrH))
	f.mustOK(f.owner, notePut(txAH, "ah", true, f.addrA, f.addrH))
	all := []string{txA, txAB, txH, txAH, noteTxID(99)}
	w, r, owner := f.keyCred(f.w), f.keyCred(f.r), f.ownerCred()

	check := func(what string, cred Credential, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if got := f.noteBatch(cred, all...); !slices.Equal(got, want) {
			t.Fatalf("%s: batch returns %v, want %v", what, got, want)
		}
	}
	// Visible only when every involved card is readable; answer order is
	// request order; an unknown txid is left out.
	check("write key", w, txA, txAB)
	check("read key", r, txA, txAB)
	check("owner", owner, txA, txAB, txH, txAH)
	// The notes themselves.
	v := f.mustQuery(w, NotesBatchQuery{TxIDs: []string{txAB}}).Body.(NotesView)
	if len(v.Notes) != 1 || v.Notes[0] != (NoteView{TxID: txAB, Note: "ab", UpdatedAt: formatTime(f.noteStored(txAB).UpdatedAt)}) {
		t.Fatalf("batch view %+v", v.Notes)
	}

	// Read on B is enough to read.
	f.setGrant(f.cardB.ID, LevelRead)
	check("B read", w, txA, txAB)
	// None on B hides the note that involves it.
	f.setGrant(f.cardB.ID, LevelNone)
	check("B none, write key", w, txA)
	check("B none, read key", r, txA)
	check("B none, owner", owner, txA, txAB, txH, txAH)
	// Granting H reveals the notes that involve it.
	f.setGrant(f.cardH.ID, LevelRead)
	check("H read", w, txA, txH, txAH)

	// A card deleted later: the note is judged on the involved cards that
	// remain. B (none) is deleted, so txAB now needs only A.
	f.mustOK(f.owner, &DeletePortfolioCard{CardID: f.cardB.ID, ExpectedVersion: versionString(f.card(f.cardB.ID).Version)})
	check("B deleted", w, txA, txAB, txH, txAH)
	if n := f.noteStored(txAB); n == nil || len(n.Addresses) != 3 {
		t.Fatalf("deleting a card changed the stored note: %+v", n)
	}
	// A card created again for a deleted address is involved again.
	cardB2 := f.createCard(f.owner, f.addrB) // grant none
	check("B recreated hidden", w, txA, txH, txAH)
	f.setGrant(cardB2.ID, LevelRead)
	check("B recreated read", w, txA, txAB, txH, txAH)

	// TxNotesQuery (History page annotation) answers the same.
	tv := f.mustQuery(r, TxNotesQuery{TxIDs: all}).Body.(NotesView)
	if len(tv.Notes) != 4 {
		t.Fatalf("TxNotesQuery returns %+v", tv.Notes)
	}
	// An empty request answers an empty list, not null.
	if b := bodyJSON(t, f.mustQuery(w, NotesBatchQuery{}).Body); b != `{"notes":[]}` {
		t.Fatalf("empty batch answers %s", b)
	}
}

func TestNotesHistoryCardsQuery(t *testing.T) {
	f := newNoteFixture(t, PlanBase)
	f.setGrant(f.cardB.ID, LevelRead)
	ids := func(v HistoryCardsView) map[string]Level {
		m := map[string]Level{}
		for _, c := range v.Cards {
			m[c.ID] = c.EffectiveAccess
		}
		return m
	}
	v := f.mustQuery(f.keyCred(f.w), HistoryCardsQuery{}).Body.(HistoryCardsView)
	if v.Plan != PlanBase || len(v.Cards) != 2 || ids(v)[f.cardA.ID] != LevelWrite || ids(v)[f.cardB.ID] != LevelRead {
		t.Fatalf("write key sees %+v", v)
	}
	for _, c := range v.Cards {
		if c.ID == f.cardA.ID && c.Address != f.addrA {
			t.Fatalf("card A shows address %s", c.Address)
		}
	}
	v = f.mustQuery(f.keyCred(f.r), HistoryCardsQuery{}).Body.(HistoryCardsView)
	if len(v.Cards) != 2 || ids(v)[f.cardA.ID] != LevelRead || ids(v)[f.cardB.ID] != LevelRead {
		t.Fatalf("read key sees %+v", v)
	}
	v = f.mustQuery(f.ownerCred(), HistoryCardsQuery{}).Body.(HistoryCardsView)
	if len(v.Cards) != 3 || ids(v)[f.cardH.ID] != LevelWrite {
		t.Fatalf("owner sees %+v", v)
	}
	mustNotMention(t, "key's history cards", bodyJSON(t, f.mustQuery(f.keyCred(f.w), HistoryCardsQuery{}).Body), f.addrH, f.cardH.ID)
	// No readable card: an empty list, not null.
	e := newTestAccount(t, PlanExtended)
	k := e.addKey(LevelWrite)
	e.createCard(e.owner, addrs[5])
	if b := bodyJSON(t, e.mustQuery(e.keyCred(k), HistoryCardsQuery{}).Body); b != `{"plan":"extended","cards":[]}` {
		t.Fatalf("no readable cards: %s", b)
	}
}

func TestNotesHistoryCardQuery(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	f.setGrant(f.cardB.ID, LevelRead)
	res := f.mustQuery(f.keyCred(f.w), HistoryCardQuery{CardID: f.cardA.ID})
	hc := res.Body.(HistoryCardContext)
	if hc.Plan != PlanExtended || hc.Card != (HistoryCardView{ID: f.cardA.ID, Address: f.addrA, Name: f.cardA.Name, EffectiveAccess: LevelWrite}) {
		t.Fatalf("card A context %+v", hc)
	}
	hc = f.mustQuery(f.keyCred(f.r), HistoryCardQuery{CardID: f.cardB.ID}).Body.(HistoryCardContext)
	if hc.Card.EffectiveAccess != LevelRead || hc.Card.Address != f.addrB {
		t.Fatalf("card B via read key %+v", hc)
	}
	// Hidden and absent are the same 404.
	hidden := wantCode(t, f.query(f.keyCred(f.w), HistoryCardQuery{CardID: f.cardH.ID}), CodeNotFound)
	absent := wantCode(t, f.query(f.keyCred(f.w), HistoryCardQuery{CardID: "card-nope"}), CodeNotFound)
	if hidden.Error() != absent.Error() {
		t.Fatalf("hidden %q and absent %q differ", hidden, absent)
	}
	mustNotMention(t, "hidden card error", hidden.Error(), f.addrH)
	// The owner reads every card.
	hc = f.mustQuery(f.ownerCred(), HistoryCardQuery{CardID: f.cardH.ID}).Body.(HistoryCardContext)
	if hc.Card.Address != f.addrH || hc.Card.EffectiveAccess != LevelWrite {
		t.Fatalf("owner context %+v", hc)
	}
	// A grant change applies on the next query.
	f.setGrant(f.cardA.ID, LevelNone)
	wantCode(t, f.query(f.keyCred(f.w), HistoryCardQuery{CardID: f.cardA.ID}), CodeNotFound)
}

func TestNoteContextQueryListsEveryCard(t *testing.T) {
	f := newNoteFixture(t, PlanBase)
	v := f.mustQuery(f.keyCred(f.w), NoteContextQuery{}).Body.(NoteContextView)
	got := slices.Clone(v.Addresses)
	slices.Sort(got)
	want := []string{f.addrA, f.addrB, f.addrH}
	slices.Sort(want)
	if v.Plan != PlanBase || !slices.Equal(got, want) {
		t.Fatalf("note context %+v, want plan base and %v", v, want)
	}
}

func TestNoteChangesRecordEvents(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	tx := noteTxID(1)
	expect := func(who Principal) {
		t.Helper()
		want := AuditEvent{Seq: f.a.AuditSeq, At: f.at, Kind: EventPortfolioChanged, Resource: ResourceRef{Kind: ResourceNote, ID: tx}, Principal: who}
		if ev := lastEvent(t, f.testAccount); ev != want {
			t.Fatalf("event %+v, want %+v", ev, want)
		}
	}
	n := len(f.a.Audit)
	f.mustOK(f.w, notePut(tx, "new", true, f.addrA))
	expect(f.w)
	f.mustOK(f.owner, notePut(tx, "replace", true, f.addrA))
	expect(f.owner)
	f.mustOK(f.w, &DeleteNote{TxID: tx})
	want := AuditEvent{Seq: f.a.AuditSeq, At: f.at, Kind: EventPortfolioChanged, Resource: ResourceRef{Kind: ResourceNote, ID: tx}, Principal: f.w, Removed: true, Granted: LevelWrite}
	if ev := lastEvent(t, f.testAccount); ev != want {
		t.Fatalf("delete event %+v, want %+v", ev, want)
	}
	if len(f.a.Audit) != n+3 {
		t.Fatalf("%d events for three note changes", len(f.a.Audit)-n)
	}
	// Events carry no note text.
	b, _ := json.Marshal(f.a.Audit)
	mustNotMention(t, "audit", string(b), "replace")
	// Failed writes record nothing (mustFail compares the whole state).
	f.mustFail(CodeNotFound, f.w, &DeleteNote{TxID: tx})
	f.mustFail(CodeForbidden, f.r, notePut(tx, "x", true, f.addrA))
}

func TestPutNoteAddressesSortedAndDeduplicated(t *testing.T) {
	f := newNoteFixture(t, PlanExtended)
	in := []string{f.addrOutside, f.addrB, f.addrA, f.addrB, f.addrOutside, f.addrA}
	p := notePut(noteTxID(1), "x", true, in...)
	before := slices.Clone(p.Addresses)
	f.mustOK(f.w, p)
	want := []string{f.addrA, f.addrB, f.addrOutside}
	slices.Sort(want)
	if got := f.noteStored(noteTxID(1)).Addresses; !slices.Equal(got, want) {
		t.Fatalf("stored addresses %v, want %v", got, want)
	}
	if !slices.Equal(p.Addresses, before) {
		t.Fatalf("PutNote changed the command's addresses: %v, was %v", p.Addresses, before)
	}
	// Unsorted input still finds the involved cards (the lookup is a
	// binary search over the sorted list): B at read refuses the write.
	f.setGrant(f.cardB.ID, LevelRead)
	f.mustFail(CodeForbidden, f.w, notePut(noteTxID(2), "x", true, f.addrOutside, f.addrB, f.addrA))
}

// noteScript is a fixed sequence of note commands, with successes and
// failures mixed; each call builds fresh values.
func noteScript() []*Command {
	at := t0
	var cmds []*Command
	add := func(p Principal, payload Payload) {
		at += 1_000_000_000
		cmds = append(cmds, &Command{Account: "acct-n", At: at, Principal: p, Payload: payload})
	}
	w := Principal{Kind: PrincipalAgent, KeyID: "kw"}
	r := Principal{Kind: PrincipalAgent, KeyID: "kr"}
	add(systemP, &CreateAccount{Plan: PlanBase, OwnerSecretHash: hashOf("os"), PasswordHash: "pw", FirstSpaceID: "sp1"})
	add(ownerP, &CreateKey{KeyID: "kw", Name: "writer", Capability: LevelWrite, Hash: hashOf("kw")})
	add(ownerP, &CreateKey{KeyID: "kr", Name: "reader", Capability: LevelRead, Hash: hashOf("kr")})
	add(w, &CreatePortfolioCard{CardID: "c0", Address: addrs[0]})
	add(w, &CreatePortfolioCard{CardID: "c1", Address: addrs[1]})
	add(ownerP, &CreatePortfolioCard{CardID: "c2", Address: addrs[2]})
	add(w, notePut(noteTxID(1), "one", true, addrs[4], addrs[1], addrs[0], addrs[1]))
	add(w, notePut(noteTxID(2), "two", false, addrs[0]))
	add(r, notePut(noteTxID(3), "ro", true, addrs[0]))
	add(w, notePut(noteTxID(4), "hidden", true, addrs[2], addrs[0]))
	add(ownerP, notePut(noteTxID(4), "owner", true, addrs[2], addrs[0]))
	add(ownerP, &SetGrant{Resource: ResourcePortfolioCard, ID: "c1", Level: LevelRead})
	add(w, notePut(noteTxID(1), "one edit", false, addrs[1], addrs[0], addrs[4]))
	add(w, &DeleteNote{TxID: noteTxID(1)})
	add(ownerP, &SetPlan{Plan: PlanExtended})
	add(w, notePut(noteTxID(5), "ünïcødé 😀", false, addrs[0]))
	add(w, &DeleteNote{TxID: noteTxID(4)})
	add(ownerP, &DeleteNote{TxID: noteTxID(4)})
	add(w, notePut(noteTxID(6), strings.Repeat("x", 51), true, addrs[0]))
	return cmds
}

// TestNoteCommandsAreDeterministic applies the note script twice, the
// second time with each payload round-tripped through JSON (as the log
// carries it), and compares every state and result byte for byte.
func TestNoteCommandsAreDeterministic(t *testing.T) {
	run := func(roundTrip bool) (states, results [][]byte) {
		var a *Account
		for _, c := range noteScript() {
			if _, isNote := c.Payload.(*PutNote); roundTrip && (isNote || c.Payload.Kind() == KindDeleteNote) {
				b, err := json.Marshal(c.Payload)
				if err != nil {
					t.Fatal(err)
				}
				p, known := NewPayload(c.Payload.Kind())
				if !known {
					t.Fatalf("kind %d unknown to NewPayload", c.Payload.Kind())
				}
				if err := json.Unmarshal(b, p); err != nil {
					t.Fatal(err)
				}
				c.Payload = p
			}
			var res Result
			a, res = Apply(a, c)
			s, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			states = append(states, s)
			results = append(results, []byte(fmt.Sprintf("%d %s %v", res.Status, bodyJSON(t, res.Body), res.err)))
		}
		return states, results
	}
	s1, r1 := run(false)
	s2, r2 := run(true)
	for i := range s1 {
		if !bytes.Equal(s1[i], s2[i]) || !bytes.Equal(r1[i], r2[i]) {
			t.Fatalf("command %d differs:\nstate  %s\nvs     %s\nresult %s\nvs     %s", i, s1[i], s2[i], r1[i], r2[i])
		}
	}
	// The script's end state: notes 2 (base, not eligible), 3 (read-only
	// key) and 6 (51 chars) were never written; the key's edit and delete
	// of 1 were refused once c1 dropped to read; 4 was deleted by the
	// owner (the key's delete met a hidden card); 5 was written on the
	// extended plan.
	var a Account
	if err := json.Unmarshal(s1[len(s1)-1], &a); err != nil {
		t.Fatal(err)
	}
	want := []string{noteTxID(1) + " one", noteTxID(5) + " ünïcødé 😀"}
	var got []string
	for _, n := range a.Notes {
		got = append(got, n.TxID+" "+n.Text)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("end state notes %v, want %v", got, want)
	}
	if want := []string{addrs[0], addrs[1], addrs[4]}; !slices.Equal(a.Notes[0].Addresses, sortedCopy(want)) {
		t.Fatalf("note 1 addresses %v", a.Notes[0].Addresses)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

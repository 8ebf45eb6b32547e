package actors

import (
	"slices"
	"unicode/utf8"
)

// Transaction notes. A note is keyed by a transaction ID and is account-wide.
// It stores the addresses the transaction involves, as verified against the
// upstream when it was written, so that visibility ("every Account card
// involved is readable") is decided from the state alone, on every replica
// alike, and never depends on the upstream being up.

const (
	noteCharsMax = 50
	notesMax     = 2000 // per account
	txIDChars    = 64
)

// ValidateNoteText checks a note's text: 1 to 50 code points. The edge
// calls it too, so a malformed note is a 422 before the upstream is asked.
func ValidateNoteText(text string) *Error {
	if !utf8.ValidString(text) || text == "" || charCount(text) > noteCharsMax {
		return Errorf(CodeValidation, "note must be 1 to %d characters", noteCharsMax)
	}
	return nil
}

// Note is a saved transaction note.
type Note struct {
	TxID      string   `json:"txid"`
	Text      string   `json:"text"`
	Addresses []string `json:"addresses"` // sorted; every address in the transaction
	UpdatedAt int64    `json:"updated_at"`
}

// ValidTxID reports whether s is a transaction ID in canonical form: 64
// lower-case hex characters.
func ValidTxID(s string) bool {
	if len(s) != txIDChars {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (a *Account) note(txid string) (int, *Note) {
	for i, n := range a.Notes {
		if n.TxID == txid {
			return i, n
		}
	}
	return -1, nil
}

// involvedCards returns the Account cards whose address the transaction
// involves.
func (a *Account) involvedCards(addresses []string) []*Card {
	var cards []*Card
	for _, c := range a.Portfolio {
		if _, found := slices.BinarySearch(addresses, c.Address); found {
			cards = append(cards, c)
		}
	}
	return cards
}

// noteAccess is the principal's access to a note: the lowest access over
// every Account card the transaction involves. A transaction that involves
// no Account card is covered by no grant, so an agent has none.
func (a *Account) noteAccess(addresses []string, who Principal, capability Level) Level {
	if !who.isAgent() {
		return LevelWrite
	}
	cards := a.involvedCards(addresses)
	if len(cards) == 0 {
		return LevelNone
	}
	access := LevelWrite
	for _, c := range cards {
		access = min(access, a.portfolioAccess(c, who, capability))
	}
	return access
}

// NoteView is a note as the API shows it.
type NoteView struct {
	TxID      string `json:"txid"`
	Note      string `json:"note"`
	UpdatedAt string `json:"updated_at"`
}

func noteView(n *Note) NoteView {
	return NoteView{TxID: n.TxID, Note: n.Text, UpdatedAt: formatTime(n.UpdatedAt)}
}

// PutNote saves or replaces the note of a transaction. The edge verified
// the transaction against the upstream and carries what it found: the
// transaction's addresses and, for a new note on the base plan, whether
// the transaction is eligible (in the latest calendar year, in the mempool,
// or on an involved card's fallback History page).
type PutNote struct {
	TxID      string   `json:"txid"`
	Text      string   `json:"text"`
	Addresses []string `json:"addresses"`
	Eligible  bool     `json:"eligible"`
}

func (*PutNote) Kind() Kind { return KindPutNote }

// errNotesFull refuses a new note past the account's limit: the note's
// rule, and a label import that knows beforehand it has no room.
func errNotesFull() *Error {
	return Errorf(CodeConflict, "the account holds its limit of %d notes", notesMax)
}

func (p *PutNote) apply(a *Account, c *Command, capability Level) Result {
	who := c.Principal
	if who.isAgent() && capability < LevelWrite {
		return fail(errReadOnlyKey)
	}
	if !ValidTxID(p.TxID) {
		return fail(Errorf(CodeValidation, "txid must be %d hexadecimal characters", txIDChars))
	}
	if err := ValidateNoteText(p.Text); err != nil {
		return fail(err)
	}
	addresses := slices.Clone(p.Addresses)
	slices.Sort(addresses)
	addresses = slices.Compact(addresses)
	if len(a.involvedCards(addresses)) == 0 {
		return fail(Errorf(CodeNotFound, "no Account card is involved in this transaction"))
	}
	switch a.noteAccess(addresses, who, capability) {
	case LevelNone:
		return fail(Errorf(CodeNotFound, "no Account card is involved in this transaction"))
	case LevelRead:
		return fail(Errorf(CodeForbidden, "writing this note needs write on every Account card the transaction involves"))
	}
	i, existing := a.note(p.TxID)
	if existing == nil {
		if a.Plan == PlanBase && !p.Eligible {
			return fail(Errorf(CodeForbidden, "on the base plan, new notes are for transactions of the latest calendar year, the mempool, or a card's fallback History page"))
		}
		if len(a.Notes) >= notesMax {
			return fail(errNotesFull())
		}
	}
	n := &Note{TxID: p.TxID, Text: p.Text, Addresses: addresses, UpdatedAt: c.At}
	if existing != nil {
		a.Notes[i] = n
	} else {
		a.Notes = append(a.Notes, n)
	}
	a.nextVersion()
	a.recordEvent(c, EventPortfolioChanged, ResourceRef{Kind: ResourceNote, ID: n.TxID})
	return ok(noteView(n))
}

// DeleteNote deletes the note of a transaction.
type DeleteNote struct {
	TxID string `json:"txid"`
}

func (*DeleteNote) Kind() Kind { return KindDeleteNote }

func (p *DeleteNote) apply(a *Account, c *Command, capability Level) Result {
	who := c.Principal
	if who.isAgent() && capability < LevelWrite {
		return fail(errReadOnlyKey)
	}
	i, n := a.note(p.TxID)
	if n == nil {
		return fail(Errorf(CodeNotFound, "no note for this transaction"))
	}
	switch a.noteAccess(n.Addresses, who, capability) {
	case LevelNone:
		return fail(Errorf(CodeNotFound, "no note for this transaction"))
	case LevelRead:
		return fail(Errorf(CodeForbidden, "deleting this note needs write on every Account card the transaction involves"))
	}
	granted := a.noteAccess(n.Addresses, Principal{Kind: PrincipalAgent}, LevelWrite)
	a.Notes = slices.Delete(a.Notes, i, i+1)
	a.nextVersion()
	a.recordRemoval(c, EventPortfolioChanged, ResourceRef{Kind: ResourceNote, ID: p.TxID}, granted)
	return ok(DeletedView{Deleted: true})
}

// NotesBatchQuery is POST /history/notes/batch: the saved notes of the given
// transactions that the caller may read.
type NotesBatchQuery struct{ TxIDs []string }

// NotesView is a list of notes.
type NotesView struct {
	Notes []NoteView `json:"notes"`
}

func (q NotesBatchQuery) answer(a *Account, who Principal, capability Level, _ int64) (NotesView, *Error) {
	v := NotesView{Notes: []NoteView{}}
	for _, txid := range q.TxIDs {
		if _, n := a.note(txid); n != nil && a.noteAccess(n.Addresses, who, capability) >= LevelRead {
			v.Notes = append(v.Notes, noteView(n))
		}
	}
	return v, nil
}

// TxNotesQuery returns, for a page of transactions, the notes the caller may
// read, keyed by txid (used to annotate History pages).
type TxNotesQuery struct{ TxIDs []string }

func (q TxNotesQuery) answer(a *Account, who Principal, capability Level, now int64) (NotesView, *Error) {
	return NotesBatchQuery(q).answer(a, who, capability, now)
}

// HistoryCardsQuery is GET /history/cards: the Account cards whose History
// the caller may read, with the account's plan.
type HistoryCardsQuery struct{}

// HistoryCardView is an Account card in History listings.
type HistoryCardView struct {
	ID              string `json:"id"`
	Address         string `json:"address"`
	Name            string `json:"name"`
	EffectiveAccess Level  `json:"effective_access"`
}

// HistoryCardsView is the body of GET /history/cards.
type HistoryCardsView struct {
	Plan  Plan              `json:"plan"`
	Cards []HistoryCardView `json:"cards"`
}

func (HistoryCardsQuery) answer(a *Account, who Principal, capability Level, _ int64) (HistoryCardsView, *Error) {
	v := HistoryCardsView{Plan: a.Plan, Cards: []HistoryCardView{}}
	for _, c := range a.Portfolio {
		if access := a.portfolioAccess(c, who, capability); access >= LevelRead {
			v.Cards = append(v.Cards, HistoryCardView{ID: c.ID, Address: c.Address, Name: c.Name, EffectiveAccess: access})
		}
	}
	return v, nil
}

// NoteContextQuery tells the edge, before it verifies a note write against
// the upstream, the plan and the addresses of the caller's writable Account
// cards (an involved card must be among them).
type NoteContextQuery struct{}

// NoteContextView is what NoteContextQuery returns.
// It carries the asker's principal and capability too, so a note write
// authenticates and learns its context in one actor round trip.
type NoteContextView struct {
	Plan       Plan
	Addresses  []string // of every Account card, whatever its grant
	Principal  Principal
	Capability Level
}

func (NoteContextQuery) answer(a *Account, who Principal, capability Level, _ int64) (NoteContextView, *Error) {
	v := NoteContextView{Plan: a.Plan, Principal: who, Capability: capability}
	for _, c := range a.Portfolio {
		v.Addresses = append(v.Addresses, c.Address)
	}
	return v, nil
}

// HistoryCardQuery is the first step of GET /history/cards/{card_id}/
// transactions: the card, if its History is readable, and the plan.
type HistoryCardQuery struct{ CardID string }

// HistoryCardContext is what HistoryCardQuery returns.
type HistoryCardContext struct {
	Card HistoryCardView
	Plan Plan
}

func (q HistoryCardQuery) answer(a *Account, who Principal, capability Level, _ int64) (HistoryCardContext, *Error) {
	_, card := a.portfolioCard(q.CardID)
	if card == nil {
		return HistoryCardContext{}, errCardNotFound
	}
	access := a.portfolioAccess(card, who, capability)
	if access < LevelRead {
		return HistoryCardContext{}, errCardNotFound
	}
	return HistoryCardContext{Card: HistoryCardView{ID: card.ID, Address: card.Address, Name: card.Name, EffectiveAccess: access}, Plan: a.Plan}, nil
}

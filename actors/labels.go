package actors

// Wallet labels (BIP-329). An owner moves labels between addrwatch and a
// wallet as a JSON Lines file: addresses with their names, transactions
// with their notes. The file format lives at the edge (httpd); this is
// what the account holds to put in it, and what an import needs to know to
// tell a new label from a changed or an unchanged one.

// LabelsQuery is the owner's view of every label the account holds.
type LabelsQuery struct{}

// LabelsView is what LabelsQuery returns.
type LabelsView struct {
	// Portfolio is every Account card, in stored order.
	Portfolio []LabeledCard
	// Bookmarks is every bookmark card of a Bitcoin Space, Space by
	// Space in stored order. Altcoin addresses are not Bitcoin's, and a
	// wallet's labels are.
	Bookmarks []LabeledCard
	// Spaces is every Space, in stored order: an import puts a bookmark
	// label back into its Space, and says why it cannot when the Space is
	// gone or holds no Bitcoin cards.
	Spaces []LabeledSpace
	// Notes is every transaction note, in stored order.
	Notes []NoteLabel
	// PortfolioRoom is how many more Account cards the plan allows, and
	// PortfolioFull the refusal of one more.
	PortfolioRoom int
	PortfolioFull *Error
	// NoteRoom is how many more notes the account may hold, and NotesFull
	// the refusal of one more.
	NoteRoom  int
	NotesFull *Error
}

// LabeledCard is a card as a label: its address (canonical) and name, and
// for a bookmark card its Space.
type LabeledCard struct {
	ID      string
	Version string
	Address string
	Name    string
	SpaceID string // "" for an Account card
}

// LabeledSpace is a Space as an import needs it: where a bookmark label
// goes back to.
type LabeledSpace struct {
	ID      string
	Version string
	Type    SpaceType
	Name    string
	// CardRoom is how many more cards the Space holds, and Full the
	// refusal of one more.
	CardRoom int
	Full     *Error
}

// NoteLabel is a transaction note as a label.
type NoteLabel struct {
	TxID string
	Text string
}

func (LabelsQuery) answer(a *Account, who Principal, _ Level, _ int64) (LabelsView, *Error) {
	if who.isAgent() {
		return LabelsView{}, Errorf(CodeForbidden, "API keys cannot export or import labels; the owner can")
	}
	limit := a.Plan.limits().portfolioCardsMax
	v := LabelsView{PortfolioRoom: max(0, limit-len(a.Portfolio)), PortfolioFull: errOverviewFull(limit),
		NoteRoom: max(0, notesMax-len(a.Notes)), NotesFull: errNotesFull()}
	for _, c := range a.Portfolio {
		v.Portfolio = append(v.Portfolio, labeledCard(c))
	}
	spaceLimit := a.Plan.limits().spaceCardsMax
	for _, s := range a.Spaces {
		v.Spaces = append(v.Spaces, LabeledSpace{ID: s.ID, Version: versionString(s.Version), Type: s.Type, Name: s.Name,
			CardRoom: max(0, spaceLimit-len(s.Cards)), Full: Errorf(CodeBookmarkFull, "the Space holds its limit of %d cards", spaceLimit)})
		if s.Type != SpaceBitcoin {
			continue
		}
		for _, c := range s.Cards {
			card := labeledCard(c)
			card.SpaceID = s.ID
			v.Bookmarks = append(v.Bookmarks, card)
		}
	}
	for _, n := range a.Notes {
		v.Notes = append(v.Notes, NoteLabel{TxID: n.TxID, Text: n.Text})
	}
	return v, nil
}

func labeledCard(c *Card) LabeledCard {
	return LabeledCard{ID: c.ID, Version: versionString(c.Version), Address: c.Address, Name: c.Name}
}

// LabelType is a BIP-329 record type that addrwatch keeps.
type LabelType string

const (
	LabelAddress     LabelType = "addr"
	LabelTransaction LabelType = "tx"
)

// Label is one exported label.
type Label struct {
	Type  LabelType
	Ref   string // the address or the transaction ID
	Label string
	// SpaceID is the Space of a bookmark card's label, so that importing
	// the export puts it back there ("" for an Account card or a note).
	SpaceID string
}

// Export returns the labels of v as a wallet should read them: one per
// address and one per transaction, since a wallet keeps one label per
// reference. An address named on an Account card takes that name; an
// address only on bookmark cards takes the first named one's, and says
// its Space. Cards without a name label nothing. Addresses come first, Account cards before
// bookmarks, then notes, each in stored order, so the same state exports
// the same file.
func (v LabelsView) Export() []Label {
	var out []Label
	seen := map[string]bool{}
	for _, cards := range [][]LabeledCard{v.Portfolio, v.Bookmarks} {
		for _, c := range cards {
			if c.Name == "" || seen[c.Address] {
				continue
			}
			seen[c.Address] = true
			out = append(out, Label{Type: LabelAddress, Ref: c.Address, Label: c.Name, SpaceID: c.SpaceID})
		}
	}
	for _, n := range v.Notes {
		out = append(out, Label{Type: LabelTransaction, Ref: n.TxID, Label: n.Text})
	}
	return out
}

// AccountCard returns the Account card with the canonical address, if any.
func (v LabelsView) AccountCard(address string) (LabeledCard, bool) {
	for _, c := range v.Portfolio {
		if c.Address == address {
			return c, true
		}
	}
	return LabeledCard{}, false
}

// Space returns the Space with id, if any.
func (v LabelsView) Space(id string) (LabeledSpace, bool) {
	for _, s := range v.Spaces {
		if s.ID == id {
			return s, true
		}
	}
	return LabeledSpace{}, false
}

// BookmarkCard returns the bookmark card of Space spaceID with the
// canonical address, if any (a Space holds an address at most once).
func (v LabelsView) BookmarkCard(spaceID, address string) (LabeledCard, bool) {
	for _, c := range v.Bookmarks {
		if c.SpaceID == spaceID && c.Address == address {
			return c, true
		}
	}
	return LabeledCard{}, false
}

// Note returns the note on txid, if any.
func (v LabelsView) Note(txid string) (string, bool) {
	for _, n := range v.Notes {
		if n.TxID == txid {
			return n.Text, true
		}
	}
	return "", false
}

package actors

import (
	"slices"
	"unicode/utf8"
)

// Account card (Portfolio) rules.

// CardFields are the editable fields of a card as a request carries them:
// nil means "not sent".
type CardFields struct {
	Name     *string `json:"name,omitempty"`
	Note     *string `json:"note,omitempty"`
	ColorKey *string `json:"color_key,omitempty"`
}

// RequireChange refuses a card PATCH that names no field to change: with
// only expected_version it would bump the card's version, and so refuse
// every other client's next write as stale, for no change at all. The
// edge checks it before proposing (so the log's earlier entries of that
// shape still replay as they applied).
func (f CardFields) RequireChange() *Error {
	if f.Name == nil && f.Note == nil && f.ColorKey == nil {
		return Errorf(CodeValidation, "send at least one of name, note and color_key to change")
	}
	return nil
}

// validate checks each sent field against its rule.
func (f CardFields) validate() *Error {
	if f.Name != nil && (!utf8.ValidString(*f.Name) || charCount(*f.Name) > cardNameCharsMax || !isPrintable(*f.Name)) {
		return Errorf(CodeValidation, "name must be at most %d printable characters", cardNameCharsMax)
	}
	if f.Note != nil && (!utf8.ValidString(*f.Note) || charCount(*f.Note) > cardNoteCharsMax || !isPlainText(*f.Note)) {
		return Errorf(CodeValidation, "note must be at most %d characters of text", cardNoteCharsMax)
	}
	if f.ColorKey != nil && !slices.Contains(ColorKeys, *f.ColorKey) {
		return Errorf(CodeValidation, "color_key must be one of amber, green, blue, rose, violet, teal, slate, orange, cyan, pink")
	}
	return nil
}

// CreatePortfolioCard adds an Account card. CardID is generated at the edge.
type CreatePortfolioCard struct {
	CardID  string `json:"card_id"`
	Address string `json:"address"`
	CardFields
}

func (*CreatePortfolioCard) Kind() Kind { return KindCreatePortfolioCard }

// errOverviewFull refuses an Account card past the plan's limit: the
// create's rule, and a label import that knows beforehand it has no room.
func errOverviewFull(limit int) *Error {
	return Errorf(CodeOverviewFull, "the account holds its limit of %d Account cards", limit)
}

// check runs every rule of an Account card create without changing
// anything; the validate endpoint and the create share it, so a blocked
// validation answers exactly like the blocked write.
func (p *CreatePortfolioCard) check(a *Account, who Principal, capability Level) (canonical string, err *Error) {
	if who.isAgent() && capability < LevelWrite {
		return "", errReadOnlyKey
	}
	canonical, _, err = cardAddress(a.Network, SpaceBitcoin, nil, p.Address)
	if err != nil {
		return "", err
	}
	if err := p.CardFields.validate(); err != nil {
		return "", err
	}
	// A duplicate is reported without naming the existing card: its
	// existence is all a caller learns, whatever its grant.
	if hasAddress(a.Portfolio, "", canonical) {
		return "", errDuplicateAddress
	}
	if limit := a.Plan.limits().portfolioCardsMax; len(a.Portfolio) >= limit {
		return "", errOverviewFull(limit)
	}
	return canonical, nil
}

func (p *CreatePortfolioCard) apply(a *Account, c *Command, capability Level) Result {
	canonical, err := p.check(a, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if p.CardID == "" || a.cardIDTaken(p.CardID) {
		return fail(Errorf(CodeConflict, "card id is taken"))
	}
	// What an agent creates starts at write; what the owner creates, at none.
	grant := LevelNone
	if c.Principal.isAgent() {
		grant = LevelWrite
	}
	card := &Card{ID: p.CardID, Version: a.nextVersion(), Address: canonical, ColorKey: defaultColorKey, Grant: grant, CreatedAt: c.At}
	card.update(p.CardFields)
	a.Portfolio = append(a.Portfolio, card)
	a.recordEvent(c, EventPortfolioChanged, ResourceRef{Kind: ResourcePortfolioCard, ID: card.ID})
	return created(CardEnvelope{Card: a.cardView(card, c.Principal, capability)})
}

// cardIDTaken reports whether id names any card of the account.
func (a *Account) cardIDTaken(id string) bool {
	if _, c := a.portfolioCard(id); c != nil {
		return true
	}
	for _, s := range a.Spaces {
		for _, c := range s.Cards {
			if c.ID == id {
				return true
			}
		}
	}
	return false
}

func (c *Card) update(f CardFields) {
	if f.Name != nil {
		c.Name = *f.Name
	}
	if f.Note != nil {
		c.Note = *f.Note
	}
	if f.ColorKey != nil {
		c.ColorKey = *f.ColorKey
	}
}

// UpdatePortfolioCard edits an Account card's name, note or color.
type UpdatePortfolioCard struct {
	CardID          string `json:"card_id"`
	ExpectedVersion string `json:"expected_version"`
	CardFields
}

func (*UpdatePortfolioCard) Kind() Kind { return KindUpdatePortfolioCard }

func (p *UpdatePortfolioCard) apply(a *Account, c *Command, capability Level) Result {
	_, card, err := a.writablePortfolioCard(p.CardID, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if err := p.CardFields.validate(); err != nil {
		return fail(err)
	}
	if versionString(card.Version) != p.ExpectedVersion {
		return fail(errStaleVersion)
	}
	card.update(p.CardFields)
	card.Version = a.nextVersion()
	a.recordEvent(c, EventPortfolioChanged, ResourceRef{Kind: ResourcePortfolioCard, ID: card.ID})
	return ok(CardEnvelope{Card: a.cardView(card, c.Principal, capability)})
}

// DeletePortfolioCard deletes an Account card.
type DeletePortfolioCard struct {
	CardID          string `json:"card_id"`
	ExpectedVersion string `json:"expected_version"`
}

func (*DeletePortfolioCard) Kind() Kind { return KindDeletePortfolioCard }

func (p *DeletePortfolioCard) apply(a *Account, c *Command, capability Level) Result {
	i, card, err := a.writablePortfolioCard(p.CardID, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if versionString(card.Version) != p.ExpectedVersion {
		return fail(errStaleVersion)
	}
	a.Portfolio = slices.Delete(a.Portfolio, i, i+1)
	a.nextVersion()
	a.recordRemoval(c, EventPortfolioChanged, ResourceRef{Kind: ResourcePortfolioCard, ID: card.ID}, card.Grant)
	return ok(DeletedView{Deleted: true})
}

// DeletedView is the object of booleans a card delete returns. ref names
// what a replay must still be able to see (nothing for an Account card,
// whose deletion reveals nothing; the Space for a bookmark card).
type DeletedView struct {
	Deleted bool        `json:"deleted"`
	ref     ResourceRef // for idempotent replays
}

func (v DeletedView) resource() ResourceRef {
	if v.ref.Kind == "" {
		return ResourceRef{Kind: ResourceAccount}
	}
	return v.ref
}

// writablePortfolioCard finds a card the principal may change. A read-only
// key is refused first (403), a card it cannot see is absent (404), and a
// card it can only read is refused (403).
func (a *Account) writablePortfolioCard(id string, who Principal, capability Level) (int, *Card, *Error) {
	if who.isAgent() && capability < LevelWrite {
		return -1, nil, errReadOnlyKey
	}
	i, card := a.portfolioCard(id)
	if card == nil {
		return -1, nil, errCardNotFound
	}
	switch a.portfolioAccess(card, who, capability) {
	case LevelNone:
		return -1, nil, errCardNotFound
	case LevelRead:
		return -1, nil, errNotWritable
	}
	return i, card, nil
}

// portfolioAccess is the principal's effective access to an Account card.
func (a *Account) portfolioAccess(card *Card, who Principal, capability Level) Level {
	if !who.isAgent() {
		return LevelWrite
	}
	return EffectiveAccess(capability, card.Grant)
}

// spaceAccess is the principal's effective access to the Space at index i
// of the stored order. Spaces beyond the plan's count (after a downgrade)
// are inaccessible to everyone until the plan allows them again.
func (a *Account) spaceAccess(i int, who Principal, capability Level) Level {
	if i >= a.Plan.limits().spacesMax {
		return LevelNone
	}
	if !who.isAgent() {
		return LevelWrite
	}
	return EffectiveAccess(capability, a.Spaces[i].Grant)
}

// canSee reports whether the principal may still read the resource named
// by ref (used when replaying an idempotent request).
func (a *Account) canSee(who Principal, capability Level, ref ResourceRef) bool {
	switch ref.Kind {
	case ResourcePortfolioCard:
		_, card := a.portfolioCard(ref.ID)
		return card != nil && a.portfolioAccess(card, who, capability) >= LevelRead
	case ResourceSpace:
		i, _ := a.space(ref.ID)
		return i >= 0 && a.spaceAccess(i, who, capability) >= LevelRead
	case ResourceBookmarkCard:
		_, _, _, err := a.readableBookmark(ref.SpaceID, ref.ID, who, capability)
		return err == nil
	case ResourceNote:
		_, n := a.note(ref.ID)
		return n != nil && a.noteAccess(n.Addresses, who, capability) >= LevelRead
	}
	return true
}

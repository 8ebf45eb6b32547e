package actors

import "slices"

// Bookmark card rules. A bookmark card has no grant of its own: its
// effective access is its Space's. Every change to a Space's cards gives
// the Space a new version, which the next create must name.

// CreateBookmarkCard adds a card to a Space. CardID is generated at the edge.
type CreateBookmarkCard struct {
	CardID               string  `json:"card_id"`
	SpaceID              string  `json:"space_id"`
	ExpectedSpaceVersion string  `json:"expected_space_version"`
	Address              string  `json:"address"`
	CoinID               *string `json:"coin_id,omitempty"`
	CardFields
}

func (*CreateBookmarkCard) Kind() Kind { return KindCreateBookmarkCard }

// check runs every rule of a bookmark create without changing anything; the
// validate endpoint shares it.
func (p *CreateBookmarkCard) check(a *Account, who Principal, capability Level) (space int, canonical, coin string, err *Error) {
	i, s, err := a.writableSpace(p.SpaceID, who, capability)
	if err != nil {
		return -1, "", "", err
	}
	canonical, coin, err = cardAddress(a.Network, s.Type, p.CoinID, p.Address)
	if err != nil {
		return -1, "", "", err
	}
	if err := p.CardFields.validate(); err != nil {
		return -1, "", "", err
	}
	if p.ExpectedSpaceVersion != versionString(s.Version) {
		return -1, "", "", errStaleVersion
	}
	if hasAddress(s.Cards, coin, canonical) {
		return -1, "", "", errDuplicateAddress
	}
	if limit := a.Plan.limits().spaceCardsMax; len(s.Cards) >= limit {
		return -1, "", "", Errorf(CodeBookmarkFull, "the Space holds its limit of %d cards", limit)
	}
	return i, canonical, coin, nil
}

func (p *CreateBookmarkCard) apply(a *Account, c *Command, capability Level) Result {
	i, canonical, coin, err := p.check(a, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if p.CardID == "" || a.cardIDTaken(p.CardID) {
		return fail(Errorf(CodeConflict, "card id is taken"))
	}
	s := a.Spaces[i]
	card := &Card{ID: p.CardID, Version: a.nextVersion(), Address: canonical, CoinID: coin, ColorKey: defaultColorKey, CreatedAt: c.At}
	card.update(p.CardFields)
	s.Cards = append(s.Cards, card)
	a.touchSpace(s)
	a.recordEvent(c, EventCardsChanged, ResourceRef{Kind: ResourceBookmarkCard, ID: card.ID, SpaceID: s.ID})
	return created(a.bookmarkEnvelope(i, card, c.Principal, capability))
}

// UpdateBookmarkCard edits a bookmark card's name, note or color.
type UpdateBookmarkCard struct {
	SpaceID         string `json:"space_id"`
	CardID          string `json:"card_id"`
	ExpectedVersion string `json:"expected_version"`
	CardFields
}

func (*UpdateBookmarkCard) Kind() Kind { return KindUpdateBookmarkCard }

func (p *UpdateBookmarkCard) apply(a *Account, c *Command, capability Level) Result {
	i, _, card, err := a.writableBookmark(p.SpaceID, p.CardID, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if err := p.CardFields.validate(); err != nil {
		return fail(err)
	}
	if p.ExpectedVersion != versionString(card.Version) {
		return fail(errStaleVersion)
	}
	card.update(p.CardFields)
	card.Version = a.nextVersion()
	a.touchSpace(a.Spaces[i])
	a.recordEvent(c, EventCardsChanged, ResourceRef{Kind: ResourceBookmarkCard, ID: card.ID, SpaceID: p.SpaceID})
	return ok(a.bookmarkEnvelope(i, card, c.Principal, capability))
}

// DeleteBookmarkCard deletes a bookmark card.
type DeleteBookmarkCard struct {
	SpaceID         string `json:"space_id"`
	CardID          string `json:"card_id"`
	ExpectedVersion string `json:"expected_version"`
}

func (*DeleteBookmarkCard) Kind() Kind { return KindDeleteBookmarkCard }

func (p *DeleteBookmarkCard) apply(a *Account, c *Command, capability Level) Result {
	i, j, card, err := a.writableBookmark(p.SpaceID, p.CardID, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if p.ExpectedVersion != versionString(card.Version) {
		return fail(errStaleVersion)
	}
	s := a.Spaces[i]
	s.Cards = slices.Delete(s.Cards, j, j+1)
	a.touchSpace(s)
	a.recordRemoval(c, EventCardsChanged, ResourceRef{Kind: ResourceBookmarkCard, ID: card.ID, SpaceID: s.ID}, s.Grant)
	// The Space is the resource a replay must still be able to see.
	return ok(DeletedView{Deleted: true, ref: ResourceRef{Kind: ResourceSpace, ID: s.ID}})
}

// SpaceRef names a Space and its current version.
type SpaceRef struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// readableBookmark finds a card in a Space the principal may read.
func (a *Account) readableBookmark(spaceID, cardID string, who Principal, capability Level) (space, card int, c *Card, err *Error) {
	i, s, err := a.readableSpace(spaceID, who, capability)
	if err != nil {
		return -1, -1, nil, err
	}
	for j, c := range s.Cards {
		if c.ID == cardID {
			return i, j, c, nil
		}
	}
	return -1, -1, nil, errCardNotFound
}

// writableBookmark finds a card the principal may change, with the same
// order of refusals as writableSpace.
func (a *Account) writableBookmark(spaceID, cardID string, who Principal, capability Level) (space, card int, c *Card, err *Error) {
	if who.isAgent() && capability < LevelWrite {
		return -1, -1, nil, errReadOnlyKey
	}
	i, j, c, err := a.readableBookmark(spaceID, cardID, who, capability)
	if err != nil {
		return -1, -1, nil, err
	}
	if a.spaceAccess(i, who, capability) < LevelWrite {
		return -1, -1, nil, errNotWritable
	}
	return i, j, c, nil
}

// BookmarkEnvelope wraps a single bookmark card with its Space's current
// version.
type BookmarkEnvelope struct {
	Card  CardView `json:"card"`
	Space SpaceRef `json:"space"`
}

func (e BookmarkEnvelope) resource() ResourceRef {
	return ResourceRef{Kind: ResourceBookmarkCard, ID: e.Card.ID, SpaceID: e.Space.ID}
}

func (a *Account) bookmarkEnvelope(space int, card *Card, who Principal, capability Level) BookmarkEnvelope {
	s := a.Spaces[space]
	return BookmarkEnvelope{
		Card:  renderCard(card, a.spaceAccess(space, who, capability)),
		Space: SpaceRef{ID: s.ID, Version: versionString(s.Version)},
	}
}

// ListBookmarksQuery is GET /bookmark-spaces/{space_id}/cards.
type ListBookmarksQuery struct{ SpaceID string }

// BookmarkListView is the body of a bookmark card list.
type BookmarkListView struct {
	Cards []CardView `json:"cards"`
	Space SpaceView  `json:"space"`
}

func (q ListBookmarksQuery) answer(a *Account, who Principal, capability Level, _ int64) (BookmarkListView, *Error) {
	i, s, err := a.readableSpace(q.SpaceID, who, capability)
	if err != nil {
		return BookmarkListView{}, err
	}
	access := a.spaceAccess(i, who, capability)
	v := BookmarkListView{Cards: make([]CardView, 0, len(s.Cards)), Space: a.spaceView(i, who, capability)}
	for _, c := range s.Cards {
		v.Cards = append(v.Cards, renderCard(c, access))
	}
	return v, nil
}

// GetBookmarkQuery is GET /bookmark-spaces/{space_id}/cards/{card_id}.
type GetBookmarkQuery struct{ SpaceID, CardID string }

func (q GetBookmarkQuery) answer(a *Account, who Principal, capability Level, _ int64) (BookmarkEnvelope, *Error) {
	i, _, card, err := a.readableBookmark(q.SpaceID, q.CardID, who, capability)
	if err != nil {
		return BookmarkEnvelope{}, err
	}
	return a.bookmarkEnvelope(i, card, who, capability), nil
}

// ValidateBookmarkQuery is POST /bookmark-spaces/{space_id}/cards/validate.
type ValidateBookmarkQuery struct{ Card CreateBookmarkCard }

func (q ValidateBookmarkQuery) answer(a *Account, who Principal, capability Level, _ int64) (ValidView, *Error) {
	if _, _, _, err := q.Card.check(a, who, capability); err != nil {
		return ValidView{}, err
	}
	return ValidView{Valid: true}, nil
}

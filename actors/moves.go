package actors

import "slices"

// Moves: a card moves between Spaces, from Portfolio into a Space, or from
// a Space into Portfolio. The card gets a new ID at the destination and its
// source ID is retired.

// CardLocationKind is where a card lives: in Portfolio or in a Space.
type CardLocationKind string

const (
	LocationPortfolio CardLocationKind = "portfolio"
	LocationBookmark  CardLocationKind = "bookmark"
)

// MoveCard moves one card. NewCardID is generated at the edge.
// ExpectedDestinationVersion is the destination Space's version and is
// absent for a move into Portfolio; there is no source Space version.
type MoveCard struct {
	NewCardID                  string           `json:"new_card_id"`
	SourceKind                 CardLocationKind `json:"source_kind"`
	SourceID                   string           `json:"source_id"`
	SourceSpaceID              string           `json:"source_space_id,omitempty"`
	DestinationKind            CardLocationKind `json:"destination_kind"`
	DestinationSpaceID         string           `json:"destination_space_id,omitempty"`
	ExpectedSourceVersion      string           `json:"expected_source_version"`
	ExpectedDestinationVersion *string          `json:"expected_destination_version,omitempty"`
}

func (*MoveCard) Kind() Kind { return KindMoveCard }

// movePlan is a checked move: where the card is and where it goes.
type movePlan struct {
	card        *Card
	sourceSpace int // -1 for Portfolio
	sourceIndex int
	destSpace   int // -1 for Portfolio
}

// shape checks the fields that must or must not be present together.
func (p *MoveCard) shape() *Error {
	for _, k := range []CardLocationKind{p.SourceKind, p.DestinationKind} {
		if k != LocationPortfolio && k != LocationBookmark {
			return Errorf(CodeValidation, "source_kind and destination_kind must be bookmark or portfolio")
		}
	}
	switch {
	case p.SourceID == "":
		return Errorf(CodeValidation, `field "source_id" is required`)
	case (p.SourceKind == LocationBookmark) != (p.SourceSpaceID != ""):
		return Errorf(CodeValidation, "source_space_id is required for a bookmark source and only then")
	case (p.DestinationKind == LocationBookmark) != (p.DestinationSpaceID != ""):
		return Errorf(CodeValidation, "destination_space_id is required for a Space destination and only then")
	case p.DestinationKind == LocationBookmark && p.ExpectedDestinationVersion == nil:
		return Errorf(CodeValidation, `field "expected_destination_version" is required for a Space destination`)
	case p.DestinationKind == LocationPortfolio && p.ExpectedDestinationVersion != nil:
		return Errorf(CodeValidation, "expected_destination_version is omitted for a move into Portfolio")
	case p.SourceKind == LocationPortfolio && p.DestinationKind == LocationPortfolio:
		return Errorf(CodeValidation, "the card is already in Portfolio")
	case p.SourceKind == LocationBookmark && p.DestinationKind == LocationBookmark && p.SourceSpaceID == p.DestinationSpaceID:
		return Errorf(CodeValidation, "source and destination are the same Space")
	}
	return nil
}

// check runs every rule of a move without changing anything; the validate
// endpoint shares it. Permissions: Space to Space needs write on both
// Spaces; Portfolio to Space, write on the card and on the destination;
// Space to Portfolio, write on the source Space.
func (p *MoveCard) check(a *Account, who Principal, capability Level) (movePlan, *Error) {
	if who.isAgent() && capability < LevelWrite {
		return movePlan{}, errReadOnlyKey
	}
	if err := p.shape(); err != nil {
		return movePlan{}, err
	}
	plan := movePlan{sourceSpace: -1, destSpace: -1}
	sourceType := SpaceBitcoin // Portfolio holds Bitcoin cards
	if p.SourceKind == LocationPortfolio {
		i, card, err := a.writablePortfolioCard(p.SourceID, who, capability)
		if err != nil {
			return movePlan{}, err
		}
		plan.card, plan.sourceIndex = card, i
	} else {
		i, j, card, err := a.writableBookmark(p.SourceSpaceID, p.SourceID, who, capability)
		if err != nil {
			return movePlan{}, err
		}
		plan.card, plan.sourceSpace, plan.sourceIndex = card, i, j
		sourceType = a.Spaces[i].Type
	}
	destType, destCards, destLimit := SpaceBitcoin, a.Portfolio, a.Plan.limits().portfolioCardsMax
	fullCode := CodeOverviewFull
	if p.DestinationKind == LocationBookmark {
		i, s, err := a.writableSpace(p.DestinationSpaceID, who, capability)
		if err != nil {
			return movePlan{}, err
		}
		plan.destSpace = i
		destType, destCards, destLimit, fullCode = s.Type, s.Cards, a.Plan.limits().spaceCardsMax, CodeBookmarkFull
	}
	if sourceType != destType || destType == SpaceSheet {
		return movePlan{}, Errorf(CodeCrossTypeMove, "a %s card cannot move into a %s destination", sourceType, destType)
	}
	if p.ExpectedSourceVersion != versionString(plan.card.Version) {
		return movePlan{}, errStaleVersion
	}
	if plan.destSpace >= 0 && *p.ExpectedDestinationVersion != versionString(a.Spaces[plan.destSpace].Version) {
		return movePlan{}, errStaleVersion
	}
	if hasAddress(destCards, plan.card.CoinID, plan.card.Address) {
		return movePlan{}, errDuplicateAddress
	}
	if len(destCards) >= destLimit {
		return movePlan{}, Errorf(fullCode, "the destination holds its limit of %d cards", destLimit)
	}
	return plan, nil
}

func (p *MoveCard) apply(a *Account, c *Command, capability Level) Result {
	plan, err := p.check(a, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if p.NewCardID == "" || a.cardIDTaken(p.NewCardID) {
		return fail(Errorf(CodeConflict, "card id is taken"))
	}
	old := plan.card
	moved := &Card{ID: p.NewCardID, Version: a.nextVersion(), Address: old.Address, Name: old.Name, Note: old.Note,
		ColorKey: old.ColorKey, CoinID: old.CoinID, CreatedAt: c.At}
	oldRef := ResourceRef{Kind: ResourcePortfolioCard, ID: old.ID}
	sourceGrant := old.Grant
	if plan.sourceSpace >= 0 {
		s := a.Spaces[plan.sourceSpace]
		sourceGrant = s.Grant
		s.Cards = slices.Delete(s.Cards, plan.sourceIndex, plan.sourceIndex+1)
		a.touchSpace(s)
		oldRef = ResourceRef{Kind: ResourceBookmarkCard, ID: old.ID, SpaceID: s.ID}
	} else {
		a.Portfolio = slices.Delete(a.Portfolio, plan.sourceIndex, plan.sourceIndex+1)
	}
	view := MoveView{OldID: old.ID, NewID: moved.ID}
	var newRef ResourceRef
	if plan.destSpace >= 0 {
		s := a.Spaces[plan.destSpace]
		s.Cards = append(s.Cards, moved)
		a.touchSpace(s)
		newRef = ResourceRef{Kind: ResourceBookmarkCard, ID: moved.ID, SpaceID: s.ID}
		view.Location = MoveLocation{Kind: LocationBookmark, SpaceID: s.ID, SpaceVersion: versionString(s.Version)}
	} else {
		// Moved into Portfolio: an agent's move gives it write, the owner's none.
		if c.Principal.isAgent() {
			moved.Grant = LevelWrite
		}
		a.Portfolio = append(a.Portfolio, moved)
		newRef = ResourceRef{Kind: ResourcePortfolioCard, ID: moved.ID}
		view.Location = MoveLocation{Kind: LocationPortfolio}
	}
	a.recordRemoval(c, eventFor(oldRef), oldRef, sourceGrant)
	a.recordEvent(c, eventFor(newRef), newRef)
	if a.canSee(c.Principal, capability, newRef) {
		card := a.renderAt(newRef, moved, c.Principal, capability)
		view.Card = &card
	}
	view.ref = newRef
	return ok(view)
}

// eventFor is the change-event kind of a change to a card at ref.
func eventFor(ref ResourceRef) EventKind {
	if ref.Kind == ResourcePortfolioCard {
		return EventPortfolioChanged
	}
	return EventCardsChanged
}

// renderAt renders a card for the principal at its location.
func (a *Account) renderAt(ref ResourceRef, card *Card, who Principal, capability Level) CardView {
	if ref.Kind == ResourcePortfolioCard {
		return a.cardView(card, who, capability)
	}
	i, _ := a.space(ref.SpaceID)
	return renderCard(card, a.spaceAccess(i, who, capability))
}

// MoveView is the body of a move.
type MoveView struct {
	OldID    string       `json:"old_id"`
	NewID    string       `json:"new_id"`
	Location MoveLocation `json:"location"`
	// Card is present when the moved card remains accessible to the caller.
	Card *CardView   `json:"card,omitempty"`
	ref  ResourceRef // for idempotent replays
}

func (v MoveView) resource() ResourceRef { return v.ref }

// MoveLocation is where the moved card now lives.
type MoveLocation struct {
	Kind         CardLocationKind `json:"kind"`
	SpaceID      string           `json:"space_id,omitempty"`
	SpaceVersion string           `json:"space_version,omitempty"`
}

// ValidateMoveQuery is POST /cards/move/validate.
type ValidateMoveQuery struct{ Move MoveCard }

func (q ValidateMoveQuery) answer(a *Account, who Principal, capability Level, _ int64) (ValidView, *Error) {
	if _, err := q.Move.check(a, who, capability); err != nil {
		return ValidView{}, err
	}
	return ValidView{Valid: true}, nil
}

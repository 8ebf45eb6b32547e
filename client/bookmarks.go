package client

import "context"

// Bookmark card writes. A bookmark card has no grant of its own: it is
// writable when its Space is. Creating one is guarded by the Space's
// version, editing or deleting one by the card's.

// CreateBookmarkCard adds a card to the Space, with a fresh idempotency
// key for this one intended creation. Validation rule 5: before the write,
// read the Space and send its current version as expected_space_version;
// that is what an empty card.ExpectedSpaceVersion asks for. A version the
// caller gives (from the read it decided on) is sent as it is. A
// STALE_VERSION is returned, never retried: the Space changed, perhaps by
// gaining this very card, and only the caller can tell.
func (a *Agent) CreateBookmarkCard(ctx context.Context, spaceID string, card BookmarkCreateRequest) (*BookmarkEnvelope, error) {
	if card.ExpectedSpaceVersion == "" {
		r, err := a.API.GetSpaceWithResponse(ctx, spaceID)
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return nil, err
		}
		card.ExpectedSpaceVersion = r.JSON200.Space.Version
	}
	key := NewIdempotencyKey()
	r, err := a.API.CreateBookmarkCardWithResponse(ctx, spaceID, &CreateBookmarkCardParams{IdempotencyKey: &key}, card)
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	if err != nil {
		return nil, err
	}
	return r.JSON201, nil
}

// UpdateBookmarkCard writes change onto the card as of version (the one the
// caller read), with UpdatePortfolioCard's STALE_VERSION rule: re-read the
// card, and if it is still there and apply (nil: always) accepts it as it
// is now, write once more with the new version; a second conflict is
// returned. The answer carries the Space's new version too.
func (a *Agent) UpdateBookmarkCard(ctx context.Context, spaceID, cardID, version string, change CardPatchRequest, apply func(now Card) bool) (*BookmarkEnvelope, error) {
	write := func(version string) (*BookmarkEnvelope, error) {
		body := change
		body.ExpectedVersion = version
		r, err := a.API.UpdateBookmarkCardWithResponse(ctx, spaceID, cardID, body)
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return nil, err
		}
		return r.JSON200, nil
	}
	reread := func() (Card, string, error) {
		r, err := a.API.GetBookmarkCardWithResponse(ctx, spaceID, cardID)
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return Card{}, "", err // gone (deleted or moved), or no longer readable
		}
		return r.JSON200.Card, r.JSON200.Card.Version, nil
	}
	return retryOnceIfStale(version, write, reread, sameCard(cardID, apply))
}

// DeleteBookmarkCard deletes the card as of version (the one the caller
// read), with a fresh idempotency key. A STALE_VERSION is returned, never
// retried: the card changed since the caller decided to delete it.
func (a *Agent) DeleteBookmarkCard(ctx context.Context, spaceID, cardID, version string) error {
	key := NewIdempotencyKey()
	r, err := a.API.DeleteBookmarkCardWithResponse(ctx, spaceID, cardID, &DeleteBookmarkCardParams{IdempotencyKey: &key}, CardDeleteRequest{ExpectedVersion: version})
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	return err
}

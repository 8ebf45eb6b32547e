package client

import "context"

// Space writes. A Space's name and the set of Spaces are guarded by one
// account-wide revision, bookmark_revision (any Space created, renamed or
// deleted changes it); a Space's own version guards its cards.

// CreateSpace adds a Space, with a fresh idempotency key for this one
// intended creation (Space rules 1 and 2 say when the server allows it).
//
// space.ExpectedBookmarkRevision is the bookmark_revision of the caller's
// last look at the Spaces. An empty one is read from GET /bookmark-spaces
// just before the write: the caller thereby says it does not mind what
// changed in the Space set since it last looked, and the revision guards
// only the moment between that read and the write. A STALE_VERSION is
// returned, never retried: someone changed the Space set, perhaps by
// creating this very Space, and only the caller can tell.
func (a *Agent) CreateSpace(ctx context.Context, space SpaceCreateRequest) (*SpaceEnvelope, error) {
	if space.ExpectedBookmarkRevision == "" {
		revision, err := a.bookmarkRevision(ctx)
		if err != nil {
			return nil, err
		}
		space.ExpectedBookmarkRevision = revision
	}
	key := NewIdempotencyKey()
	r, err := a.API.CreateSpaceWithResponse(ctx, &CreateSpaceParams{IdempotencyKey: &key}, space)
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	if err != nil {
		return nil, err
	}
	return r.JSON201, nil
}

// RenameSpace names the Space name, as of bookmarkRevision (the
// bookmark_revision the caller read). On 409 STALE_VERSION it follows the
// spec's rule (retryOnceIfStale): re-read the Space, and if it is still
// there and apply (nil: always) accepts it as it is now, rename once more
// with the current bookmark_revision. The retry is usually unambiguous: the
// revision is account-wide, so another Space's creation makes it stale
// without touching this one, and a rename sets a name rather than
// changing one.
func (a *Agent) RenameSpace(ctx context.Context, spaceID string, bookmarkRevision Revision, name string, apply func(now Space) bool) (*SpaceEnvelope, error) {
	write := func(revision Revision) (*SpaceEnvelope, error) {
		r, err := a.API.UpdateSpaceWithResponse(ctx, spaceID, SpacePatchRequest{ExpectedBookmarkRevision: revision, Name: name})
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return nil, err
		}
		return r.JSON200, nil
	}
	reread := func() (Space, Revision, error) {
		r, err := a.API.GetSpaceWithResponse(ctx, spaceID)
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return Space{}, "", err // gone, or no longer readable
		}
		return r.JSON200.Space, r.JSON200.BookmarkRevision, nil
	}
	sameSpace := func(now Space) bool { return now.Id == spaceID && (apply == nil || apply(now)) }
	return retryOnceIfStale(bookmarkRevision, write, reread, sameSpace)
}

// DeleteSpace deletes the Space and its cards, as of bookmarkRevision and
// the Space's version (both as the caller read them), with a fresh
// idempotency key. The body's confirm_delete_cards is sent true: calling
// DeleteSpace is that confirmation. A STALE_VERSION is returned, never
// retried: a delete cannot be undone, and a Space that changed since the
// caller looked may have gained the cards it would now delete.
func (a *Agent) DeleteSpace(ctx context.Context, spaceID string, bookmarkRevision Revision, version Version) (*SpaceDeleted, error) {
	key := NewIdempotencyKey()
	body := SpaceDeleteRequest{ConfirmDeleteCards: true, ExpectedBookmarkRevision: bookmarkRevision, ExpectedVersion: version}
	r, err := a.API.DeleteSpaceWithResponse(ctx, spaceID, &DeleteSpaceParams{IdempotencyKey: &key}, body)
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	if err != nil {
		return nil, err
	}
	return r.JSON200, nil
}

// bookmarkRevision reads the account's current bookmark_revision.
func (a *Agent) bookmarkRevision(ctx context.Context) (Revision, error) {
	r, err := a.API.ListSpacesWithResponse(ctx)
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	if err != nil {
		return "", err
	}
	return r.JSON200.BookmarkRevision, nil
}

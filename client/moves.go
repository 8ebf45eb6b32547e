package client

import "context"

// MoveCard moves one card (a bookmark card, or an Account card) into a
// Space or into Portfolio, with a fresh idempotency key for this one
// intended move. move carries the versions the caller read: the source
// card's, and the destination Space's unless the destination is Portfolio
// (Card delete and move rules 3).
//
// A move creates a new card ID at the destination and retires the source
// ID: use the answer's NewId afterwards. A STALE_VERSION is returned, never
// retried: the source or the destination changed since the caller looked,
// and whether the move still makes sense is the caller's to judge.
func (a *Agent) MoveCard(ctx context.Context, move MoveRequest) (*Move, error) {
	key := NewIdempotencyKey()
	r, err := a.API.MoveCardWithResponse(ctx, &MoveCardParams{IdempotencyKey: &key}, move)
	if err == nil {
		err = Check(r.HTTPResponse, r.Body)
	}
	if err != nil {
		return nil, err
	}
	return r.JSON200, nil
}

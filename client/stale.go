package client

// The spec's rule for 409 STALE_VERSION (Errors): re-read and verify the
// target, then retry at most once if unambiguous; otherwise stop and ask
// the owner. Every helper that retries a stale write goes through
// retryOnceIfStale, so the rule is written once; the helpers differ only in
// how they re-read their target and what "still applies" means for it.

// retryOnceIfStale runs write with the version (or revision) the caller
// read. On 409 STALE_VERSION it re-reads the target: reread returns it as
// it is now, with its current version. When applies says the caller's
// change still fits the target as it is now, write runs once more with
// that version, and its answer is final: a second conflict is returned,
// never retried, since two in a row mean someone else is editing the same
// thing and the caller should look before writing again. An error of the
// re-read (the target is gone, or no longer readable) is returned as it
// is; a change that no longer applies returns the first conflict, since
// nothing was written.
func retryOnceIfStale[V, T, R any](version V, write func(version V) (R, error), reread func() (now T, version V, err error), applies func(now T) bool) (R, error) {
	result, err := write(version)
	if !IsCode(err, "STALE_VERSION") {
		return result, err
	}
	var none R
	now, current, rerr := reread()
	if rerr != nil {
		return none, rerr
	}
	if !applies(now) {
		return none, err
	}
	return write(current)
}

// sameCard is the check of a card write's retry: the card read again is the
// one the caller meant (a move gives a card a new ID, so an ID that no
// longer answers is not retried), and the caller's apply, when given,
// accepts it as it is now.
func sameCard(cardID string, apply func(now Card) bool) func(now Card) bool {
	return func(now Card) bool {
		return now.Id == cardID && (apply == nil || apply(now))
	}
}

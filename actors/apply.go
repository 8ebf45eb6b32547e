package actors

// Apply applies one command to an account and returns the account after it
// (a new one for CreateAccount) and the result. It is deterministic: the
// same account and command give the same outcome on every replica.
//
// The order of checks is the spec's: the credential must still be live,
// then an Idempotency-Key replay or conflict is answered before the rule
// runs, so a retried request never changes anything twice.
func Apply(a *Account, c *Command) (*Account, Result) {
	if create, isCreate := c.Payload.(*CreateAccount); isCreate {
		// A deleted account is gone: its id may be created again, exactly
		// as when the registry has already forgotten it, so the outcome
		// does not depend on where raft cut the log into batches.
		if a != nil && !a.Deleted {
			return a, fail(Errorf(CodeConflict, "account %s already exists", c.Account))
		}
		return newAccount(c, create)
	}
	if a == nil {
		return nil, fail(errUnauthorized)
	}
	capability, err := a.stillLive(c.Principal, c.At)
	if err != nil {
		return a, fail(err)
	}
	a.pruneIdempotency(c.At)
	if req := c.Idempotency; req != nil {
		if r := a.idempotencyLookup(c.Principal, req.Token, c.At); r != nil {
			return a, a.replay(r, req, c.Principal, capability)
		}
	}
	res := c.Payload.apply(a, c, capability)
	if res.err == nil && c.Idempotency != nil {
		a.remember(c, res, resultResource(res))
	}
	return a, res
}

// resultResource names the resource a successful result is about, so that
// a replay can re-check access to it.
func resultResource(res Result) ResourceRef {
	if v, isRef := res.Body.(interface{ resource() ResourceRef }); isRef {
		return v.resource()
	}
	return ResourceRef{Kind: ResourceAccount}
}

// SafeApply is Apply with a panic recovered: the command is answered with
// an internal error and the account comes back as it was passed in, so the
// caller (the account's actor, package actors/registry) keeps the state
// instead of letting protoactor restart the actor empty. A panic is a
// programmer error; the state may hold a partial change from the failed
// command, which is why rules validate first. recovered is the panic's
// value, nil when there was none, for the caller to report.
func SafeApply(a *Account, c *Command) (next *Account, res Result, recovered any) {
	defer func() {
		if r := recover(); r != nil {
			next, res, recovered = a, fail(Errorf(CodeInternal, "internal error")), r
		}
	}()
	next, res = Apply(a, c)
	return next, res, nil
}

package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// How a sharded node sets a login (meta_logins.go has the table):
//
//  1. reserve the login for the account in the meta group; held by
//     another account, the command fails as the one-group rule does
//     (409 "that login is taken");
//  2. commit the command in the account's group;
//  3. applied: settle, releasing the account's other logins; refused:
//     release the reservation if step 1 made it; outcome unknown: keep
//     it, since the command may yet apply.
//
// A reservation whose account never got the login (its command was lost,
// its node crashed between the steps) is taken over by the next account
// that asks for the login once it is loginReservationTTL old and this
// node's replica of the holder's group shows it without that login. The
// TTL is far beyond any wait for a command's outcome.

const loginReservationTTL = 10 * time.Minute

// loginOf is the login cmd sets, if it sets one.
func loginOf(cmd *actors.Command) (string, bool) {
	switch p := cmd.Payload.(type) {
	case *actors.CreateAccount:
		return p.Login, p.Login != ""
	case *actors.SetLogin:
		return p.Login, true
	}
	return "", false
}

func (g *Groups) proposeLogin(ctx context.Context, n *Node, cmd *actors.Command, login string) (actors.Result, error) {
	folded := actors.FoldLogin(login)
	if !n.serving() {
		return actors.Result{}, ErrNotLeader // before anything is reserved
	}
	made, err := g.reserveLogin(ctx, folded, cmd.Account)
	if errors.Is(err, errLoginHeld) {
		return actors.Result{}, actors.ErrLoginTaken
	}
	if err != nil {
		return actors.Result{}, err
	}
	res, err := n.Propose(ctx, cmd)
	switch {
	case err == nil:
		g.settleLogins(ctx, cmd.Account, folded)
	case errors.Is(err, ErrOutcomeUnknown):
	case made:
		if _, rerr := g.proposeMeta(context.WithoutCancel(ctx), metaCommand{Op: "release_login", Login: folded, Account: cmd.Account}); rerr != nil {
			g.cfg.Logger.Warn("could not release a login reserved for a command that failed; it frees itself later", "account", cmd.Account, "err", rerr)
		}
	}
	return res, err
}

// reserveLogin reserves folded for account, taking over a stale holder's
// reservation, and reports whether it made a new one.
func (g *Groups) reserveLogin(ctx context.Context, folded, account string) (bool, error) {
	c := metaCommand{Op: "reserve_login", Login: folded, Account: account, At: time.Now().UnixNano()}
	v, err := g.proposeMeta(ctx, c)
	var held loginHeld
	if errors.As(err, &held) && g.staleReservation(folded, held.loginReservation) {
		c.Steal = held.Account
		v, err = g.proposeMeta(ctx, c)
	}
	if err != nil {
		return false, err
	}
	r, _ := v.(loginReserved)
	return r.New, nil
}

// staleReservation reports whether held's reservation of folded is old
// and its account, in this node's replica of its group, lacks the login.
func (g *Groups) staleReservation(folded string, held loginReservation) bool {
	if time.Since(time.Unix(0, held.At)) < loginReservationTTL {
		return false
	}
	id, found := g.localAccountForLogin(folded)
	return !found || id != held.Account
}

// settleLogins releases account's logins other than keep ("" releases
// them all). It is tidying: a failure only leaves a login reserved that
// the account no longer uses, until it is taken over.
func (g *Groups) settleLogins(ctx context.Context, account, keep string) {
	if _, err := g.proposeMeta(context.WithoutCancel(ctx), metaCommand{Op: "settle_logins", Login: keep, Account: account}); err != nil {
		g.cfg.Logger.Warn("could not release an account's old logins", "account", account, "err", err)
	}
}

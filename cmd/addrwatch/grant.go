package main

import (
	"context"
	"flag"
	"net/http"
	"net/url"
)

// grantLevels are the access levels an owner can set on an Account card or a
// Space (spec, "Access levels").
var grantLevels = []string{"none", "read", "write"}

var grantPortfolioCommand = &command{
	words:   []string{"grant", "portfolio"},
	args:    []string{"CARD_ID", "LEVEL"},
	summary: "set the agent access level of an Account card",
	details: `Set the agent access level of an Account card
(PUT /owner/v1/grants/portfolio/CARD_ID). LEVEL is none, read or write. The
grant covers the card and its History; it takes effect on the next request.`,
	example: "addrwatch grant portfolio card_7Hc2 read --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			return setGrant(ctx, a, "/owner/v1/grants/portfolio/", "CARD_ID", "Account card", args)
		}
	},
}

var grantSpaceCommand = &command{
	words:   []string{"grant", "space"},
	args:    []string{"SPACE_ID", "LEVEL"},
	summary: "set the agent access level of a Space",
	details: `Set the agent access level of a Space of bookmark cards
(PUT /owner/v1/grants/bookmark-spaces/SPACE_ID). LEVEL is none, read or write.
The Space's bookmark cards inherit it; it takes effect on the next request.`,
	example: "addrwatch grant space space_2Lp8 write --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			return setGrant(ctx, a, "/owner/v1/grants/bookmark-spaces/", "SPACE_ID", "Space", args)
		}
	},
}

// setGrant sends one grant change. args is {ID, LEVEL}; idName and what name
// the resource in messages.
func setGrant(ctx context.Context, a *app, pathPrefix, idName, what string, args []string) error {
	id, level := args[0], args[1]
	if err := checkID(idName, id); err != nil {
		return err
	}
	if err := checkOneOf("LEVEL", level, grantLevels...); err != nil {
		return err
	}
	c, err := a.ownerClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPut, pathPrefix+url.PathEscape(id), map[string]string{"level": level})
	if err != nil {
		return err
	}
	return a.printAnswer(body, "%s %s: grant %s\n", what, id, level)
}

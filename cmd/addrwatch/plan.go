package main

import (
	"context"
	"flag"
	"net/http"
)

var planSetCommand = &command{
	words:   []string{"plan", "set"},
	args:    []string{"PLAN"},
	summary: "switch the account to the base or extended plan",
	details: `Switch the account's plan (PUT /owner/v1/plan). PLAN is base or extended.`,
	example: "addrwatch plan set extended --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			if err := checkOneOf("PLAN", args[0], plans...); err != nil {
				return err
			}
			return setPlan(ctx, a, args[0])
		}
	},
}

func setPlan(ctx context.Context, a *app, plan string) error {
	c, err := a.ownerClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPut, "/owner/v1/plan", map[string]string{"plan": plan})
	if err != nil {
		return err
	}
	return a.printAnswer(body, "plan: %s\n", plan)
}

package main

import (
	"context"
	"flag"
	"net/http"
)

// The owner's login for the site, and the account it names.

var loginSetCommand = &command{
	words:    []string{"login", "set"},
	args:     []string{"NAME"},
	synopsis: "--current-password PASSWORD",
	summary:  "set or change the login the owner signs in with",
	details: `Set or change the owner's login (PUT /owner/v1/login): an e-mail address or
a user name, 3 to 254 ASCII letters, digits and . _ - + @, unique across
accounts without regard to case. The old login stops working at once. It
needs the current password, so a stolen owner secret or session alone
cannot change how the account signs in; repeated wrong passwords are
answered 429 with Retry-After. A login another account has is refused with
409 CONFLICT.`,
	example: "addrwatch login set alice@example.com --current-password 'my words' --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(fs *flag.FlagSet) action {
		current := fs.String("current-password", "", "the owner's current `PASSWORD` (required)")
		return func(ctx context.Context, a *app, args []string) error {
			if *current == "" {
				return usagef("--current-password is required")
			}
			c, err := a.ownerClient()
			if err != nil {
				return err
			}
			body, err := c.do(ctx, http.MethodPut, "/owner/v1/login", map[string]string{"login": args[0], "current_password": *current})
			if err != nil {
				return err
			}
			var set struct {
				Login string `json:"login"`
			}
			if err := decodeResponse(body, &set); err != nil {
				return err
			}
			return a.printAnswer(body, "login: %s\n", set.Login)
		}
	},
}

var accountShowCommand = &command{
	words:   []string{"account", "show"},
	summary: "print the account's id, login and plan",
	details: `Print the owner's account: its account_id, login (empty when it has none
yet) and plan (GET /owner/v1/account).`,
	example: "addrwatch account show --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, _ []string) error {
			c, err := a.ownerClient()
			if err != nil {
				return err
			}
			body, err := c.do(ctx, http.MethodGet, "/owner/v1/account", nil)
			if err != nil {
				return err
			}
			var account struct {
				AccountID string `json:"account_id"`
				Login     string `json:"login"`
				Plan      string `json:"plan"`
			}
			if err := decodeResponse(body, &account); err != nil {
				return err
			}
			return a.printAnswer(body, "account_id: %s\nlogin: %s\nplan: %s\n", account.AccountID, account.Login, account.Plan)
		}
	},
}

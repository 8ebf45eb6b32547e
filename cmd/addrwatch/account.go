package main

import (
	"context"
	"errors"
	"flag"
	"net/http"
)

// plans are the account plans the server knows (ARCHITECTURE.md, "Admin API").
var plans = []string{"base", "extended"}

var accountCreateCommand = &command{
	words:    []string{"account", "create"},
	synopsis: "--plan base|extended --password PASSWORD [--login NAME]",
	summary:  "create an account; prints its account_id and owner secret",
	details: `Create an account through the admin API (POST /admin/v1/accounts) and print
its account_id and owner secret. The owner secret is shown only in this
response: the server keeps only its hash. --login gives the owner a login
for the site (an e-mail address or a user name, unique across accounts
without regard to case); the owner can set or change it later with
"addrwatch login set".`,
	example: "addrwatch account create --plan base --password 'correct horse battery staple' --login alice@example.com",
	api:     adminAPI,
	define: func(fs *flag.FlagSet) action {
		plan := fs.String("plan", "", "account plan: `base|extended` (required)")
		password := fs.String("password", "", "the owner's sign-in `PASSWORD` (required)")
		login := fs.String("login", "", "the owner's sign-in `NAME`: 3 to 254 ASCII letters, digits and . _ - + @ (optional)")
		return func(ctx context.Context, a *app, _ []string) error {
			if err := checkOneOf("--plan", *plan, plans...); err != nil {
				return err
			}
			if *password == "" {
				return usagef("--password is required")
			}
			return createAccount(ctx, a, *plan, *password, *login)
		}
	},
}

func createAccount(ctx context.Context, a *app, plan, password, login string) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	request := map[string]string{"plan": plan, "password": password}
	if login != "" {
		request["login"] = login
	}
	body, err := c.do(ctx, http.MethodPost, "/admin/v1/accounts", request)
	if err != nil {
		return err
	}
	var created struct {
		AccountID   string `json:"account_id"`
		OwnerSecret string `json:"owner_secret"`
	}
	if err := decodeResponse(body, &created); err != nil {
		return err
	}
	if created.AccountID == "" || created.OwnerSecret == "" {
		return errors.New("unexpected response from server: account_id or owner_secret missing")
	}
	err = a.printAnswer(body, "account_id: %s\nowner_secret: %s\n", created.AccountID, created.OwnerSecret)
	creationNotice(a.stderr, "owner secret")
	return err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
)

// plans are the account plans the server knows (ARCHITECTURE.md, "Admin API").
var plans = []string{"base", "extended"}

var accountCreateCommand = &command{
	words:    []string{"account", "create"},
	synopsis: "--plan base|extended --password PASSWORD",
	summary:  "create an account; prints its account_id and owner secret",
	details: `Create an account through the admin API (POST /admin/v1/accounts) and print
its account_id and owner secret. The owner secret is shown only in this
response: the server keeps only its hash.`,
	example: "addrwatch account create --plan base --password 'correct horse battery staple'",
	api:     adminAPI,
	define: func(fs *flag.FlagSet) action {
		plan := fs.String("plan", "", "account plan: `base|extended` (required)")
		password := fs.String("password", "", "the owner's sign-in `PASSWORD` (required)")
		return func(ctx context.Context, a *app, _ []string) error {
			if err := checkOneOf("--plan", *plan, plans...); err != nil {
				return err
			}
			if *password == "" {
				return usagef("--password is required")
			}
			return createAccount(ctx, a, *plan, *password)
		}
	},
}

func createAccount(ctx context.Context, a *app, plan, password string) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPost, "/admin/v1/accounts", map[string]string{
		"plan":     plan,
		"password": password,
	})
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
	if a.globals.json {
		err = printRaw(a.stdout, body)
	} else {
		_, err = fmt.Fprintf(a.stdout, "account_id: %s\nowner_secret: %s\n", created.AccountID, created.OwnerSecret)
	}
	creationNotice(a.stderr, "owner secret")
	return err
}

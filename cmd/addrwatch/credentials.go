package main

import (
	"context"
	"errors"
	"flag"
	"net/http"
)

// The owner's own credentials. Both commands need the current password: a
// stolen owner secret or session alone cannot take the account over. Both
// print a new owner secret, shown only once.

var passwordChangeCommand = &command{
	words:    []string{"password", "change"},
	synopsis: "--current-password PASSWORD --new-password PASSWORD",
	summary:  "change the sign-in password; prints a new owner secret",
	details: `Change the owner's sign-in password (POST /owner/v1/password) and print the
new owner secret the server issues with it, shown only in this response.
Every API key, the old owner secret and every other session stop working;
the session that made the change, if any, goes on. Repeated wrong passwords
are answered 429 with Retry-After.`,
	example: "addrwatch password change --current-password 'old words' --new-password 'new words' --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(fs *flag.FlagSet) action {
		current := fs.String("current-password", "", "the owner's current `PASSWORD` (required)")
		next := fs.String("new-password", "", "the new `PASSWORD`, 8 to 72 bytes (required)")
		return func(ctx context.Context, a *app, _ []string) error {
			if *current == "" {
				return usagef("--current-password is required")
			}
			if *next == "" {
				return usagef("--new-password is required")
			}
			return postForOwnerSecret(ctx, a, "/owner/v1/password", map[string]string{"current_password": *current, "new_password": *next})
		}
	},
}

var ownerSecretRotateCommand = &command{
	words:    []string{"owner-secret", "rotate"},
	synopsis: "--current-password PASSWORD",
	summary:  "replace the owner secret; prints the new one",
	details: `Replace the owner secret (POST /owner/v1/owner-secret) and print the new one,
shown only in this response. Every API key and the old owner secret stop
working; sessions go on. Repeated wrong passwords are answered 429 with
Retry-After.`,
	example: "addrwatch owner-secret rotate --current-password 'my words' --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(fs *flag.FlagSet) action {
		current := fs.String("current-password", "", "the owner's current `PASSWORD` (required)")
		return func(ctx context.Context, a *app, _ []string) error {
			if *current == "" {
				return usagef("--current-password is required")
			}
			return postForOwnerSecret(ctx, a, "/owner/v1/owner-secret", map[string]string{"current_password": *current})
		}
	},
}

// postForOwnerSecret posts body to path and prints the new owner secret of
// the answer.
func postForOwnerSecret(ctx context.Context, a *app, path string, body map[string]string) error {
	c, err := a.ownerClient()
	if err != nil {
		return err
	}
	answer, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	var issued struct {
		OwnerSecret string `json:"owner_secret"`
	}
	if err := decodeResponse(answer, &issued); err != nil {
		return err
	}
	if issued.OwnerSecret == "" {
		return errors.New("unexpected response from server: owner_secret missing")
	}
	err = a.printAnswer(answer, "owner_secret: %s\n", issued.OwnerSecret)
	creationNotice(a.stderr, "owner secret")
	return err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"text/tabwriter"
)

// capabilities are what an agent API key may be allowed to do.
var capabilities = []string{"read", "write"}

var keyCreateCommand = &command{
	words:    []string{"key", "create"},
	synopsis: "--capability read|write --name NAME",
	summary:  "create an agent API key; prints the full key once",
	details: `Create an agent API key for the account (POST /owner/v1/keys) and print it.
The full key appears only in this response: the server keeps only its hash.
A read key can only read; a write key can write where a grant allows it.`,
	example: "addrwatch key create --capability read --name dashboard --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(fs *flag.FlagSet) action {
		capability := fs.String("capability", "", "what the key may do: `read|write` (required)")
		name := fs.String("name", "", "a `NAME` to recognise the key by (required)")
		return func(ctx context.Context, a *app, _ []string) error {
			if err := checkOneOf("--capability", *capability, capabilities...); err != nil {
				return err
			}
			if *name == "" {
				return usagef("--name is required")
			}
			return createKey(ctx, a, *capability, *name)
		}
	},
}

var keyListCommand = &command{
	words:   []string{"key", "list"},
	summary: "list the account's agent API keys",
	details: `List the account's agent API keys (GET /owner/v1/keys): id, capability, name
and creation time. Keys themselves are never shown again after creation.`,
	example: "addrwatch key list --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, _ []string) error {
			return listKeys(ctx, a)
		}
	},
}

var keyRevokeCommand = &command{
	words:   []string{"key", "revoke"},
	args:    []string{"KEY_ID"},
	summary: "revoke an agent API key",
	details: `Revoke an agent API key (DELETE /owner/v1/keys/KEY_ID). Requests made with
it are refused from then on.`,
	example: "addrwatch key revoke key_4Qm9 --owner-secret \"$OWNER_SECRET\"",
	api:     ownerAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			if err := checkID("KEY_ID", args[0]); err != nil {
				return err
			}
			return revokeKey(ctx, a, args[0])
		}
	},
}

// keyInfo is a key as the owner API describes it. Key is set only in the
// response that creates the key.
type keyInfo struct {
	KeyID      string `json:"key_id"`
	Key        string `json:"key,omitempty"`
	Capability string `json:"capability"`
	Name       string `json:"name"`
	CreatedAt  string `json:"created_at,omitempty"`
}

func createKey(ctx context.Context, a *app, capability, name string) error {
	c, err := a.ownerClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPost, "/owner/v1/keys", map[string]string{
		"capability": capability,
		"name":       name,
	})
	if err != nil {
		return err
	}
	var created keyInfo
	if err := decodeResponse(body, &created); err != nil {
		return err
	}
	if created.KeyID == "" || created.Key == "" {
		return errors.New("unexpected response from server: key_id or key missing")
	}
	err = a.printAnswer(body, "key_id: %s\nkey: %s\ncapability: %s\nname: %s\n", created.KeyID, created.Key, created.Capability, created.Name)
	creationNotice(a.stderr, "key")
	return err
}

func listKeys(ctx context.Context, a *app) error {
	c, err := a.ownerClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodGet, "/owner/v1/keys", nil)
	if err != nil {
		return err
	}
	var list struct {
		Keys []keyInfo `json:"keys"`
	}
	if err := decodeResponse(body, &list); err != nil {
		return err
	}
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY_ID\tCAPABILITY\tNAME\tCREATED_AT")
	for _, k := range list.Keys {
		// The list never carries the key itself; printing only these
		// fields keeps it that way even if a server ever sent one.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.KeyID, k.Capability, k.Name, k.CreatedAt)
	}
	return tw.Flush()
}

func revokeKey(ctx context.Context, a *app, keyID string) error {
	c, err := a.ownerClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodDelete, "/owner/v1/keys/"+url.PathEscape(keyID), nil)
	if err != nil {
		return err
	}
	return a.printAnswer(body, "revoked key %s\n", keyID)
}

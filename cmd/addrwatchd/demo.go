package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd"
)

// demoFile keeps the demo credentials (mode 0600) so that a later
// `make run` on the same data dir can print them again: the server itself
// stores only hashes.
const demoFile = "demo-credentials"

// demoLogin is the demo account's login on the site.
const demoLogin = "demo"

// demoNode is what the demo needs of the node: whether this start made
// a new data dir, and a wait until the cluster serves.
type demoNode struct {
	bootstrapped  bool
	waitForLeader func(context.Context) error
}

// runDemo creates the demo account on a new data dir, or reprints the
// saved demo credentials on an existing one.
func runDemo(ctx context.Context, cfg config, api *httpd.Server, node demoNode, out io.Writer) error {
	path := filepath.Join(cfg.Data, demoFile)
	if !node.bootstrapped {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--demo only creates an account on a new data dir, and %s has no saved demo credentials", cfg.Data)
		}
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	wait, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	if err := node.waitForLeader(wait); err != nil {
		return fmt.Errorf("no leader: %w", err)
	}
	password := "demo-" + randomHex(8)
	account, aerr := api.CreateAccount(wait, actors.PlanBase, password, demoLogin)
	if aerr != nil {
		return aerr
	}
	owner, _ := api.OwnerCredential(account.OwnerSecret)
	readKey, kerr := api.CreateKey(wait, owner, actors.LevelRead, "demo read key")
	if kerr != nil {
		return kerr
	}
	writeKey, kerr := api.CreateKey(wait, owner, actors.LevelWrite, "demo write key")
	if kerr != nil {
		return kerr
	}
	base := "http://" + cfg.HTTP
	var b strings.Builder
	fmt.Fprintf(&b, "\naddrwatch demo account (saved in %s)\n", path)
	fmt.Fprintf(&b, "  site:          %s/  (sign in with this login and password)\n", base)
	fmt.Fprintf(&b, "  login:         %s\n", account.Login)
	fmt.Fprintf(&b, "  password:      %s\n", password)
	fmt.Fprintf(&b, "  account id:    %s\n", account.AccountID)
	fmt.Fprintf(&b, "  owner secret:  %s\n", account.OwnerSecret)
	fmt.Fprintf(&b, "  read key:      %s\n", readKey.Key)
	fmt.Fprintf(&b, "  write key:     %s\n", writeKey.Key)
	fmt.Fprintf(&b, "\nTry it:\n  curl -s -H 'Authorization: Bearer %s' %s/v1/me\n\n", readKey.Key, base)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return err
	}
	_, err := io.WriteString(out, b.String())
	return err
}

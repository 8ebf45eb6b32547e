package main

import (
	"bytes"
	"fmt"
	"html"
)

// site: an owner signed in to the site reloading the API access panel,
// the page with the biggest tables: one row per key, and one grants row
// per Account card and per Space. So the scenario runs against accounts
// filled to the extended plan's limits (ten Account cards, ten Spaces)
// with siteKeys keys and a mix of none, read and write grants. It makes
// those accounts itself, one per --accounts, rather than filling the
// shared ones (the API scenarios need room to create cards), and deletes
// them when it ends.

const (
	// siteKeys is how many API keys each site account holds: an owner
	// with an agent or two per machine and a few retired ones not yet
	// revoked (the limit is 100).
	siteKeys = 20
	// siteSessionCookie is the site's session cookie on plain HTTP.
	siteSessionCookie = "addrwatch_session"
	// sitePanelMarker is on the panel and on no other page: a 200 without
	// it (the sign-in form, an error page) is not a panel load.
	sitePanelMarker = "API keys</h2>"
	opSitePanel     = "GET /access (panel)"
)

// siteAccount is a full account and its site session.
type siteAccount struct {
	*account
	session string
	// names are every key, Account card and Sheet Space name, which the
	// panel must show.
	names []string
}

// setupSiteAccounts makes cfg.accounts full accounts, signs each in and
// checks once, untimed, that its panel shows everything in it. The stop
// it returns deletes the accounts.
func setupSiteAccounts(e *env) (func(), error) {
	cfg := e.cfg
	e.site = make([]*siteAccount, cfg.accounts)
	stop := func() {
		forEachWorker(len(e.site), func(i int) error {
			if a := e.site[i]; a != nil {
				// Best effort: a leftover account only takes disk space.
				e.client.call("DELETE", a.target+"/owner/v1/account", a.ownerSecret, map[string]any{"confirm": true, "current_password": a.password}, 204, nil)
			}
			return nil
		})
		e.site = nil
	}
	// Each account costs the server two bcrypt hashes (create, sign in),
	// so only a few are made at once, as in setupFixture.
	par := min(setupParallelism, cfg.accounts)
	err := forEachWorker(par, func(j int) error {
		for i := j; i < cfg.accounts; i += par {
			a, err := setupSiteAccount(e.client, cfg, cfg.targets[i%len(cfg.targets)])
			if a != nil {
				e.site[i] = a
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("site setup: %w", err)
	}
	return stop, nil
}

// setupSiteAccount makes one account as setupAccount does, with nine Sheet
// Spaces granted write (ten Spaces with the Bitcoin Space), then fills it:
// the rest of its keys, ten Account cards, and grants that differ from
// row to row. It returns the account as soon as it exists, so that a
// failure later still lets the caller delete it.
func setupSiteAccount(c *client, cfg *config, target string) (*siteAccount, error) {
	base, err := setupAccount(c, cfg, target, sheetsPerAccountMax, false)
	if err != nil {
		return nil, err
	}
	a := &siteAccount{account: base, names: []string{"bench write", "bench read"}}
	for k := range sheetsPerAccountMax {
		a.names = append(a.names, fmt.Sprintf("bench sheet %d", k+1))
	}
	owner := target + "/owner/v1"
	for k := 2; k < siteKeys; k++ {
		name, capability := fmt.Sprintf("site agent %02d", k+1), "read"
		if k%2 == 1 {
			capability = "write"
		}
		if err := c.call("POST", owner+"/keys", a.ownerSecret, map[string]string{"capability": capability, "name": name}, 201, nil); err != nil {
			return a, fmt.Errorf("create key: %w", err)
		}
		a.names = append(a.names, name)
	}
	// Cards the owner creates start at none: a third stay there, a third
	// are granted read and a third write.
	for k := range cardsPerPlaceMax {
		name := fmt.Sprintf("site card %02d", k+1)
		var card struct {
			Card struct {
				ID string `json:"id"`
			} `json:"card"`
		}
		if err := c.call("POST", owner+"/portfolio/cards", a.ownerSecret, map[string]string{"address": randomAddress(), "name": name}, 201, &card); err != nil {
			return a, fmt.Errorf("create Account card: %w", err)
		}
		a.names = append(a.names, name)
		if level := []string{"", "read", "write"}[k%3]; level != "" {
			if err := c.call("PUT", owner+"/grants/portfolio/"+card.Card.ID, a.ownerSecret, map[string]string{"level": level}, 200, nil); err != nil {
				return a, fmt.Errorf("grant on an Account card: %w", err)
			}
		}
	}
	// setupAccount granted write on every Space; every other Sheet goes
	// down to read.
	for k, s := range a.sheets {
		if k%2 == 1 {
			if err := c.call("PUT", owner+"/grants/bookmark-spaces/"+s.id, a.ownerSecret, map[string]string{"level": "read"}, 200, nil); err != nil {
				return a, fmt.Errorf("grant on a Space: %w", err)
			}
		}
	}
	var session struct {
		Session string `json:"session"`
	}
	if err := c.call("POST", owner+"/sessions", "", map[string]string{"account_id": a.id, "password": a.password}, 201, &session); err != nil {
		return a, fmt.Errorf("sign in: %w", err)
	}
	a.session = session.Session
	return a, checkPanel(c, target, a)
}

// sitePanelRequest is a load of a's panel through target.
func sitePanelRequest(target string, a *siteAccount) request {
	return request{op: opSitePanel, method: "GET", url: target + "/access",
		cookie: siteSessionCookie + "=" + a.session, expect: []byte(sitePanelMarker)}
}

// checkPanel loads the panel once and checks that it shows every name in
// the account, so the scenario measures the full tables it claims to.
func checkPanel(c *client, target string, a *siteAccount) error {
	req := sitePanelRequest(target, a)
	var resp response
	c.do(&req, &resp)
	if f := resp.failure(); f != "" {
		return fmt.Errorf("GET %s with the session cookie: %s (a 303 means the session was refused): %.300s", req.url, f, resp.body)
	}
	for _, name := range a.names {
		if !bytes.Contains(resp.body, []byte(html.EscapeString(name))) {
			return fmt.Errorf("the panel of account %s does not show %q", a.id, name)
		}
	}
	return nil
}

// siteWorker reloads the panel of account w mod --accounts. A 303 (the
// session was refused and the page sends the browser to sign in) and a
// 200 without the panel are errors, never successes.
type siteWorker struct{ req request }

func newSiteWorker(e *env, w int) worker {
	return &siteWorker{req: sitePanelRequest(e.target(w), e.site[w%len(e.site)])}
}

func (w *siteWorker) next() *request           { return &w.req }
func (w *siteWorker) done(*request, *response) {}

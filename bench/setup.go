package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	agentapi "github.com/addrwatch/addrwatch/client"
)

// setupParallelism bounds concurrent account set-ups. Each account costs
// the server a bcrypt hash (~60 ms of a core); a few at once keep every
// core busy, more would only queue.
const setupParallelism = 8

// Extended-plan capacity (the spec's Limits): ten Spaces, the first of
// which is the account's Bitcoin Space, and ten cards per Space and in the
// portfolio.
const (
	sheetsPerAccountMax = 9
	cardsPerPlaceMax    = 10
	// seededCards is how many Account cards and bookmark cards each account
	// gets for the read scenarios.
	seededCards = 3
)

// account is one bench account and everything created in it.
type account struct {
	id           string
	ownerSecret  string
	password     string // the owner's, for signing in to the site
	writeKey     string // capability write; the Sheets and the Bitcoin Space are granted write
	readKey      string // capability read, for the read-only scenario
	target       string // the node its set-up went through
	bitcoinSpace string // the first Space, granted write
	sheets       []*sheetSpace
	// writer is writeKey's Agent API client through target, for setup and
	// teardown; the load sends its own requests (setupagent.go says why).
	writer *agentapi.Agent
}

// fixture is the accounts of a run.
type fixture struct {
	accounts []*account
}

// waitReady polls the admin /readyz until a leader is known, so that a
// bench started right after the server (make bench) does not race it.
func waitReady(c *client, cfg *config, stderr io.Writer) error {
	start := time.Now()
	said := false
	for {
		err := c.call("GET", cfg.admin+"/readyz", "", nil, 200, nil)
		if err == nil {
			return nil
		}
		if time.Since(start) > cfg.wait {
			return fmt.Errorf("no ready addrwatch node at --admin %s after %s (%v); start one first, e.g. `bin/addrwatchd --limits off --data /tmp/aw`", cfg.admin, cfg.wait, err)
		}
		if !said && time.Since(start) > time.Second { // a node that is just starting needs no comment
			fmt.Fprintf(stderr, "waiting up to %s for %s/readyz …\n", cfg.wait, cfg.admin)
			said = true
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loadAdminToken returns --admin-token, else the server's
// <data>/admin-token (written there on its first start).
func loadAdminToken(cfg *config) error {
	if cfg.adminToken != "" {
		return nil
	}
	path := filepath.Join(cfg.data, "admin-token")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no admin token: pass --admin-token, set ADDRWATCH_ADMIN_TOKEN, or point --data at the server's data dir (%v)", err)
	}
	cfg.adminToken = strings.TrimSpace(string(b))
	return nil
}

// setupFixture creates cfg.accounts accounts, each with a write and a read
// key, sheetsPerAccount Sheet Spaces granted write, the Bitcoin Space
// granted write, and, with cards, a few Account and bookmark cards.
func setupFixture(c *client, cfg *config, sheetsPerAccount int, cards bool, prog *progress, stderr io.Writer) (*fixture, error) {
	started := time.Now()
	fix := &fixture{accounts: make([]*account, cfg.accounts)}
	var (
		wg       sync.WaitGroup
		done     atomic.Int64
		mu       sync.Mutex
		firstErr error
	)
	jobs := make(chan int)
	for range min(setupParallelism, cfg.accounts) {
		wg.Go(func() {
			for i := range jobs {
				a, err := setupAccount(c, cfg, cfg.targets[i%len(cfg.targets)], sheetsPerAccount, cards)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				fix.accounts[i] = a
				prog.status(fmt.Sprintf("setup: %d/%d accounts", done.Add(1), cfg.accounts))
			}
		})
	}
	for i := range cfg.accounts {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	prog.finish()
	if firstErr != nil {
		return nil, firstErr
	}
	seeded := ""
	if cards {
		seeded = fmt.Sprintf(", %d Account and %d bookmark cards", seededCards, seededCards)
	}
	fmt.Fprintf(stderr, "setup: %d accounts, each with a write and a read key, %d Sheet Space(s)%s, in %s\n",
		cfg.accounts, sheetsPerAccount, seeded, time.Since(started).Round(time.Millisecond))
	return fix, nil
}

func setupAccount(c *client, cfg *config, target string, sheets int, cards bool) (*account, error) {
	a := &account{target: target, password: randomHex(16)}
	var err error
	if a.id, a.ownerSecret, err = createAccount(c, cfg, a.password); err != nil {
		return nil, err
	}
	owner := target + "/owner/v1"

	for _, k := range []struct {
		capability string
		into       *string
	}{{"write", &a.writeKey}, {"read", &a.readKey}} {
		var key struct {
			Key string `json:"key"`
		}
		if err := c.call("POST", owner+"/keys", a.ownerSecret, map[string]string{"capability": k.capability, "name": "bench " + k.capability}, 201, &key); err != nil {
			return nil, fmt.Errorf("create key: %w", err)
		}
		*k.into = key.Key
	}
	// The write key's setup calls to /v1 go through package client; the
	// load's requests stay on fasthttp (setupagent.go says why).
	writer, err := c.agent(target, a.writeKey)
	if err != nil {
		return nil, fmt.Errorf("the write key's Agent API client: %w", err)
	}
	a.writer = writer

	list, err := listSpaces(c, owner, a.ownerSecret)
	if err != nil {
		return nil, err
	}
	for _, s := range list.Spaces {
		if s.Type == "bitcoin" {
			a.bitcoinSpace = s.ID
			break
		}
	}
	if a.bitcoinSpace == "" {
		return nil, fmt.Errorf("account %s has no Bitcoin Space", a.id)
	}
	// Each create answers with the next bookmark_revision, so the Sheets
	// are created back to back; grants come after, as they may move it.
	revision := list.BookmarkRevision
	for k := range sheets {
		var made struct {
			Space struct {
				ID string `json:"id"`
			} `json:"space"`
			BookmarkRevision string `json:"bookmark_revision"`
		}
		req := map[string]string{"expected_bookmark_revision": revision, "name": fmt.Sprintf("bench sheet %d", k+1), "type": "sheet"}
		if err := c.call("POST", owner+"/bookmark-spaces", a.ownerSecret, req, 201, &made); err != nil {
			return nil, fmt.Errorf("create Sheet Space: %w", err)
		}
		a.sheets = append(a.sheets, &sheetSpace{id: made.Space.ID})
		revision = made.BookmarkRevision
	}
	for _, id := range append([]string{a.bitcoinSpace}, spaceIDs(a.sheets)...) {
		if err := c.call("PUT", owner+"/grants/bookmark-spaces/"+id, a.ownerSecret, map[string]string{"level": "write"}, 200, nil); err != nil {
			return nil, fmt.Errorf("grant write: %w", err)
		}
	}
	if cards {
		if err := seedCards(a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// spaceList is the owner's GET /owner/v1/bookmark-spaces: every Space's
// ID and type, and the revision of the set.
type spaceList struct {
	Spaces []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"spaces"`
	BookmarkRevision string `json:"bookmark_revision"`
}

func listSpaces(c *client, owner, ownerSecret string) (spaceList, error) {
	var list spaceList
	if err := c.call("GET", owner+"/bookmark-spaces", ownerSecret, nil, 200, &list); err != nil {
		return list, fmt.Errorf("list Spaces: %w", err)
	}
	return list, nil
}

// createAccount creates an account on the extended plan through the admin
// API and returns its ID and owner secret.
func createAccount(c *client, cfg *config, password string) (id, ownerSecret string, err error) {
	var created struct {
		AccountID   string `json:"account_id"`
		OwnerSecret string `json:"owner_secret"`
	}
	body := map[string]string{"plan": "extended", "password": password}
	if err := c.call("POST", cfg.admin+"/admin/v1/accounts", cfg.adminToken, body, 201, &created); err != nil {
		var se *statusError
		if errors.As(err, &se) && se.status == 401 {
			return "", "", fmt.Errorf("the admin token was refused by %s: pass the server's --admin-token, or --data of its data dir", cfg.admin)
		}
		return "", "", fmt.Errorf("create account: %w", err)
	}
	return created.AccountID, created.OwnerSecret, nil
}

// seedCards gives the account's card lists something to return: Account
// cards created by the write key (so its grant is write) and bookmark cards
// in the Bitcoin Space. Each bookmark card is created as of the Space
// version the previous answer carried, so the Space is read only once.
func seedCards(a *account) error {
	ctx := context.Background() // setup is bounded by its HTTP client's timeout
	for range seededCards {
		if _, err := createPortfolioCard(ctx, a.writer, "bench seed"); err != nil {
			return fmt.Errorf("seed Account card: %w", err)
		}
	}
	space, err := a.writer.API.GetSpaceWithResponse(ctx, a.bitcoinSpace)
	if err == nil {
		err = checkAnswer(space.HTTPResponse, space.Body, 200)
	}
	if err != nil {
		return fmt.Errorf("read the Bitcoin Space: %w", err)
	}
	version := space.JSON200.Space.Version
	for range seededCards {
		key := agentapi.NewIdempotencyKey()
		name := "bench seed"
		made, err := a.writer.API.CreateBookmarkCardWithResponse(ctx, a.bitcoinSpace, &agentapi.CreateBookmarkCardParams{IdempotencyKey: &key},
			agentapi.BookmarkCreateRequest{ExpectedSpaceVersion: version, Address: randomAddress(), Name: &name})
		if err == nil {
			err = checkAnswer(made.HTTPResponse, made.Body, 201)
		}
		if err != nil {
			return fmt.Errorf("seed bookmark card: %w", err)
		}
		version = made.JSON201.Space.Version
	}
	return nil
}

// createPortfolioCard adds an Account card named name at a fresh address,
// with an idempotency key so that the agent's retry of a 503 cannot create
// it twice.
func createPortfolioCard(ctx context.Context, agent *agentapi.Agent, name string) (*agentapi.Card, error) {
	key := agentapi.NewIdempotencyKey()
	r, err := agent.API.CreatePortfolioCardWithResponse(ctx, &agentapi.CreatePortfolioCardParams{IdempotencyKey: &key},
		agentapi.CardCreateRequest{Address: randomAddress(), Name: &name})
	if err == nil {
		err = checkAnswer(r.HTTPResponse, r.Body, 201)
	}
	if err != nil {
		return nil, err
	}
	return &r.JSON201.Card, nil
}

func spaceIDs(sheets []*sheetSpace) []string {
	ids := make([]string, len(sheets))
	for i, s := range sheets {
		ids[i] = s.id
	}
	return ids
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// fillPortfolios tops every account's portfolio up to its ten Account
// cards (auth-reads lists a full one) and returns a stop that deletes the
// cards it added, so a later agent-mix still has room to create its own.
func fillPortfolios(e *env) (func(), error) {
	ctx := context.Background() // setup is bounded by its HTTP client's timeout
	added := make([][]*agentapi.Card, len(e.fix.accounts))
	err := forEachWorker(len(e.fix.accounts), func(i int) error {
		a := e.fix.accounts[i]
		list, err := a.writer.API.ListPortfolioCardsWithResponse(ctx)
		if err == nil {
			err = checkAnswer(list.HTTPResponse, list.Body, 200)
		}
		if err != nil {
			return fmt.Errorf("list Account cards: %w", err)
		}
		for range cardsPerPlaceMax - len(list.JSON200.Cards) {
			card, err := createPortfolioCard(ctx, a.writer, "bench full portfolio")
			if err != nil {
				return fmt.Errorf("fill the portfolio: %w", err)
			}
			added[i] = append(added[i], card)
		}
		return nil
	})
	stop := func() {
		forEachWorker(len(e.fix.accounts), func(i int) error {
			a := e.fix.accounts[i]
			for _, c := range added[i] {
				// Best effort: a card left behind only limits a later agent-mix.
				key := agentapi.NewIdempotencyKey()
				a.writer.API.DeletePortfolioCardWithResponse(ctx, c.Id, &agentapi.DeletePortfolioCardParams{IdempotencyKey: &key},
					agentapi.CardDeleteRequest{ExpectedVersion: c.Version})
			}
			return nil
		})
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

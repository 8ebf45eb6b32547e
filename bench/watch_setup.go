package main

import (
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// The watched addresses of bench watch live on cards, as an owner's do:
// Account cards and the cards of Bitcoin Spaces, the two kinds the
// follower watches. An extended account holds ten Account cards and ten
// Spaces of ten cards (actors/plan.go), and every one of those Spaces may
// be a Bitcoin Space, so an account watches at most 110 addresses; more
// addresses need more accounts.
const (
	spacesPerAccountMax         = 10
	watchAddressesPerAccountMax = cardsPerPlaceMax * (1 + spacesPerAccountMax)
)

// watchAccount is one account of bench watch and the addresses its cards
// hold.
type watchAccount struct {
	id          string
	ownerSecret string
	addresses   []string
}

// spreadAddresses says how many addresses each account holds: total over
// accounts as evenly as can be, the first ones one more.
func spreadAddresses(total, accounts int) []int {
	out := make([]int, accounts)
	for i := range out {
		out[i] = total / accounts
		if i < total%accounts {
			out[i]++
		}
	}
	return out
}

// cardPlaces says where an account's n addresses go: half of them (at
// most ten) on Account cards, the rest on cards of Bitcoin Spaces of ten,
// the first Space being the one every account starts with. Both kinds are
// watched, so a run has both wherever it can.
func cardPlaces(n int) (portfolio int, spaces []int) {
	portfolio = min((n+1)/2, cardsPerPlaceMax)
	for rest := n - portfolio; rest > 0; rest -= cardsPerPlaceMax {
		spaces = append(spaces, min(rest, cardsPerPlaceMax))
	}
	return portfolio, spaces
}

// randomRegtestAddress is a fresh P2WPKH address on regtest (bcrt1q…)
// that nobody holds a key of: the watched addresses only receive.
func randomRegtestAddress() string {
	var h [20]byte
	rand.Read(h[:])
	a, err := btcutil.NewAddressWitnessPubKeyHash(h[:], &chaincfg.RegressionNetParams)
	if err != nil {
		panic(err) // 20 bytes always make an address
	}
	return a.EncodeAddress()
}

// createWatchAccounts creates cfg.accounts accounts (setupParallelism at
// a time: each costs the server a password hash) with no cards yet.
func createWatchAccounts(c *client, cfg *config) ([]*watchAccount, error) {
	accounts := make([]*watchAccount, cfg.accounts)
	err := forEachBounded(len(accounts), setupParallelism, func(i int) error {
		id, secret, err := createAccount(c, cfg, randomHex(16))
		accounts[i] = &watchAccount{id: id, ownerSecret: secret}
		return err
	})
	return accounts, err
}

// addWatchedCards gives every account its share of addresses as cards,
// setupParallelism accounts at a time.
func addWatchedCards(c *client, public string, accounts []*watchAccount, total int) error {
	shares := spreadAddresses(total, len(accounts))
	return forEachBounded(len(accounts), setupParallelism, func(i int) error {
		return addCards(c, public, accounts[i], shares[i])
	})
}

// addCards adds n cards at fresh addresses to a, as cardPlaces says,
// through the owner API.
func addCards(c *client, public string, a *watchAccount, n int) error {
	owner := public + "/owner/v1"
	portfolio, spaces := cardPlaces(n)
	for k := range portfolio {
		address := randomRegtestAddress()
		body := map[string]string{"address": address, "name": fmt.Sprintf("watched %d", k+1)}
		if err := c.call("POST", owner+"/portfolio/cards", a.ownerSecret, body, 201, nil); err != nil {
			return fmt.Errorf("add an Account card: %w", err)
		}
		a.addresses = append(a.addresses, address)
	}
	ids, err := bitcoinSpaces(c, owner, a, len(spaces))
	if err != nil {
		return err
	}
	for s, cards := range spaces {
		var space struct {
			Space struct {
				Version string `json:"version"`
			} `json:"space"`
		}
		if err := c.call("GET", owner+"/bookmark-spaces/"+ids[s], a.ownerSecret, nil, 200, &space); err != nil {
			return fmt.Errorf("read a Bitcoin Space: %w", err)
		}
		// Each card is added as of the version the previous answer gave.
		version := space.Space.Version
		for k := range cards {
			address := randomRegtestAddress()
			body := map[string]string{"expected_space_version": version, "address": address, "name": fmt.Sprintf("watched %d.%d", s+1, k+1)}
			if err := c.call("POST", owner+"/bookmark-spaces/"+ids[s]+"/cards", a.ownerSecret, body, 201, &space); err != nil {
				return fmt.Errorf("add a bookmark card: %w", err)
			}
			version = space.Space.Version
			a.addresses = append(a.addresses, address)
		}
	}
	return nil
}

// bitcoinSpaces returns the IDs of n Bitcoin Spaces of a: the one it
// started with and as many new ones as it takes.
func bitcoinSpaces(c *client, owner string, a *watchAccount, n int) ([]string, error) {
	if n == 0 {
		return nil, nil
	}
	list, err := listSpaces(c, owner, a.ownerSecret)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range list.Spaces {
		if s.Type == "bitcoin" {
			ids = append(ids, s.ID)
		}
	}
	revision := list.BookmarkRevision
	for len(ids) < n {
		var made struct {
			Space struct {
				ID string `json:"id"`
			} `json:"space"`
			BookmarkRevision string `json:"bookmark_revision"`
		}
		body := map[string]string{"expected_bookmark_revision": revision, "name": fmt.Sprintf("watched %d", len(ids)+1), "type": "bitcoin"}
		if err := c.call("POST", owner+"/bookmark-spaces", a.ownerSecret, body, 201, &made); err != nil {
			return nil, fmt.Errorf("create a Bitcoin Space: %w", err)
		}
		ids, revision = append(ids, made.Space.ID), made.BookmarkRevision
	}
	return ids[:n], nil
}

// forEachBounded runs f for 0..n-1, at most parallel at once, and returns
// the first error; after one, the indexes not started are skipped.
func forEachBounded(n, parallel int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	jobs := make(chan int)
	for range min(parallel, n) {
		wg.Go(func() {
			for i := range jobs {
				mu.Lock()
				failed := first != nil
				mu.Unlock()
				if failed {
					continue
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return first
}

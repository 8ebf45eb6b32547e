package httpd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// benchAddrs are the ten cards' addresses.
var benchAddrs = func() []string {
	var out []string
	for i := range 10 {
		out = append(out, testaddr.P2PKH(fmt.Sprint("combined history bench ", i)))
	}
	return out
}()

// memoHistory answers each page once computed from memory, as the
// history cache does once warm, so the benchmark measures the History
// page and not the fake's making of transactions.
type memoHistory struct {
	*csvHistory
	mu    sync.Mutex
	pages map[memoKey]chain.HistoryPage
}

type memoKey struct {
	address       string
	offset, limit int
}

func (m *memoHistory) Page(c context.Context, address string, offset, limit int, force bool) (chain.HistoryPage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memoKey{address, offset, limit}
	if p, found := m.pages[k]; found {
		return p, nil
	}
	p, err := m.csvHistory.Page(c, address, offset, limit, force)
	if err == nil {
		m.pages[k] = p
	}
	return p, err
}

// BenchmarkSiteCombinedHistory draws the site's combined History of ten
// cards of 100 transactions each (1,000 in all), with the history
// upstream's pages in memory: the first page, and a search that keeps
// half of them sorted by amount, at its 11th page.
func BenchmarkSiteCombinedHistory(b *testing.B) {
	c := newClock()
	var addrs []csvAddr
	for _, a := range benchAddrs {
		addrs = append(addrs, csvAddr{address: a, confirmed: 100, age: time.Hour, step: time.Hour})
	}
	hist := &memoHistory{csvHistory: &csvHistory{now: c.now(), addrs: addrs}, pages: map[memoKey]chain.HistoryPage{}}
	s := New(Config{Store: newMemoryStore(b), Now: c.now, PasswordCost: bcrypt.MinCost, History: hist})
	created, err := s.CreateAccount(context.Background(), actors.PlanExtended, ownerTestPassword, "")
	if err != nil {
		b.Fatal(err)
	}
	o := &ownerTest{t: b, server: s, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}
	for i, a := range benchAddrs {
		if status, _, body := o.send("192.0.2.1", "POST", "/owner/v1/portfolio/cards", created.OwnerSecret, map[string]any{"address": a, "name": "Card " + string(rune('A'+i))}); status != 201 {
			b.Fatalf("card %d: %d %v", i, status, body)
		}
	}
	sc := newSiteClient(o)
	sc.mustSignIn()
	for _, bc := range []struct{ name, path string }{
		{"first-page", "/history"},
		{"search-sorted-page-11", "/history?q=abab&direction=received&sort=amount-desc&offset=250"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if page := sc.do("GET", bc.path, nil); page.status != 200 || !strings.Contains(page.body, `<tr id="tx-`) {
				b.Fatalf("%s: %d %.300s", bc.path, page.status, page.body)
			}
			b.ReportAllocs()
			for b.Loop() {
				sc.do("GET", bc.path, nil)
			}
		})
	}
}

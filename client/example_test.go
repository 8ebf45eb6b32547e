package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/addrwatch/addrwatch/client"
)

// Each example runs against fakeAgentAPI, a canned stand-in for the
// server (example_fake_test.go); a program passes the server's root URL,
// such as https://addrwatch.example, and its own API key.

func ExampleNew() {
	api := fakeAgentAPI()
	defer api.Close()

	agent, err := client.New(api.URL, "awk.example-key", nil)
	if err != nil {
		log.Fatal(err)
	}
	me, err := agent.Me(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(me.Capability, "key on the", me.Plan, "plan")
	fmt.Println("Account cards:", me.PortfolioCards.Used, "of", me.PortfolioCards.Limit)
	// Output:
	// write key on the extended plan
	// Account cards: 1 of 100
}

func ExampleAgent_CreatePortfolioCard() {
	api := fakeAgentAPI()
	defer api.Close()
	agent, _ := client.New(api.URL, "awk.example-key", nil)

	// One intended creation, one fresh Idempotency-Key: a retry after a
	// lost answer cannot create the card twice.
	name := "Savings"
	card, err := agent.CreatePortfolioCard(context.Background(), client.CardCreateRequest{Address: "bc1qexampleaddress", Name: &name})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(card.Id, card.Name, card.EffectiveAccess, card.Version)
	// Output: pc_1 Savings write v1
}

func ExampleAgent_UpdatePortfolioCard() {
	api := fakeAgentAPI()
	defer api.Close()
	agent, _ := client.New(api.URL, "awk.example-key", nil)

	// The agent read the card at version v1; the owner has renamed it
	// since. The first PATCH is 409 STALE_VERSION, so the client re-reads
	// the card, checks with apply that it still watches the address meant,
	// and writes once more with the current version.
	note := "cold storage"
	stillMeant := func(now client.Card) bool { return now.Address == "bc1qexampleaddress" }
	card, err := agent.UpdatePortfolioCard(context.Background(), "pc_1", "v1", client.CardPatchRequest{Note: &note}, stillMeant)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s | %s | %s\n", card.Name, card.Note, card.Version)
	// Output: Savings (owner's name) | cold storage | v3
}

func ExampleAgent_Transactions() {
	api := fakeAgentAPI()
	defer api.Close()
	agent, _ := client.New(api.URL, "awk.example-key", nil)

	// Pages of two, following next_offset; the loop sees one sequence.
	for tx, err := range agent.Transactions(context.Background(), "pc_1", 2) {
		if err != nil {
			log.Fatal(err) // an API error, or HISTORY_DEGRADED: never a short History
		}
		fmt.Println(tx.Txid[:8], tx.AmountSat)
	}
	// Output:
	// aaaaaaaa 50000
	// bbbbbbbb -12000
	// cccccccc 7000
}

func ExampleAgent_SheetRows() {
	api := fakeAgentAPI()
	defer api.Close()
	agent, _ := client.New(api.URL, "awk.example-key", nil)

	// The bitcoin rows, page after page with the same filter. Had the Sheet
	// changed between two pages, the rows printed so far would be stale:
	// a program discards them and ranges again (or uses ReadSheet, which
	// does that itself).
	for row, err := range agent.SheetRows(context.Background(), "sp_sheet", client.SheetQuery{Chain: "bitcoin"}) {
		if errors.Is(err, client.ErrSheetChanged) {
			log.Fatal("read the Sheet again from the start: ", err)
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row.Index, row.Cells[0], row.Cells[4])
	}
	// Output:
	// 0 bc1qfirst exchange
	// 3 bc1qsecond spent
	// 7 bc1qthird cold
}

func ExampleEventPoller() {
	api := fakeAgentAPI()
	defer api.Close()
	agent, _ := client.New(api.URL, "awk.example-key", nil)
	ctx := context.Background()

	// The first poll has no cursor (the feed's last 24 hours); Poll follows
	// has_more, and keeps next_since for the next poll. A program saves
	// Cursor() and passes it to NewEvents when it starts again.
	poller := agent.NewEvents("")
	events, err := poller.Poll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range events {
		fmt.Println(e.Kind) // after scope_changed, read /me again
	}
	fmt.Println("cursor:", poller.Cursor())

	events, _ = poller.Poll(ctx)
	fmt.Println(len(events), "new events")
	// Output:
	// portfolio_changed
	// scope_changed
	// cursor: cursor-2
	// 0 new events
}

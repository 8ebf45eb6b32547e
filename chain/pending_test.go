package chain

import (
	"slices"
	"strconv"
	"testing"
)

// Changes the follower has not taken merge into one: the newest tip and
// every address named; past the bound on names, All.
func TestPendingChangesMerge(t *testing.T) {
	p := NewPendingChange(3)
	p.Add(Change{Addresses: []string{"b"}})
	p.Add(Change{Tip: BlockRef{Height: 7, Hash: "h7"}, Addresses: []string{"a", "b"}})
	p.Add(Change{Addresses: []string{"c"}})
	c, ok := p.Take()
	if !ok || c.All || c.Tip.Hash != "h7" || !slices.Equal(c.Addresses, []string{"a", "b", "c"}) {
		t.Fatalf("merged: %+v", c)
	}
	if _, ok := p.Take(); ok {
		t.Fatal("something pending after take")
	}
	p.Add(Change{Addresses: []string{"a", "b"}})
	p.Add(Change{Addresses: []string{"c", "d"}})
	p.Add(Change{Tip: BlockRef{Height: 8, Hash: "h8"}, Addresses: []string{"e"}})
	if c, _ := p.Take(); !c.All || c.Addresses != nil || c.Tip.Hash != "h8" {
		t.Fatalf("past the bound: %+v, want All at the newest tip", c)
	}
	p.Add(Change{All: true, Tip: BlockRef{Height: 8, Hash: "h8"}})
	p.Add(Change{Addresses: []string{"a"}})
	if c, _ := p.Take(); !c.All || c.Addresses != nil {
		t.Fatalf("after All: %+v, want All", c)
	}
}

// Without a bound the names merge however many they are, and Ready
// says when something is pending.
func TestPendingChangesWithoutABound(t *testing.T) {
	p := NewPendingChange(0)
	select {
	case <-p.Ready():
		t.Fatal("ready with nothing pending")
	default:
	}
	var all []string
	for i := range 1_000 {
		a := "addr" + strconv.Itoa(i)
		all = append(all, a)
		p.Add(Change{Addresses: []string{a}})
	}
	<-p.Ready()
	c, ok := p.Take()
	if slices.Sort(all); !ok || c.All || !slices.Equal(c.Addresses, all) {
		t.Fatalf("%d addresses, All %v; want the %d named", len(c.Addresses), c.All, len(all))
	}
}

package actors

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// TestSetExplorerRules: none by default; the owner chooses one of the
// list for the account's network, and the choice is the account's until
// changed; anything else (a URL, an unknown name, an explorer that does
// not serve the network, an agent) is refused without a change.
func TestSetExplorerRules(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	v := ta.mustQuery(ta.ownerCred(), ExplorerQuery{}).Body.(ExplorerView)
	if v.Explorer != ExplorerNone || v.BaseURL != "" || !slices.Equal(v.Choices, []string{"none", "mempool.space", "blockstream.info"}) {
		t.Fatalf("a new account's explorer: %+v, want none with no links", v)
	}
	for _, bad := range []string{"", "https://evil.example", "mempool.space/", "Mempool.space", "blockchair.com"} {
		ta.mustFail(CodeValidation, ta.owner, &SetExplorer{Explorer: bad})
	}
	ta.mustFail(CodeForbidden, ta.addKey(LevelWrite), &SetExplorer{Explorer: "mempool.space"})

	seq := ta.a.Seq
	v = ta.mustOK(ta.owner, &SetExplorer{Explorer: "mempool.space"}).Body.(ExplorerView)
	if v.Explorer != "mempool.space" || v.BaseURL != "https://mempool.space" || ta.a.Explorer != "mempool.space" || ta.a.Seq != seq+1 {
		t.Fatalf("after choosing mempool.space: %+v, stored %q, seq %d→%d", v, ta.a.Explorer, seq, ta.a.Seq)
	}
	before := ta.snapshot()
	ta.mustOK(ta.owner, &SetExplorer{Explorer: "mempool.space"})
	if !bytes.Equal(before, ta.snapshot()) {
		t.Fatal("choosing the same explorer again changed the account")
	}
	ta.mustOK(ta.owner, &SetExplorer{Explorer: ExplorerNone})
	if ta.a.Explorer != "" {
		t.Fatalf("none is stored as %q, want nothing (the default's form)", ta.a.Explorer)
	}
	if _, err := json.Marshal(ta.a); err != nil || bytes.Contains(ta.snapshot(), []byte(`"explorer"`)) {
		t.Fatalf("an account without an explorer writes the field in its snapshot: %s", ta.snapshot())
	}
}

// TestExplorerFollowsTheNetwork: testnet links go to the explorers'
// testnet pages, signet only to mempool.space, and a regtest chain is
// offered no explorer at all.
func TestExplorerFollowsTheNetwork(t *testing.T) {
	for _, c := range []struct {
		network chain.Network
		choices []string
		base    string // of mempool.space, when offered
	}{
		{chain.Testnet, []string{"none", "mempool.space", "blockstream.info"}, "https://mempool.space/testnet"},
		{chain.Signet, []string{"none", "mempool.space"}, "https://mempool.space/signet"},
		{chain.Regtest, []string{"none"}, ""},
	} {
		ta := newNetworkAccount(t, c.network)
		v := ta.mustQuery(ta.ownerCred(), ExplorerQuery{}).Body.(ExplorerView)
		if !slices.Equal(v.Choices, c.choices) {
			t.Errorf("%s: choices %v, want %v", c.network, v.Choices, c.choices)
		}
		if c.base == "" {
			ta.mustFail(CodeValidation, ta.owner, &SetExplorer{Explorer: "mempool.space"})
			continue
		}
		if v = ta.mustOK(ta.owner, &SetExplorer{Explorer: "mempool.space"}).Body.(ExplorerView); v.BaseURL != c.base {
			t.Errorf("%s: base %q, want %q", c.network, v.BaseURL, c.base)
		}
		if c.network == chain.Signet {
			ta.mustFail(CodeValidation, ta.owner, &SetExplorer{Explorer: "blockstream.info"})
		}
	}
}

// TestExplorerSurvivesASnapshot: the choice is in the account's snapshot
// encoding, and an account read back from it answers the same.
func TestExplorerSurvivesASnapshot(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	ta.mustOK(ta.owner, &SetExplorer{Explorer: "blockstream.info"})
	var back Account
	if err := json.Unmarshal(ta.snapshot(), &back); err != nil {
		t.Fatal(err)
	}
	got, err := ExplorerQuery{}.answer(&back, ownerP, LevelWrite, 0)
	if err != nil || got.Explorer != "blockstream.info" || got.BaseURL != "https://blockstream.info" {
		t.Fatalf("read back from the snapshot: %+v, %v", got, err)
	}
	again, _ := json.Marshal(&back)
	if !bytes.Equal(again, ta.snapshot()) {
		t.Fatalf("the snapshot does not round-trip:\n%s\n%s", ta.snapshot(), again)
	}
}

// TestSetExplorerIsFeatureVersion8: the kind is version 8, so a leader
// proposes it only once every voter applies 8, and a node built for 7
// does not know it (it stops rather than skip it: not ignorable).
func TestSetExplorerIsFeatureVersion8(t *testing.T) {
	if KindSetExplorer.FeatureVersion() != 8 || CurrentFeatureVersion != 8 || KindSetExplorer.Ignorable() {
		t.Fatalf("SetExplorer: version %d (current %d), ignorable %v", KindSetExplorer.FeatureVersion(), CurrentFeatureVersion, KindSetExplorer.Ignorable())
	}
	if _, known := NewPayload(KindSetExplorer); !known {
		t.Fatal("this release does not decode SetExplorer")
	}
	defer func(v string) { featureVersionOverride = v }(featureVersionOverride)
	featureVersionOverride = "7"
	if _, known := NewPayload(KindSetExplorer); known {
		t.Fatal("a version-7 node decodes SetExplorer")
	}
	if _, known := NewPayload(KindRotateNotifySecretWithGrace); !known {
		t.Fatal("a version-7 node does not decode its own kinds")
	}
}

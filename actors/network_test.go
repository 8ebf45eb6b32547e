package actors

import (
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

const (
	regtestAddress = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
	testnetAddress = "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"
)

// newNetworkAccount is newTestAccount on network n.
func newNetworkAccount(t *testing.T, n chain.Network) *testAccount {
	t.Helper()
	ta := &testAccount{t: t, id: testAccountID, at: t0, keys: map[string]string{}, owner: ownerP}
	a, res := Apply(nil, ta.cmd(systemP, &CreateAccount{Plan: PlanExtended, OwnerSecretHash: hashOf(testOwnerSecret),
		PasswordHash: testPasswordHash, FirstSpaceID: testFirstSpaceID, Network: n}))
	if res.err != nil {
		t.Fatalf("create account on %q: %v", n, res.err)
	}
	ta.a = a
	return ta
}

// An account holds the addresses of the network it was created on: its
// Account cards and its bitcoin Space's cards take that network's
// addresses and refuse another's, whatever node applies the command.
func TestAnAccountsCardsHoldItsNetworksAddresses(t *testing.T) {
	for _, c := range []struct {
		network       chain.Network
		ok, refused   string
		refusedReason string
	}{
		{"", addrs[0], regtestAddress, "testnet addresses are not accepted"},
		{chain.Regtest, regtestAddress, addrs[0], "not a Bitcoin regtest address"},
		{chain.Testnet, testnetAddress, regtestAddress, "not a Bitcoin testnet address"},
	} {
		ta := newNetworkAccount(t, c.network)
		if ta.a.Network != c.network {
			t.Errorf("the account records network %q, want %q", ta.a.Network, c.network)
		}
		ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "c1", Address: c.ok})
		err := ta.mustFail(CodeValidation, ta.owner, &CreatePortfolioCard{CardID: "c2", Address: c.refused})
		if !strings.Contains(err.Message, c.refusedReason) {
			t.Errorf("on %q an Account card of %s: %q, want %q", c.network, c.refused, err.Message, c.refusedReason)
		}
		space := ta.a.Spaces[0]
		ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b1", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: c.ok})
		space = ta.a.Spaces[0]
		ta.mustFail(CodeValidation, ta.owner, &CreateBookmarkCard{CardID: "b2", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: c.refused})
	}
}

// A network the server does not know is refused at creation.
func TestAnAccountOnAnUnknownNetworkIsRefused(t *testing.T) {
	ta := &testAccount{t: t, id: testAccountID, at: t0, keys: map[string]string{}, owner: ownerP}
	_, res := Apply(nil, ta.cmd(systemP, &CreateAccount{Plan: PlanExtended, OwnerSecretHash: hashOf(testOwnerSecret),
		PasswordHash: testPasswordHash, FirstSpaceID: testFirstSpaceID, Network: "simnet"}))
	if res.err == nil || res.err.Code != CodeValidation {
		t.Errorf("an account on simnet: %+v, want a validation error", res)
	}
}

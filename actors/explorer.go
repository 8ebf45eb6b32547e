package actors

import (
	"slices"
	"strings"

	"github.com/addrwatch/addrwatch/chain"
)

// The block explorer the owner chose for the site's links (issue 33): a
// transaction or an address on History links to it. None by default: a
// link opened there tells that explorer which addresses the owner looks
// at. The choice is one of a fixed list, never a URL the owner types, so
// the site links only to sites this release names, at paths it knows.

// ExplorerNone is the default: no links.
const ExplorerNone = "none"

// explorerSites are the explorers on offer and their base URL for each
// network they serve. A regtest chain is the owner's own: no public
// explorer knows it, so it is offered none.
var explorerSites = []struct {
	name  string
	bases map[chain.Network]string
}{
	{"mempool.space", map[chain.Network]string{
		chain.Mainnet: "https://mempool.space",
		chain.Testnet: "https://mempool.space/testnet",
		chain.Signet:  "https://mempool.space/signet",
	}},
	{"blockstream.info", map[chain.Network]string{
		chain.Mainnet: "https://blockstream.info",
		chain.Testnet: "https://blockstream.info/testnet",
	}},
}

// networkOf is the account's network, mainnet when none was recorded.
func networkOf(a *Account) chain.Network {
	if a.Network == "" {
		return chain.Mainnet
	}
	return a.Network
}

// ExplorerChoices are the explorers an account on network may choose,
// "none" first.
func ExplorerChoices(network chain.Network) []string {
	if network == "" {
		network = chain.Mainnet
	}
	choices := []string{ExplorerNone}
	for _, site := range explorerSites {
		if _, serves := site.bases[network]; serves {
			choices = append(choices, site.name)
		}
	}
	return choices
}

// ExplorerBase is the base URL of explorer's pages for network ("" when
// it serves none, or explorer is none): a transaction is base/tx/{txid},
// an address base/address/{address} (both explorers' paths).
func ExplorerBase(explorer string, network chain.Network) string {
	if network == "" {
		network = chain.Mainnet
	}
	for _, site := range explorerSites {
		if site.name == explorer {
			return site.bases[network]
		}
	}
	return ""
}

// SetExplorer sets the block explorer the site links to (feature version
// 8): "none", or one of ExplorerChoices for the account's network.
type SetExplorer struct {
	Explorer string `json:"explorer"`
}

func (*SetExplorer) Kind() Kind { return KindSetExplorer }

func (p *SetExplorer) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if err := ValidateExplorer(p.Explorer, networkOf(a)); err != nil {
		return fail(err)
	}
	stored := p.Explorer
	if stored == ExplorerNone {
		stored = "" // the default is stored as nothing, as before the field
	}
	if a.Explorer != stored {
		a.Explorer = stored
		a.nextVersion()
	}
	return ok(explorerView(a))
}

// ValidateExplorer refuses an explorer that is not on offer for network,
// with the list that is.
func ValidateExplorer(explorer string, network chain.Network) *Error {
	choices := ExplorerChoices(network)
	if !slices.Contains(choices, explorer) {
		return Errorf(CodeValidation, "explorer must be one of: %s", strings.Join(choices, ", "))
	}
	return nil
}

// ExplorerView is the body of GET and PUT /owner/v1/explorer: the
// explorer chosen, what may be chosen on the account's network, and the
// base URL of the links ("" without links).
type ExplorerView struct {
	Explorer string   `json:"explorer"`
	Choices  []string `json:"choices"`
	BaseURL  string   `json:"base_url"`
}

func explorerView(a *Account) ExplorerView {
	chosen := a.Explorer
	if chosen == "" {
		chosen = ExplorerNone
	}
	network := networkOf(a)
	return ExplorerView{Explorer: chosen, Choices: ExplorerChoices(network), BaseURL: ExplorerBase(chosen, network)}
}

// ExplorerQuery is the owner's GET /owner/v1/explorer.
type ExplorerQuery struct{}

func (ExplorerQuery) answer(a *Account, who Principal, _ Level, _ int64) (ExplorerView, *Error) {
	if who.isAgent() {
		return ExplorerView{}, Errorf(CodeForbidden, "API keys cannot manage the account")
	}
	return explorerView(a), nil
}

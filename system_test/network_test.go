//go:build unix

package system_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/internal/socks5test"
)

// --network is fixed when a data dir is made: a later start with another
// is refused (exit 1, the flag that would start it), and a chain source
// on another network than --network is refused at start, naming both
// genesis blocks. The sim served over HTTP is a mainnet chain.
func TestStartRefusesAnotherNetwork(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(chain.NewSim(time.Now))
	defer up.Close()
	s := startServer(t, "--chain", "esplora:"+up.URL)
	s.stop()

	code, out := s.startRefused("--chain", "esplora:"+up.URL, "--network", "testnet")
	if code != 1 || !strings.Contains(out, "was made for mainnet, not testnet") || !strings.Contains(out, "--network mainnet") {
		t.Errorf("a mainnet data dir started on testnet: exit %d; output:\n%s", code, out)
	}

	fresh := &server{t: t, Dir: t.TempDir(), AdminToken: s.AdminToken, httpAddr: freeAddr(t), adminAddr: freeAddr(t), raftAddr: freeAddr(t)}
	fresh.URL, fresh.AdminURL = "http://"+fresh.httpAddr, "http://"+fresh.adminAddr
	code, out = fresh.startRefused("--chain", "esplora:"+up.URL, "--network", "regtest")
	if code != 1 || !strings.Contains(out, "the chain source is on another network") || !strings.Contains(out, chain.Regtest.Params().GenesisHash.String()) {
		t.Errorf("a mainnet source for a regtest node: exit %d; output:\n%s", code, out)
	}
}

// The settings page names a chain source that is someone else's server,
// and says what it learns; the URL's password is never on the page.
func TestSettingsNameTheChainSourceInABrowser(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(chain.NewSim(time.Now))
	defer up.Close()
	// The explorer is reached at its loopback address through a name that
	// is not loopback, as someone else's server would be.
	_, port, _ := strings.Cut(strings.TrimPrefix(up.URL, "http://"), ":")
	proxy, _ := socks5test.Serve(t, up.Listener.Addr().String())
	s := startServer(t, "--chain", "esplora:http://user:s3cretpw@localhost.invalid:"+port, "--chain-proxy", "socks5://"+proxy)
	o := siteSetUp(t, s, "chain@example.org")
	b := newBrowser(t)
	siteSignIn(t, b, o, "chain@example.org")
	b.open(s.URL + "/settings")
	source := b.text("#chain-source")
	if !strings.Contains(source, "Esplora explorer") || !strings.Contains(source, "localhost.invalid") || !strings.Contains(source, "Tor") || strings.Contains(source, "s3cretpw") {
		t.Errorf("the chain source: %q", source)
	}
	if warn := b.text("#chain-third-party"); !strings.Contains(warn, "learns every address you watch") {
		t.Errorf("the warning: %q", warn)
	}
}

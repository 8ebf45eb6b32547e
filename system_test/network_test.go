//go:build unix

package system_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// --network is fixed when a data dir is made: a later start with another
// is refused (exit 1, the flag that would start it), and a chain source
// on another network than --network is refused at start, naming both
// genesis blocks. The sim served over HTTP is a mainnet chain.
func TestStartRefusesAnotherNetwork(t *testing.T) {
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

package chain

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSourceSpec(t *testing.T) {
	for in, want := range map[string]string{
		"sim":                                    "sim",
		"esplora:https://mempool.space/api":      "esplora:https://mempool.space/api",
		"http://127.0.0.1:3002/api":              "esplora:http://127.0.0.1:3002/api", // --upstream's form
		"btcd:https://rpc:s3cret@10.0.0.5:8334":  "btcd:https://rpc:xxxxx@10.0.0.5:8334",
		"btcd:http://rpc:s3cret@127.0.0.1:18334": "btcd:http://rpc:xxxxx@127.0.0.1:18334",
		"electrum:umbrel.local:50001":            "electrum:umbrel.local:50001",
		"electrums:electrum.example.org:50002":   "electrums:electrum.example.org:50002",
		"electrum:[::1]:50001":                   "electrum:[::1]:50001",
	} {
		spec, err := ParseSourceSpec(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if spec.String() != want {
			t.Errorf("%q reads as %q, want %q", in, spec.String(), want)
		}
	}
	for _, in := range []string{
		"", "simulated", "sim:x", "esplora:", "esplora:ftp://x/api", "esplora:https://x/api?q=1", "mempool.space/api",
		"btcd:https://10.0.0.5:8334",                   // no user and password
		"btcd:https://rpc@10.0.0.5:8334",               // no password
		"btcd:https://rpc:s3cret@10.0.0.5",             // no port
		"btcd:http://rpc:s3cret@10.0.0.5:8334",         // the password in the clear off this machine
		"btcd:https://rpc:s3cret@10.0.0.5:8334/wallet", // a path
		"electrum:", "electrum:host", "electrum::50001", "electrums:host:",
	} {
		_, err := ParseSourceSpec(in)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%q: %v, want ErrInvalidArgument", in, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: the error %q repeats the password", in, err)
		}
	}
}

// Only someone else's server is warned about: the owner's node on this
// machine or the local network is not.
func TestThirdPartySources(t *testing.T) {
	for in, third := range map[string]bool{
		"sim":                                   false,
		"esplora:https://mempool.space/api":     true,
		"esplora:http://127.0.0.1:3002/api":     false,
		"esplora:http://192.168.1.20:3002/api":  false,
		"btcd:https://rpc:pw@localhost:8334":    false,
		"electrum:10.21.21.10:50001":            false,
		"electrums:electrum.example.org:50002":  true,
		"electrum:abcdefghijklmnop.onion:50001": true,
	} {
		spec, err := ParseSourceSpec(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if spec.ThirdParty() != third {
			t.Errorf("%q: third party %v, want %v", in, spec.ThirdParty(), third)
		}
	}
}

func TestParseNetwork(t *testing.T) {
	for _, n := range Networks() {
		if got, err := ParseNetwork(string(n)); err != nil || got != n {
			t.Errorf("%q: %q, %v", n, got, err)
		}
	}
	for _, in := range []string{"", "main", "testnet3", "Regtest", "simnet"} {
		if _, err := ParseNetwork(in); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%q: %v, want ErrInvalidArgument", in, err)
		}
	}
	if Network("").OrMainnet() != Mainnet || Regtest.OrMainnet() != Regtest {
		t.Error("OrMainnet")
	}
}

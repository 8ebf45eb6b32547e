package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
)

// A new data dir records its network; a later start with another one is
// refused, with the flag that would start it; the same one starts.
func TestADataDirKeepsTheNetworkItWasMadeFor(t *testing.T) {
	dir := t.TempDir()
	if err := fixNetwork(dir, chain.Regtest); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, networkFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the record: %v, %v", info, err)
	}
	if err := fixNetwork(dir, chain.Regtest); err != nil {
		t.Errorf("the same network again: %v", err)
	}
	err = fixNetwork(dir, chain.Mainnet)
	if err == nil || !strings.Contains(err.Error(), "--network regtest") {
		t.Errorf("another network: %v, want a refusal naming --network regtest", err)
	}
}

// A data dir made before networks were recorded holds mainnet accounts:
// it is taken on mainnet (and recorded so), and refused on any other.
func TestADataDirFromBeforeNetworksIsMainnet(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "raft-record.json"), []byte(`{"version":1,"reaches":5}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fixNetwork(dir, chain.Testnet); err == nil || !strings.Contains(err.Error(), "--network mainnet") {
		t.Errorf("an old data dir on testnet: %v, want a refusal", err)
	}
	if err := fixNetwork(dir, chain.Mainnet); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, networkFile)); string(b) != "mainnet\n" {
		t.Errorf("recorded %q", b)
	}
}

// A record that names no network is refused, not taken for mainnet.
func TestADamagedNetworkRecordIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, networkFile), []byte("regtst\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fixNetwork(dir, chain.Mainnet); err == nil || !strings.Contains(err.Error(), "does not name a network") {
		t.Errorf("a damaged record: %v", err)
	}
}

// --chain takes every source's form, --upstream is its old name, and
// --chain-proxy a SOCKS5 URL; the password never shows in what is kept
// to print.
func TestParseConfigChainFlags(t *testing.T) {
	c, err := parseConfig([]string{"--chain", "btcd:https://rpc:s3cret@10.0.0.5:18334", "--network", "regtest",
		"--chain-proxy", "socks5://127.0.0.1:9050", "--chain-cert", "/etc/btcd/rpc.cert"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Chain.Kind != chain.SourceBtcd || c.Network != chain.Regtest || c.ChainProxy.Host != "127.0.0.1:9050" || c.ChainCert != "/etc/btcd/rpc.cert" {
		t.Errorf("%+v", c)
	}
	if strings.Contains(c.Chain.String(), "s3cret") {
		t.Errorf("the chain prints as %q", c.Chain)
	}
	c, err = parseConfig(nil, env(map[string]string{"ADDRWATCH_UPSTREAM": "https://mempool.space/api"}))
	if err != nil || c.Chain.String() != "esplora:https://mempool.space/api" {
		t.Errorf("ADDRWATCH_UPSTREAM: %v, %v", c.Chain, err)
	}
	c, err = parseConfig([]string{"--chain", "electrums:electrum.example.org:50002", "--network", "signet"}, env(nil))
	if err != nil || c.Chain.Kind != chain.SourceElectrum || !c.Chain.TLS {
		t.Errorf("electrums: %+v, %v", c.Chain, err)
	}
}

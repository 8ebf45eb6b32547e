// Package chain validates addresses: Bitcoin mainnet addresses with
// btcutil (bitcoin.go), and the coins of altcoin Spaces through a registry
// (altcoin.go; see ALTCOINS.md), on the network --network names
// (network.go). It also talks to the chain source --chain names
// (sourcespec.go) through one interface, Source (source.go): an Esplora
// client, the embedded simulated chain, and in subpackages the owner's own
// btcd or Electrum server; and it keeps a per-address cache of histories
// (see HISTORY.md). It keeps no account state: everything it knows about an
// address comes from the address string itself or from the upstream.
package chain

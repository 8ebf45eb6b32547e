// Package chain validates addresses: Bitcoin mainnet addresses with
// btcutil (bitcoin.go), and the coins of altcoin Spaces through a registry
// (altcoin.go; see ALTCOINS.md). It also talks to the history upstream:
// an Esplora client, the embedded simulated chain and a per-address cache
// (see HISTORY.md). It keeps no account state: everything it knows about an
// address comes from the address string itself or from the upstream.
package chain

// Package chain validates addresses: Bitcoin mainnet addresses with
// btcutil (bitcoin.go), and the coins of altcoin Spaces through a registry
// (altcoin.go; see ALTCOINS.md). Later it also talks to the history
// upstream. It keeps no account state: everything it knows about an
// address comes from the address string itself or from the upstream.
package chain

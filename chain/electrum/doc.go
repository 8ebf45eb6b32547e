// Package electrum is a chain.Source over the Electrum protocol, what
// electrs, Fulcrum and ElectrumX speak (--chain electrum:HOST:PORT, or
// electrums: for TLS), and a chain.Notifier through its subscriptions.
// It keeps one connection to the server, answers in Esplora's terms, and
// keeps what never changes (transactions by ID, deep block headers) and
// what a subscription vouches for (a watched address's history).
// DESIGN.md says how each call maps onto the protocol, what it costs,
// and its bounds; electrumtest is a server of the protocol over a btcd
// regtest node, for tests.
package electrum

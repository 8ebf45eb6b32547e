// Package chain validates addresses and (later) talks to the history
// upstream. It keeps no account state: everything it knows about an address
// comes from the address string itself or from the upstream.
package chain

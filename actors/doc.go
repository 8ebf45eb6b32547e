// Package actors owns an account: its state, the commands that change it,
// the queries that read it, and every business rule of the Agent API as a
// pure function over that state.
//
// The rules never read a clock, draw random numbers, iterate maps in an
// order that reaches their output, or do I/O: time, generated IDs and
// secret hashes travel inside the Command, so that every replica applying
// the same log reaches the same state. The runtime that gives each account
// one mailbox, so one account's commands and reads run one at a time while
// different accounts are served by different goroutines at once, is the
// protoactor actor and the Registry of package actors/registry; this
// package does not import protoactor, and gives that runtime only a few
// doors (SafeApply, SafeQuery, Refused, LoginClaim, MarkLoginTaken).
package actors

// Package registry runs the accounts of package actors on protoactor: one
// actor per account, whose mailbox is that account's serialization point,
// and the Registry that finds, creates and removes those actors. It holds
// the actor (actor.go), the registry's apply, read and snapshot paths
// (registry.go), the index that keeps logins unique across accounts
// (logins.go), and what a sharded cluster's slot moves do to a registry
// (move.go).
//
// It is apart from actors so that the rules stay pure: actors holds the
// state and every rule as a function of it, imports no protoactor, and
// can be tested without a runtime; this package adds only who runs a rule
// when. It imports actors, never the reverse, and reaches its rules only
// through their exported doors: actors.SafeApply and actors.SafeQuery (a
// panic answered as an internal error, so an actor keeps its state),
// actors.Refused (an answer for an account it cannot reach), and
// actors.LoginClaim and actors.MarkLoginTaken (the one rule that spans
// accounts). actors/DESIGN.md says why the actor shell is built as it is.
package registry

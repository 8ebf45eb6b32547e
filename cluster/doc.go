// Package cluster is the raft node: the BatchingFSM that fans each batch
// of log entries out to the account actors, the proposer that group-commits
// many commands per raft append, and the node's lifecycle and membership.
// It knows neither HTTP routes nor business rules.
package cluster

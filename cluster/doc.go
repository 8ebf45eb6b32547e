// Package cluster is the raft node: the BatchingFSM that fans each batch
// of log entries out to the account actors, the proposer that group-commits
// many commands per raft append, the node's lifecycle and membership, and
// the node connections (mutual TLS with the cluster CA) that carry raft and
// the requests followers forward to the leader. It knows neither HTTP
// routes nor business rules.
package cluster

//go:build !faultinject

package main

import (
	"log/slog"

	"github.com/addrwatch/addrwatch/cluster"
)

// nodeDialFromEnv is the ordinary build's: nodes dial each other's raft
// addresses directly, and nothing in the environment can change that. The
// fault test's build replaces it (faultinject.go).
func nodeDialFromEnv(func(string) string, *slog.Logger) (cluster.DialFunc, error) { return nil, nil }

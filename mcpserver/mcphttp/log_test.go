package mcphttp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestMCPLoggerKeepsOnlyWarningsAndUp(t *testing.T) {
	var out bytes.Buffer
	log := logger(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.Info("server session connected")
	log.With("a", 1).WithGroup("g").Debug("detail")
	log.Warn("failed to connect", "err", "x")
	got := out.String()
	if strings.Contains(got, "session connected") || strings.Contains(got, "detail") || !strings.Contains(got, "failed to connect") || !strings.Contains(got, "component=mcp") {
		t.Fatalf("log: %q", got)
	}
}

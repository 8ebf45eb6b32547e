package mcphttp

import (
	"context"
	"log/slog"
)

// logger is the MCP SDK's logger: the server's, from warnings up. The
// stateless transport opens and closes a session for every POST and says
// so at Info, three lines a request; an operator needs the SDK's problems,
// not its routine.
func logger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	return slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn}).With("component", "mcp")
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

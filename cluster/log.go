package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sort"

	"github.com/hashicorp/go-hclog"
)

// newRaftLogger returns an hclog logger (what raft speaks) that hands each
// line to our slog logger with its real level and its fields as attributes,
// so raft's lines read like the rest of the server's.
func newRaftLogger(logger *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       "raft",
		Level:      hclog.Info,
		JSONFormat: true,
		Output:     &slogWriter{log: logger},
	})
}

// slogWriter re-emits hclog's JSON lines through slog.
type slogWriter struct{ log *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		var fields map[string]any
		if json.Unmarshal(line, &fields) != nil {
			w.log.Info(string(line))
			continue
		}
		msg, _ := fields["@message"].(string)
		level := slogLevel(fields["@level"])
		attrs := make([]any, 0, 2*len(fields))
		keys := make([]string, 0, len(fields))
		for k, v := range fields {
			if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
				continue // a raft struct hclog could not render
			}
			if k != "@message" && k != "@level" && k != "@timestamp" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			attrs = append(attrs, k, fields[k])
		}
		w.log.Log(context.Background(), level, msg, attrs...)
	}
	return len(p), nil
}

func slogLevel(v any) slog.Level {
	switch v {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

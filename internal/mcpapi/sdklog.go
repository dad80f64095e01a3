package mcpapi

import (
	"context"
	"log/slog"
)

// sdkLogger is log for the SDK's own lines, each at debug level: it
// reports every session it opens and closes (three lines for each
// stateless request) and every client's malformed request as an error,
// which is neither the server's error nor news to an operator (the
// request log and skillserver_mcp_requests_total have both).
func sdkLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	return slog.New(debugHandler{log.Handler()})
}

type debugHandler struct{ slog.Handler }

func (h debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.Handler.Enabled(ctx, slog.LevelDebug)
}

func (h debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return h.Handler.Handle(ctx, r)
}

func (h debugHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return debugHandler{h.Handler.WithAttrs(as)}
}

func (h debugHandler) WithGroup(name string) slog.Handler {
	return debugHandler{h.Handler.WithGroup(name)}
}

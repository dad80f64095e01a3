package mcpapi

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// The SDK's lines are debug lines: an info log shows none, a debug log
// shows them as debug.
func TestSDKLoggerDemotes(t *testing.T) {
	var info, debug bytes.Buffer
	sdkLogger(slog.New(slog.NewTextHandler(&info, nil))).Error("server session connected")
	sdkLogger(slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))).With("k", "v").Error("x")
	if info.Len() != 0 {
		t.Errorf("info log shows %q", info.String())
	}
	if !strings.Contains(debug.String(), "level=DEBUG") || !strings.Contains(debug.String(), "k=v") {
		t.Errorf("debug log shows %q", debug.String())
	}
}

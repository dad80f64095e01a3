package transport

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// TestRequestLogWritesSlogsBytes: the request log's own encoder writes
// exactly the line slog's JSON and text handlers write for the same
// fields, and leaves to slog the lines it cannot write as they are.
func TestRequestLogWritesSlogsBytes(t *testing.T) {
	zone := time.FixedZone("", -(3*3600 + 30*60))
	base := requestLine{time: time.Date(2026, 12, 1, 14, 31, 30, 123456789, time.UTC), level: slog.LevelInfo,
		id: "0123456789abcdef", method: "GET", route: "/api/v1/skills/{name}/{version}/SKILL.md",
		path: "/api/v1/skills/pdf/1.2.0/SKILL.md", status: 200, bytes: 1234, duration: 12345 * time.Nanosecond}
	for _, tc := range []struct {
		name string
		edit func(*requestLine)
		own  bool // written by RequestLog, not slog
	}{
		{"plain", func(*requestLine) {}, true},
		{"whole second", func(l *requestLine) { l.time = l.time.Truncate(time.Second) }, true},
		{"whole millisecond", func(l *requestLine) { l.time = l.time.Truncate(time.Millisecond) }, true},
		{"ten microseconds", func(l *requestLine) { l.time = l.time.Truncate(time.Second).Add(10 * time.Microsecond) }, true},
		{"another zone", func(l *requestLine) { l.time = l.time.In(zone) }, true},
		{"debug", func(l *requestLine) { l.level = slog.LevelDebug; l.route = "/healthz"; l.path = "/healthz" }, true},
		{"token", func(l *requestLine) { l.token = "ci-reader" }, true},
		{"304", func(l *requestLine) { l.status, l.bytes, l.duration = 304, 0, 2*time.Second+5*time.Millisecond }, true},
		{"html characters", func(l *requestLine) { l.path = "/a<b>&c" }, true},
		{"query-like path", func(l *requestLine) { l.path = "/x?y=z" }, false},
		{"space", func(l *requestLine) { l.path = "/a b" }, false},
		{"quote", func(l *requestLine) { l.path = `/a"b` }, false},
		{"backslash", func(l *requestLine) { l.path = `/a\b` }, false},
		{"control", func(l *requestLine) { l.path = "/a\x01b" }, false},
		{"unicode", func(l *requestLine) { l.path = "/caf\u00e9" }, false},
		{"invalid utf-8", func(l *requestLine) { l.path = "/a\xffb" }, false},
		{"line separator", func(l *requestLine) { l.path = "/a\u2028b" }, false},
		{"token with a space", func(l *requestLine) { l.token = "a b" }, false},
		{"client gone", func(l *requestLine) { l.status, l.err = StatusClientClosed, context.Canceled.Error() }, false},
	} {
		for _, text := range []bool{false, true} {
			format := "json"
			if text {
				format = "text"
			}
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				l := base
				tc.edit(&l)
				var want bytes.Buffer
				var h slog.Handler = slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})
				if text {
					h = slog.NewTextHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})
				}
				if err := h.Handle(t.Context(), l.record()); err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				rl := &RequestLog{Out: &got, Text: text}
				if own := rl.write(&l); own != tc.own {
					t.Fatalf("written by RequestLog: %v, want %v", own, tc.own)
				}
				if !tc.own {
					if got.Len() != 0 {
						t.Fatalf("left to slog, but wrote %q", got.String())
					}
					return
				}
				if got.String() != want.String() {
					t.Errorf("RequestLog wrote\n%q\nslog writes\n%q", got.String(), want.String())
				}
			})
		}
	}
}

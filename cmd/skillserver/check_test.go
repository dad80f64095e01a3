package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// runCheck runs `skillserver check args...` in-process.
func runCheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	code = runMain(t.Context(), append([]string{"check"}, args...), func(string) string { return "" }, &out, &errw)
	return code, out.String(), errw.String()
}

// TestCheckUsage: misuse exits 2 and says what is wrong; --help exits 0.
func TestCheckUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no URL", nil, "accepts 1 arg"},
		{"two URLs", []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, "accepts 1 arg"},
		{"not http", []string{"ftp://example.com"}, "want http:// or https://"},
		{"relative", []string{"example.com"}, "has no scheme: add http:// or https:// (http://example.com)"},
		{"host and port", []string{"127.0.0.1:8080"}, "has no scheme: add http:// or https:// (http://127.0.0.1:8080)"},
		{"query", []string{"http://example.com/?token=x"}, "no query"},
		{"format", []string{"--format", "yaml", "http://example.com"}, `--format "yaml"`},
		{"concurrency", []string{"--concurrency", "0", "http://example.com"}, "--concurrency 0"},
		{"timeout", []string{"--timeout", "0s", "http://example.com"}, "--timeout 0s"},
		{"max bytes", []string{"--max-bytes", "-1", "http://example.com"}, "--max-bytes -1"},
		{"two tokens", []string{"--token", "a", "--token-file", missing, "http://example.com"}, "give one"},
		{"token file", []string{"--token-file", missing, "http://example.com"}, "--token-file"},
		{"unknown flag", []string{"--tokn", "a", "http://example.com"}, "unknown flag: --tokn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCheck(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and a message with %q", code, stderr, stdout, tt.want)
			}
		})
	}
	if code, stdout, _ := runCheck(t, "--help"); code != exitOK || !strings.Contains(stdout, "--concurrency") {
		t.Errorf("--help: exit %d:\n%s", code, stdout)
	}
}

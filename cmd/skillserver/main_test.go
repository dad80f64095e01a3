package main

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// testServer is the real program, started through run() on 127.0.0.1:0.
type testServer = fixture.Server

// startServer runs `skillserver serve` with args (plus --listen
// 127.0.0.1:0 and JSON logs) and waits until /readyz answers 200.
func startServer(t *testing.T, args ...string) *testServer {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

// startServerEnv is startServer with environment variables.
func startServerEnv(t *testing.T, env map[string]string, args ...string) *testServer {
	t.Helper()
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), readyKey{}, func(addr string) { ready <- addr }))
	stderr := &fixture.SyncBuffer{}
	done := make(chan int, 1)
	full := append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...)
	go func() { done <- runMain(ctx, full, func(k string) string { return env[k] }, io.Discard, stderr) }()
	// Stop cancels the server's context and checks it exits 0.
	ts := fixture.NewServer("", stderr, func(t testing.TB) {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("server exited with %d:\n%s", code, stderr)
			}
		case <-time.After(20 * time.Second):
			t.Error("server did not shut down")
		}
	})
	t.Cleanup(func() { ts.Stop(t) })

	select {
	case addr := <-ready:
		ts.URL = "http://" + addr
		return ts
	case code := <-done:
		t.Fatalf("server exited with %d before it was ready:\n%s", code, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("server not ready in 30s:\n%s", stderr)
	}
	return nil
}

func exampleTree(t *testing.T) (skills, agents string) {
	t.Helper()
	return fixture.Testdata(t, "../..")
}

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if code := runMain(t.Context(), []string{"version"}, func(string) string { return "" }, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if want := build().Version; first != want {
		t.Errorf("version printed %q first, want %q", first, want)
	}
	if !strings.Contains(out.String(), "go     "+runtime.Version()+"\n") {
		t.Errorf("version printed %q, want the Go release", out.String())
	}
}

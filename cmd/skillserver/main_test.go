package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
	go func() { done <- run(ctx, full, func(k string) string { return env[k] }, io.Discard, stderr) }()
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

// TestServeExampleTree runs the real program on the example tree and
// fetches every artifact the RFC index advertises, verifying each digest.
func TestServeExampleTree(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)

	idx := ts.Index(t)
	if idx.Schema != "https://schemas.agentskills.io/discovery/0.2.0/schema.json" {
		t.Errorf("$schema = %q", idx.Schema)
	}
	want := []string{"code-review", "k8s-deploy", "release-notes", "support-triage", "windows-notes"}
	var got []string
	for _, s := range idx.Skills {
		got = append(got, s.Name)
		if !strings.HasPrefix(s.URL, ts.URL+"/api/v1/blobs/sha256/") {
			t.Errorf("%s: url %q is not absolute under %s", s.Name, s.URL, ts.URL)
		}
		r, b := ts.Get(t, s.URL)
		if r.StatusCode != http.StatusOK || fixture.SHA(b) != s.Digest {
			t.Errorf("%s: GET %s: status %d digest %s, want %s", s.Name, s.URL, r.StatusCode, fixture.SHA(b), s.Digest)
		}
		for _, res := range s.Resources {
			r, b := ts.Get(t, res.URL)
			if r.StatusCode != http.StatusOK || fixture.SHA(b) != res.Digest {
				t.Errorf("%s/%s: status %d digest %s, want %s", s.Name, res.Path, r.StatusCode, fixture.SHA(b), res.Digest)
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("skills = %v, want %v", got, want)
	}

	// The conventional location serves the latest SKILL.md byte for byte.
	onDisk, err := os.ReadFile(filepath.Join(skills, "k8s-deploy", "1.2.0", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, b := ts.Get(t, "/.well-known/agent-skills/k8s-deploy/SKILL.md"); !bytes.Equal(b, onDisk) {
		t.Errorf("conventional SKILL.md differs from disk:\n%s", b)
	}
	if log := ts.Logged(t); !strings.Contains(log, `"msg":"reload","generation":1`) {
		t.Errorf("no reload log line:\n%s", log)
	}
}

// TestReplicasServeIdenticalBytes starts two servers on the same tree with
// the same base URL and compares the index and every artifact.
func TestReplicasServeIdenticalBytes(t *testing.T) {
	skills, agents := exampleTree(t)
	base := "https://skills.example.com"
	a := startServer(t, "--skills", skills, "--agents", agents, "--base-url", base)
	b := startServer(t, "--skills", skills, "--agents", agents, "--base-url", base)

	_, ia := a.Get(t, "/.well-known/agent-skills/index.json")
	_, ib := b.Get(t, "/.well-known/agent-skills/index.json")
	if !bytes.Equal(ia, ib) {
		t.Fatalf("indexes differ:\n%s\n---\n%s", ia, ib)
	}
	var idx fixture.RFCIndex
	if err := json.Unmarshal(ia, &idx); err != nil {
		t.Fatal(err)
	}
	for _, s := range idx.Skills {
		path := strings.TrimPrefix(s.URL, base)
		_, xa := a.Get(t, path)
		_, xb := b.Get(t, path)
		if !bytes.Equal(xa, xb) || fixture.SHA(xa) != s.Digest {
			t.Errorf("%s: replicas disagree or digest mismatch", s.Name)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if code := run(t.Context(), []string{"version"}, func(string) string { return "" }, &out, io.Discard); code != 0 {
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

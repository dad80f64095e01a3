package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is an io.Writer the server logs into while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is the real program, started through run() on 127.0.0.1:0.
type testServer struct {
	URL    string
	Stderr *syncBuffer
	cancel context.CancelFunc
	done   chan int
}

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
	ts := &testServer{Stderr: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	full := append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...)
	go func() { ts.done <- run(ctx, full, func(k string) string { return env[k] }, io.Discard, ts.Stderr) }()
	t.Cleanup(func() { ts.Stop(t) })

	select {
	case addr := <-ready:
		ts.URL = "http://" + addr
		return ts
	case code := <-ts.done:
		t.Fatalf("server exited with %d before it was ready:\n%s", code, ts.Stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("server not ready in 30s:\n%s", ts.Stderr)
	}
	return nil
}

// Stop cancels the server's context and checks it exits 0.
func (ts *testServer) Stop(t *testing.T) {
	t.Helper()
	if ts.cancel == nil {
		return
	}
	ts.cancel()
	ts.cancel = nil
	select {
	case code := <-ts.done:
		if code != 0 {
			t.Errorf("server exited with %d:\n%s", code, ts.Stderr)
		}
	case <-time.After(20 * time.Second):
		t.Error("server did not shut down")
	}
}

func (ts *testServer) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = ts.URL + path
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", u, err)
	}
	return resp, body
}

// logged returns the server's log once every line logged before the call
// is in it: the log goes through a background writer, so a line may come
// a little after what it tells of. It requests a path nobody else does
// and waits for that request's line, which the writer keeps in order
// behind the earlier ones.
func (ts *testServer) logged(t *testing.T) string {
	t.Helper()
	marker := fmt.Sprintf("/log-marker-%d", logMarkers.Add(1))
	ts.get(t, marker)
	var log string
	eventually(t, 10*time.Second, "the request log line of "+marker, func() error {
		if log = ts.Stderr.String(); !strings.Contains(log, `"path":"`+marker+`"`) {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
	return log
}

var logMarkers atomic.Int64

// index fetches and decodes the RFC index.
func (ts *testServer) index(t *testing.T) rfcIndex {
	t.Helper()
	resp, body := ts.get(t, "/.well-known/agent-skills/index.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("index: status %d", resp.StatusCode)
	}
	var idx rfcIndex
	if err := json.Unmarshal(body, &idx); err != nil {
		t.Fatalf("index: %v", err)
	}
	return idx
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

type rfcIndex struct {
	Schema string `json:"$schema"`
	Skills []struct {
		Name, Type, Description, URL, Digest, Version string
		Resources                                     []struct {
			Path, Digest, URL string
			UnixMode          int
		}
	} `json:"skills"`
}

func exampleTree(t *testing.T) (skills, agents string) {
	t.Helper()
	root, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "skills"), filepath.Join(root, "agents")
}

// TestServeExampleTree runs the real program on the example tree and
// fetches every artifact the RFC index advertises, verifying each digest.
func TestServeExampleTree(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)

	idx := ts.index(t)
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
		r, b := ts.get(t, s.URL)
		if r.StatusCode != http.StatusOK || sha(b) != s.Digest {
			t.Errorf("%s: GET %s: status %d digest %s, want %s", s.Name, s.URL, r.StatusCode, sha(b), s.Digest)
		}
		for _, res := range s.Resources {
			r, b := ts.get(t, res.URL)
			if r.StatusCode != http.StatusOK || sha(b) != res.Digest {
				t.Errorf("%s/%s: status %d digest %s, want %s", s.Name, res.Path, r.StatusCode, sha(b), res.Digest)
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
	if _, b := ts.get(t, "/.well-known/agent-skills/k8s-deploy/SKILL.md"); !bytes.Equal(b, onDisk) {
		t.Errorf("conventional SKILL.md differs from disk:\n%s", b)
	}
	if log := ts.logged(t); !strings.Contains(log, `"msg":"reload","generation":1`) {
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

	_, ia := a.get(t, "/.well-known/agent-skills/index.json")
	_, ib := b.get(t, "/.well-known/agent-skills/index.json")
	if !bytes.Equal(ia, ib) {
		t.Fatalf("indexes differ:\n%s\n---\n%s", ia, ib)
	}
	var idx rfcIndex
	if err := json.Unmarshal(ia, &idx); err != nil {
		t.Fatal(err)
	}
	for _, s := range idx.Skills {
		path := strings.TrimPrefix(s.URL, base)
		_, xa := a.get(t, path)
		_, xb := b.get(t, path)
		if !bytes.Equal(xa, xb) || sha(xa) != s.Digest {
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

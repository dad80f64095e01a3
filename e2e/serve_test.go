//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
)

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

package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/provenance"
)

// TestInfoNamesTheCheckout: with the skills root in a git checkout,
// /api/v1/info names its remote (without the token in the clone URL), its
// commit and the root's path, as git itself reports them; with
// --provenance=false it names nothing.
func TestInfoNamesTheCheckout(t *testing.T) {
	top := t.TempDir()
	git := func(args ...string) string { return fixture.Git(t, top, args...) }
	skills := filepath.Join(top, "team", "skills")
	fixture.WriteFile(t, filepath.Join(skills, "demo", "SKILL.md"), "---\nname: demo\ndescription: A demo skill.\n---\nBody.\n", 0o644)
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://x-token:secret@example.com/team/skills.git")
	git("add", ".")
	git("commit", "-q", "-m", "demo")

	info := func(args ...string) *provenance.Source {
		t.Helper()
		ts := startServer(t, append([]string{"--skills", skills, "--agents", t.TempDir()}, args...)...)
		_, body := ts.Get(t, "/api/v1/info")
		var got struct{ Source *provenance.Source }
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		ts.Stop(t)
		return got.Source
	}
	want := provenance.Source{Repository: "https://example.com/team/skills.git", Commit: git("rev-parse", "HEAD"), Path: "team/skills"}
	if got := info(); got == nil || *got != want {
		t.Errorf("source = %+v, want %+v", got, want)
	}
	if got := info("--provenance=false"); got != nil {
		t.Errorf("--provenance=false: source = %+v, want none", got)
	}
}

// TestClonesOfOneCommitPublishTheSameBytes: two clones of one commit,
// checked out at different times (one with packed objects, one with
// loose ones), publish byte-identical documents: publishedAt is the
// commit's time and every version names the same source. With
// --provenance=false publishedAt comes from the files' modification times
// again, and the clones differ.
func TestClonesOfOneCommitPublishTheSameBytes(t *testing.T) {
	const commitDate = "2026-11-30T12:00:00Z"
	t.Setenv("GIT_AUTHOR_DATE", commitDate)
	t.Setenv("GIT_COMMITTER_DATE", commitDate)
	skills, agents := fixture.ExampleTree(t, "../..")
	top := filepath.Dir(skills)
	if err := os.Rename(agents, filepath.Join(top, "agents")); err != nil {
		t.Fatal(err)
	}
	fixture.Git(t, top, "init", "-q", "-b", "main")
	fixture.Git(t, top, "add", ".")
	fixture.Git(t, top, "commit", "-q", "-m", "tree")
	commit := fixture.Git(t, top, "rev-parse", "HEAD")

	parent := t.TempDir()
	clones := []string{filepath.Join(parent, "packed"), filepath.Join(parent, "loose")}
	fixture.Git(t, parent, "clone", "-q", "--no-local", top, clones[0])
	fixture.Git(t, parent, "clone", "-q", top, clones[1])
	for i, c := range clones {
		fixture.Git(t, c, "remote", "set-url", "origin", "https://example.com/team/skills.git")
		at := time.Date(2026, 12, 1+i, 8, 0, 0, 0, time.UTC) // checked out on different days
		if err := filepath.WalkDir(c, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink != 0 {
				return err
			}
			return os.Chtimes(p, at, at)
		}); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{
		"/skills/v1/k8s-deploy/index.json", "/skills/v1/k8s-deploy/versions/1.2.0.json",
		"/skills/v1/release-notes/index.json",
		"/subagents/v1/technical-support-diagnostician/index.json",
		"/subagents/v1/technical-support-diagnostician/versions/1.0.0.json",
		"/api/v1/skills/k8s-deploy", "/api/v1/skills/k8s-deploy/1.2.0",
		"/api/v1/subagents/technical-support-diagnostician/1.0.0",
		"/.well-known/agent-card.json",
	}
	serveAll := func(clone string, args ...string) map[string][]byte {
		ts := startServer(t, append([]string{"--skills", filepath.Join(clone, "skills"), "--agents", filepath.Join(clone, "agents"),
			"--base-url", "https://skills.example.com"}, args...)...)
		defer ts.Stop(t)
		out := map[string][]byte{}
		for _, p := range paths {
			resp, body := ts.Get(t, p)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", p, resp.StatusCode)
			}
			out[p] = body
		}
		return out
	}
	a, b := serveAll(clones[0]), serveAll(clones[1])
	for _, p := range paths {
		if !bytes.Equal(a[p], b[p]) {
			t.Errorf("%s differs between the clones:\n%s\n%s", p, a[p], b[p])
		}
	}
	var version struct {
		PublishedAt string
		Source      provenance.Source
	}
	if err := json.Unmarshal(a["/api/v1/skills/k8s-deploy/1.2.0"], &version); err != nil {
		t.Fatal(err)
	}
	if want := (provenance.Source{Repository: "https://example.com/team/skills.git", Commit: commit, Path: "skills/k8s-deploy/1.2.0"}); version.PublishedAt != commitDate || version.Source != want {
		t.Errorf("version: publishedAt %s, source %+v; want %s and %+v", version.PublishedAt, version.Source, commitDate, want)
	}
	// metadata.published still wins over the commit's time.
	if !bytes.Contains(a["/skills/v1/release-notes/index.json"], []byte(`"publishedAt": "2026-11-29T10:00:00Z"`)) {
		t.Errorf("metadata.published was not kept:\n%s", a["/skills/v1/release-notes/index.json"])
	}

	a, b = serveAll(clones[0], "--provenance=false"), serveAll(clones[1], "--provenance=false")
	if bytes.Equal(a["/api/v1/skills/k8s-deploy/1.2.0"], b["/api/v1/skills/k8s-deploy/1.2.0"]) || bytes.Contains(a["/api/v1/skills/k8s-deploy/1.2.0"], []byte(`"source"`)) {
		t.Errorf("--provenance=false: the clones should differ by modification time, without a source:\n%s", a["/api/v1/skills/k8s-deploy/1.2.0"])
	}
}

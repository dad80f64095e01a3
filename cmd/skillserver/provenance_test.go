package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/provenance"
)

// TestInfoNamesTheCheckout: with the skills root in a git checkout,
// /api/v1/info names its remote (without the token in the clone URL), its
// commit and the root's path, as git itself reports them; with
// --provenance=false it names nothing.
func TestInfoNamesTheCheckout(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	top := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = top
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	skills := filepath.Join(top, "team", "skills")
	if err := os.MkdirAll(filepath.Join(skills, "demo"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: demo\ndescription: A demo skill.\n---\nBody.\n"
	if err := os.WriteFile(filepath.Join(skills, "demo", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://x-token:secret@example.com/team/skills.git")
	git("add", ".")
	git("commit", "-q", "-m", "demo")

	info := func(args ...string) *provenance.Source {
		t.Helper()
		ts := startServer(t, append([]string{"--skills", skills, "--agents", t.TempDir()}, args...)...)
		_, body := ts.get(t, "/api/v1/info")
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

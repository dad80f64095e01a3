package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

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

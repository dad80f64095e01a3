package httpapi

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
)

// commitDate is the author and committer time of the example checkouts:
// with it the commits, and so the documents, are the same on every run.
const commitDate = "2026-11-30T12:00:00Z"

// exampleCheckouts commits the example tree's skills and sub-agents, each
// in a git repository of its own, and returns the two roots.
func exampleCheckouts(t *testing.T) (skills, agents string) {
	t.Helper()
	t.Setenv("GIT_AUTHOR_DATE", commitDate)
	t.Setenv("GIT_COMMITTER_DATE", commitDate)
	skills, agents = fixture.ExampleTree(t, "../..")
	for root, remote := range map[string]string{skills: "https://example.com/team/skills.git", agents: "git@example.com:team/agents.git"} {
		top := filepath.Dir(root)
		fixture.Git(t, top, "init", "-q", "-b", "main")
		fixture.Git(t, top, "remote", "add", "origin", remote)
		fixture.Git(t, top, "add", ".")
		fixture.Git(t, top, "commit", "-q", "-m", "example tree")
	}
	return skills, agents
}

// With the roots in git checkouts and provenance on, every version
// document names its repository, commit and path, publishedAt is the
// commit's time unless metadata.published says otherwise, and the agent
// card carries the provenance extension.
func TestDocumentsGoldenFromCheckout(t *testing.T) {
	skills, agents := exampleCheckouts(t)
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents, Provenance: true,
		Server: feed.ServerInfo{Name: "skillserver", Description: "Test server.", Version: "1.2.3-test"}}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{BaseURL: testBase, CORSAllowOrigin: "*"}, slog.New(slog.DiscardHandler))
	s.SetReady(true)
	for file, path := range map[string]string{
		"checkout-skill.json":                "/skills/v1/k8s-deploy/index.json",
		"checkout-skill-version.json":        "/skills/v1/k8s-deploy/versions/1.2.0.json",
		"checkout-subagent.json":             "/subagents/v1/technical-support-diagnostician/index.json",
		"checkout-subagent-version.json":     "/subagents/v1/technical-support-diagnostician/versions/1.0.0.json",
		"checkout-api-skill.json":            "/api/v1/skills/k8s-deploy",
		"checkout-api-skill-version.json":    "/api/v1/skills/k8s-deploy/1.2.0",
		"checkout-api-subagent.json":         "/api/v1/subagents/technical-support-diagnostician",
		"checkout-api-subagent-version.json": "/api/v1/subagents/technical-support-diagnostician/1.0.0",
		"checkout-agent-card.json":           "/.well-known/agent-card.json",
	} {
		r := do(t, s, "GET", path)
		if r.code != 200 {
			t.Fatalf("%s: status %d", path, r.code)
		}
		checkGolden(t, file, r.body)
	}
	// The pages give the same published time as the documents: the
	// commit's, not the files' modification time.
	for _, path := range []string{"/ui/skills/k8s-deploy/1.2.0", "/ui/subagents/technical-support-diagnostician"} {
		r := do(t, s, "GET", path, "Accept", "text/html")
		if r.code != 200 || !strings.Contains(string(r.body), "2026-11-30 12:00 UTC") {
			t.Errorf("%s: status %d, no published time of the commit (2026-11-30 12:00 UTC) on the page", path, r.code)
		}
	}
}

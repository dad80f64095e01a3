// Package checktest runs the netclaw sync model (internal/check's
// Client) the way the tests of a running server do, those of
// cmd/skillserver and of e2e: one whole pass, and a second one that must
// download nothing. It is imported by tests only.
package checktest

import (
	"testing"

	"github.com/skillserver/skillserver/internal/check"
)

// ResyncDownloadsNothing runs a second skills and sub-agents pass with c,
// which must download nothing.
func ResyncDownloadsNothing(t testing.TB, c *check.Client) {
	t.Helper()
	before := c.Downloads
	if _, err := c.SyncSkills(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.SyncAgents(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.Downloads != before {
		t.Errorf("second pass downloaded %d artifacts, want 0", c.Downloads-before)
	}
}

// SyncPass runs one netclaw pass with c: skills, sub-agents, then the
// manifest walk.
func SyncPass(t testing.TB, c *check.Client) {
	t.Helper()
	rfc, err := c.SyncSkills(t.Context())
	if err != nil {
		t.Fatalf("skills pass: %v", err)
	}
	if err := c.SyncAgents(t.Context()); err != nil {
		t.Fatalf("sub-agent pass: %v", err)
	}
	if err := c.WalkManifest(t.Context(), rfc); err != nil {
		t.Fatalf("manifest walk: %v", err)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/check"

	"github.com/skillserver/skillserver/internal/check/checktest"
)

// TestSyncAsNetclaw walks the real server the way netclaw and the
// SkillClient do; a second pass must download nothing.
func TestSyncAsNetclaw(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	c := check.New(ts.URL)
	checktest.SyncPass(t, c)

	var names []string
	for n := range c.Skills {
		names = append(names, n)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "code-review,k8s-deploy,release-notes,support-triage,windows-notes" {
		t.Errorf("synced skills %s", got)
	}
	for _, want := range []struct{ name, version, file string }{
		{"changelog-reviewer", "1.0.0", "changelog-reviewer.md"},
		{"technical-support-diagnostician", "1.0.0", "technical-support-diagnostician/1.0.0.md"},
	} {
		got, ok := c.Agents[want.name]
		disk, err := os.ReadFile(filepath.Join(agents, want.file))
		if err != nil {
			t.Fatal(err)
		}
		if !ok || got.Version != want.version || !bytes.Equal(got.Files["agent.md"], disk) {
			t.Errorf("agent %s: synced %+v, want version %s with the bytes on disk", want.name, got.Version, want.version)
		}
	}
	k8s := c.Skills["k8s-deploy"]
	for _, rel := range []string{"SKILL.md", "scripts/deploy.sh", "assets/logo.png"} {
		disk, err := os.ReadFile(filepath.Join(skills, "k8s-deploy", "1.2.0", rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(k8s.Files[rel], disk) {
			t.Errorf("k8s-deploy %s differs from disk", rel)
		}
	}

	checktest.ResyncDownloadsNothing(t, c)
}

// TestSyncWithoutAgentsSource: no agents root is "absent" to netclaw, not
// an empty list that would prune its agents.
func TestSyncWithoutAgentsSource(t *testing.T) {
	skills, _ := exampleTree(t)
	ts := startServer(t, "--skills", skills)
	c := check.New(ts.URL)
	if err := c.SyncAgents(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !c.AgentsAbsent {
		t.Error("agents not reported absent")
	}
	empty := t.TempDir()
	ts2 := startServer(t, "--skills", skills, "--agents", empty)
	c2 := check.New(ts2.URL)
	if err := c2.SyncAgents(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c2.AgentsAbsent || len(c2.Agents) != 0 {
		t.Errorf("configured empty root: absent=%v agents=%d, want present and empty", c2.AgentsAbsent, len(c2.Agents))
	}
}

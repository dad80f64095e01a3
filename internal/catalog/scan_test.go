package catalog

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/skill"
)

// The rules of the tree (layout, names, versions, the file system,
// archives) are scan's, tested beside scan.Run in internal/scan. What is
// here is the snapshot's: what it derives from all entries together, its
// problems as the admin page shows them, and its documents.

func scanTree(t *testing.T, src Source) *Snapshot {
	t.Helper()
	snap, err := Build(t.Context(), src, 1)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return snap
}

var writeFile = fixture.WriteFile

var skillMD = fixture.SkillMD

var symlink = fixture.Symlink

var agentMD = fixture.AgentMD

// TestSnapshotOfTheExampleTree: the example tree's snapshot has no
// problems, its entries' or between items (support-triage routes to a
// sub-agent that is published), and counts what the scan published.
func TestSnapshotOfTheExampleTree(t *testing.T) {
	snap := scanTree(t, Source{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	if len(snap.Problems) != 0 {
		t.Errorf("example tree has problems: %v", snap.Problems)
	}
	c := snap.Counts()
	if c.Skills != 5 || c.SkillVersions != 7 || c.Agents != 2 || c.AgentVersions != 3 || c.Errors != 0 || c.Warnings != 0 || c.Bytes != snap.Store.Bytes() {
		t.Errorf("counts %+v: want 5 skills of 7 versions, 2 sub-agents of 3, no problems", c)
	}
}

// TestRouteToAMissingSubagent: a skill whose metadata.subagent names no
// published sub-agent is a warning of the snapshot (no entry has it):
// the skill stays published and the warning is counted.
func TestRouteToAMissingSubagent(t *testing.T) {
	skills := "../../testdata/skills"
	for _, agents := range []string{"", t.TempDir()} {
		snap := scanTree(t, Source{SkillsDir: skills, AgentsDir: agents})
		if _, ok := snap.Skill("support-triage"); !ok {
			t.Fatal("support-triage was dropped")
		}
		want := skills + "/support-triage/" + skill.FileName
		if len(snap.Problems) != 1 || snap.Problems[0].Path != want || snap.Problems[0].Rule != skill.RuleMetadata ||
			snap.Problems[0].Severity != skill.SeverityWarning || !strings.Contains(snap.Problems[0].Message, `"technical-support-diagnostician"`) {
			t.Errorf("agents root %q: problems %v, want one metadata warning at %s naming the sub-agent", agents, snap.Problems, want)
		}
		if ps := snap.skillEntries["support-triage"].Problems; len(ps) != 0 {
			t.Errorf("the entry itself has problems %v", ps)
		}
		if c := snap.Counts(); c.Warnings != 1 || c.Errors != 0 {
			t.Errorf("counts %+v: want 1 warning, no errors", c)
		}
	}
}

// TestMissingRootFailsTheReload: a reload whose scan fails (here its
// root is gone; scan.TestMissingRootFailsTheScan has the rule) keeps the
// snapshot it had.
func TestMissingRootFailsTheReload(t *testing.T) {
	c := New(Source{SkillsDir: "../../testdata/skills"}, slog.New(slog.DiscardHandler))
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.src.SkillsDir = filepath.Join(t.TempDir(), "gone")
	if _, err := c.Reload(t.Context()); err == nil {
		t.Fatal("reload of a missing root succeeded")
	}
	if cur := c.Current(); cur == nil || cur.Generation != 1 || len(cur.Skills) == 0 {
		t.Errorf("failed reload replaced the snapshot: %+v", cur)
	}
	if _, err := Build(t.Context(), Source{SkillsDir: filepath.Join(t.TempDir(), "nope")}, 1); err == nil {
		t.Error("Build of a missing root succeeded")
	}
}

// TestAgentsConfiguredButEmpty: an empty agents root is configured (200
// with no items), unlike no agents root at all (404).
func TestAgentsConfiguredButEmpty(t *testing.T) {
	empty := scanTree(t, Source{AgentsDir: t.TempDir()})
	if _, ok := empty.Feed().Document(feed.Base{}, feed.DocKey{Kind: feed.DocSubagentPage, Page: feed.AllPage}); !ok {
		t.Error("configured empty agents root has no page")
	}
	none := scanTree(t, Source{})
	if _, ok := none.Feed().Document(feed.Base{}, feed.DocKey{Kind: feed.DocSubagentIndex}); ok {
		t.Error("no agents root, yet a sub-agent index")
	}
}

// TestProblemsBelowRoots: the admin page's problems name the roots by
// role, never by where the server keeps them, in paths and in messages;
// the snapshot's own Problems (the log, validate) keep the configured
// paths.
func TestProblemsBelowRoots(t *testing.T) {
	root, err := filepath.Abs("../../testdata/invalid/skills")
	if err != nil {
		t.Fatal(err)
	}
	snap := scanTree(t, Source{SkillsDir: root})
	if len(snap.Problems) == 0 {
		t.Fatal("the invalid fixtures gave no problems")
	}
	below := snap.ProblemsBelowRoots()
	if len(below) != len(snap.Problems) {
		t.Fatalf("%d problems below the roots, %d in the snapshot", len(below), len(snap.Problems))
	}
	for i, p := range below {
		if !strings.HasPrefix(p.Path, "skills/") {
			t.Errorf("problem %d: path %q does not start with skills/", i, p.Path)
		}
		if strings.Contains(p.Path+p.Message, root) {
			t.Errorf("problem %d names the root %s: %s: %s", i, root, p.Path, p.Message)
		}
		if want := "skills" + strings.TrimPrefix(snap.Problems[i].Path, root); p.Path != want {
			t.Errorf("problem %d: path %q, want %q", i, p.Path, want)
		}
		if !strings.HasPrefix(snap.Problems[i].Path, root+"/") {
			t.Errorf("problem %d: the snapshot's own path %q lost its root", i, snap.Problems[i].Path)
		}
	}
	// A root that is a prefix of a sibling's name is not cut from it.
	if got := belowRoot("/srv/skills-old/x", "/srv/skills", "skills"); got != "/srv/skills-old/x" {
		t.Errorf("belowRoot of a sibling: %q", got)
	}
}

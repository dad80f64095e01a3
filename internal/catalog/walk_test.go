package catalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillserver/skillserver/internal/skill"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func agentMD(name string) string {
	return "---\nname: " + name + "\ndescription: test agent " + name + "\n---\n\nYou review.\n"
}

// TestLinksResolveEverywhere: the walker opens folders and files relative
// to their parent's handle and never follows a link that way; every kind
// of link inside the root goes through the root instead, at every level,
// and what is under a linked folder is walked like any other folder.
func TestLinksResolveEverywhere(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	// A versioned skill whose 2.0.0 folder is a link, and whose 1.0.0
	// holds a linked resource folder that itself holds a linked file.
	writeFile(t, filepath.Join(skills, ".shared", "v2", "SKILL.md"), "---\nname: multi\ndescription: d\nmetadata:\n  version: \"2.0.0\"\n---\n", 0o644)
	writeFile(t, filepath.Join(skills, ".shared", "refs", "guide.md"), "guide\n", 0o644)
	writeFile(t, filepath.Join(skills, ".shared", "shared.md"), "shared\n", 0o644)
	symlink(t, "../../.shared/shared.md", filepath.Join(skills, ".shared", "refs", "shared.md"))
	writeFile(t, filepath.Join(skills, "multi", "1.0.0", "SKILL.md"), "---\nname: multi\ndescription: d\n---\n", 0o644)
	symlink(t, "../../.shared/refs", filepath.Join(skills, "multi", "1.0.0", "refs"))
	symlink(t, "../.shared/v2", filepath.Join(skills, "multi", "2.0.0"))
	// A flat skill whose SKILL.md is a link.
	writeFile(t, filepath.Join(skills, ".shared", "linked.md"), skillMD("linked"), 0o644)
	symlink(t, "../.shared/linked.md", filepath.Join(skills, "linked", "SKILL.md"))
	// Hidden names are not published, whatever they are.
	writeFile(t, filepath.Join(skills, "linked", ".cache", "x"), "x", 0o644)
	writeFile(t, filepath.Join(skills, ".git", "HEAD"), "ref", 0o644)

	writeFile(t, filepath.Join(agents, ".shared", "reviewer.md"), agentMD("reviewer"), 0o644)
	symlink(t, ".shared/reviewer.md", filepath.Join(agents, "reviewer.md"))
	writeFile(t, filepath.Join(agents, ".shared", "planner", "1.0.0.md"), agentMD("planner"), 0o644)
	symlink(t, ".shared/planner", filepath.Join(agents, "planner"))

	snap := scanTree(t, Source{SkillsDir: skills, AgentsDir: agents})
	for _, p := range snap.Problems {
		if p.Severity == skill.SeverityError {
			t.Errorf("unexpected problem %v", p)
		}
	}
	multi, ok := snap.Skill("multi")
	if !ok {
		t.Fatalf("multi missing; problems %v", snap.Problems)
	}
	if _, ok := multi.Version("2.0.0"); !ok {
		t.Errorf("linked version folder 2.0.0 missing; versions %v", multi.Versions)
	}
	v1, ok := multi.Version("1.0.0")
	if !ok {
		t.Fatal("1.0.0 missing")
	}
	for path, want := range map[string]string{"refs/guide.md": "guide\n", "refs/shared.md": "shared\n"} {
		r, ok := v1.Resource(path)
		if !ok {
			t.Errorf("1.0.0 lacks %s; resources %v", path, v1.Resources)
			continue
		}
		if b, _ := snap.Store.Get(r.Digest); string(b) != want {
			t.Errorf("%s = %q, want %q", path, b, want)
		}
	}
	linked, ok := snap.Skill("linked")
	if !ok {
		t.Fatalf("skill with a linked SKILL.md missing; problems %v", snap.Problems)
	}
	if len(linked.Latest.Resources) != 0 {
		t.Errorf("hidden files published: %v", linked.Latest.Resources)
	}
	if _, ok := snap.Skill(".git"); ok {
		t.Error("hidden folder published as a skill")
	}
	if _, ok := snap.Agent("reviewer"); !ok {
		t.Errorf("linked agent file missing; problems %v", snap.Problems)
	}
	if a, ok := snap.Agent("planner"); !ok || len(a.Versions) != 1 {
		t.Errorf("linked versioned agent folder: %v, %v; problems %v", a, ok, snap.Problems)
	}
}

// TestScanClosesEveryHandle: a scan holds folders open while it walks
// them, and closes every one, whatever it found (links, loops, errors).
func TestScanClosesEveryHandle(t *testing.T) {
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(entries)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "deep", "SKILL.md"), skillMD("deep"), 0o644)
	writeFile(t, filepath.Join(root, "deep", "a", "b", "c", "d.md"), "d\n", 0o644)
	symlink(t, "../../deep/a", filepath.Join(root, "loop", "a", "up"))
	writeFile(t, filepath.Join(root, "loop", "SKILL.md"), skillMD("loop"), 0o644)
	symlink(t, "..", filepath.Join(root, "loop", "a", "parent"))
	writeFile(t, filepath.Join(root, "multi", "1.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "notes.txt"), "ignored\n", 0o644)
	writeFile(t, filepath.Join(root, "multi", "bad version", "SKILL.md"), skillMD("multi"), 0o644)

	scanTree(t, Source{SkillsDir: root, AgentsDir: "../../testdata/agents"}) // warm: the runtime opens what it keeps
	before := fds()
	for range 3 {
		snap := scanTree(t, Source{SkillsDir: root, AgentsDir: "../../testdata/agents"})
		if _, ok := snap.Skill("deep"); !ok {
			t.Fatalf("deep missing; problems %v", snap.Problems)
		}
		if len(problemsUnder(snap, root+"/loop", skill.RuleSymlink)) == 0 {
			t.Fatalf("no loop problem; problems %v", snap.Problems)
		}
	}
	if after := fds(); after != before {
		t.Errorf("open descriptors: %d before three scans, %d after", before, after)
	}
}

// TestDeepNestingIsALimit: the walk holds a handle per level, so folders
// nested deeper than maxDepth are a limit problem, not a descriptor
// shortage, and the neighbours stay published.
func TestDeepNestingIsALimit(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "good", "SKILL.md"), skillMD("good"), 0o644)
	writeFile(t, filepath.Join(root, "ok", "SKILL.md"), skillMD("ok"), 0o644)
	writeFile(t, filepath.Join(root, "deep", "SKILL.md"), skillMD("deep"), 0o644)
	okDir, deepDir := filepath.Join(root, "ok"), filepath.Join(root, "deep")
	for range maxDepth {
		okDir = filepath.Join(okDir, "d")
	}
	for range maxDepth + 1 {
		deepDir = filepath.Join(deepDir, "d")
	}
	writeFile(t, filepath.Join(okDir, "leaf.md"), "leaf\n", 0o644)
	writeFile(t, filepath.Join(deepDir, "leaf.md"), "leaf\n", 0o644)

	snap := scanTree(t, Source{SkillsDir: root})
	if ps := problemsUnder(snap, root+"/deep/", skill.RuleLimit); len(ps) != 1 {
		t.Errorf("limit problems under deep/: %v; all problems %v", ps, snap.Problems)
	}
	if _, ok := snap.Skill("deep"); ok {
		t.Error("a skill nested too deep was published")
	}
	ok, found := snap.Skill("ok")
	if !found {
		t.Fatalf("a skill nested exactly %d levels deep is missing; problems %v", maxDepth, snap.Problems)
	}
	if len(ok.Latest.Resources) != 1 {
		t.Errorf("ok resources = %v", ok.Latest.Resources)
	}
	if _, found := snap.Skill("good"); !found {
		t.Error("valid neighbour dropped")
	}
}

package scan

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillserver/skillserver/internal/skill"
)

// TestFilesystemRules covers what cannot live in git: FIFOs, symlink loops,
// and size limits, each next to a valid skill that must stay published.
func TestFilesystemRules(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		lim   Limits
		rule  string
	}{
		{"fifo", func(t *testing.T, dir string) {
			mkfifo(t, filepath.Join(dir, "pipe"))
		}, Limits{}, skill.RuleFileType},
		{"dir-loop", func(t *testing.T, dir string) {
			symlink(t, "..", filepath.Join(dir, "sub", "up"))
		}, Limits{}, skill.RuleSymlink},
		{"self-link", func(t *testing.T, dir string) {
			symlink(t, "self", filepath.Join(dir, "self"))
		}, Limits{}, skill.RuleSymlink},
		{"file-too-big", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "big.bin"), strings.Repeat("x", 2000), 0o644)
		}, Limits{MaxFileBytes: 1000}, skill.RuleLimit},
		{"too-many-files", func(t *testing.T, dir string) {
			for _, f := range []string{"a", "b", "c"} {
				writeFile(t, filepath.Join(dir, f), f, 0o644)
			}
		}, Limits{MaxFiles: 3}, skill.RuleLimit},
		{"dotdot-in-name", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "notes..md"), "x", 0o644)
		}, Limits{}, skill.RuleResourcePath},
		{"too-many-bytes", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "a.bin"), strings.Repeat("a", 600), 0o644)
			writeFile(t, filepath.Join(dir, "b.bin"), strings.Repeat("b", 600), 0o644)
		}, Limits{MaxTotalBytes: 1000}, skill.RuleLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, "bad")
			writeFile(t, filepath.Join(dir, "SKILL.md"), skillMD("bad"), 0o644)
			writeFile(t, filepath.Join(dir, "sub", "keep.md"), "keep", 0o644)
			writeFile(t, filepath.Join(root, "good", "SKILL.md"), skillMD("good"), 0o644)
			tt.setup(t, dir)
			snap := scanTree(t, Input{SkillsDir: root, Limits: tt.lim})
			if len(problemsUnder(snap, root+"/bad", tt.rule)) == 0 {
				t.Errorf("no %q problem; problems: %v", tt.rule, snap.Problems)
			}
			if _, ok := snap.Skill("bad"); ok {
				t.Error("invalid skill was published")
			}
			if _, ok := snap.Skill("good"); !ok {
				t.Error("valid neighbour was dropped")
			}
			if ps := snap.SkillEntries["good"].Problems; len(ps) != 0 {
				t.Errorf("valid neighbour has problems %v", ps)
			}
		})
	}
}

// TestSymlinkInsideRootIsPublished: a link to a file inside the root is
// served as the file it points to, and a linked skill folder works too.
func TestSymlinkInsideRootIsPublished(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "shared", "SKILL.md"), skillMD("shared"), 0o644)
	writeFile(t, filepath.Join(root, "shared", "common.md"), "common text\n", 0o755)
	writeFile(t, filepath.Join(root, "user", "SKILL.md"), skillMD("user"), 0o644)
	symlink(t, "../shared/common.md", filepath.Join(root, "user", "common.md"))
	if err := os.Mkdir(filepath.Join(root, "alias-target"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "alias-target", "SKILL.md"), skillMD("alias"), 0o644)
	symlink(t, "alias-target", filepath.Join(root, "alias"))
	snap := scanTree(t, Input{SkillsDir: root})
	user, ok := snap.Skill("user")
	if !ok {
		t.Fatalf("user missing; problems %v", snap.Problems)
	}
	r, ok := user.Latest.Resource("common.md")
	if !ok || r.Mode != 0o755 {
		t.Fatalf("common.md = %+v, want the linked file with its execute bit", r)
	}
	if b, _ := snap.Store.Get(r.Digest); string(b) != "common text\n" {
		t.Errorf("linked bytes = %q", b)
	}
	if !snap.SkillEntries["user"].Linked || snap.SkillEntries["shared"].Linked {
		t.Error("only the entry holding a link is marked linked")
	}
	if _, ok := snap.Skill("alias"); !ok {
		t.Errorf("skill folder reached through a symlink is missing; problems %v", snap.Problems)
	}
}

// TestSpecialFilesAreNamed: a FIFO or socket is reported as what it is,
// wherever it is: as SKILL.md (not "no SKILL.md"), in a version folder,
// and directly in either root, where regular notes are ignored but
// README.md in the agents root is an agent with an invalid name.
func TestSpecialFilesAreNamed(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(skills, "good", "SKILL.md"), skillMD("good"), 0o644)
	writeFile(t, filepath.Join(skills, "README.md"), "# Our skills\n", 0o644)
	writeFile(t, filepath.Join(skills, "versioned", "2.0.0", "SKILL.md"), skillMD("versioned"), 0o644)
	if err := os.MkdirAll(filepath.Join(skills, "pipe-skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(skills, "versioned", "1.0.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(agents, "good.md"), agentMD("good"), 0o644)
	writeFile(t, filepath.Join(agents, "notes.txt"), "not an agent\n", 0o644)
	writeFile(t, filepath.Join(agents, "README.md"), "# Our agents\n", 0o644)
	for _, p := range []string{
		filepath.Join(skills, "pipe-skill", "SKILL.md"),
		filepath.Join(skills, "versioned", "1.0.0", "SKILL.md"),
		filepath.Join(skills, "stray-pipe"),
		filepath.Join(agents, "pipe"),
		filepath.Join(agents, "fifo.md"),
	} {
		mkfifo(t, p)
	}
	if err := unix.Mknod(filepath.Join(agents, "sock"), unix.S_IFSOCK|0o644, 0); err != nil {
		t.Skipf("mknod socket: %v", err)
	}
	snap := scanTree(t, Input{SkillsDir: skills, AgentsDir: agents})

	want := map[string]string{
		skills + "/pipe-skill/SKILL.md":      skill.RuleFileType,
		skills + "/versioned/1.0.0/SKILL.md": skill.RuleFileType,
		skills + "/stray-pipe":               skill.RuleFileType,
		agents + "/pipe":                     skill.RuleFileType,
		agents + "/fifo.md":                  skill.RuleFileType,
		agents + "/sock":                     skill.RuleFileType,
		agents + "/README.md":                skill.RuleName,
	}
	got := map[string]string{}
	for _, p := range snap.Problems {
		got[p.Path] = p.Rule
		if p.Rule == skill.RuleFileType && !strings.Contains(p.Message, "a FIFO") && !strings.Contains(p.Message, "a socket") {
			t.Errorf("%v does not say what the file is", p)
		}
		if p.Severity != skill.SeverityError {
			t.Errorf("unexpected warning %v", p)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("problems by path = %v, want %v; all: %v", got, want, snap.Problems)
	}
	if _, ok := snap.Skill("good"); !ok {
		t.Error("valid skill dropped")
	}
	if v, ok := snap.Skill("versioned"); !ok || len(v.Versions) != 1 {
		t.Errorf("versioned = %v: 2.0.0 must stay published beside the FIFO in 1.0.0", v)
	}
	if _, ok := snap.Agent("good"); !ok || len(snap.Agents) != 1 {
		t.Errorf("agents = %v, want good alone", snap.Agents)
	}
}

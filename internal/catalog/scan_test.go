package catalog

import (
	"archive/zip"
	"bytes"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

func scanTree(t *testing.T, src Source) *Snapshot {
	t.Helper()
	snap, err := Build(t.Context(), src, 1)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return snap
}

// TestInvalidFixtures scans testdata/invalid/skills, where every folder but
// valid-neighbour holds a `.expect` file naming the rule and severity its
// problem must have. Errors keep the skill out; warnings do not.
func TestInvalidFixtures(t *testing.T) {
	root := "../../testdata/invalid/skills"
	snap := scanTree(t, Source{SkillsDir: root})
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			expect, err := os.ReadFile(filepath.Join(root, name, ".expect"))
			if os.IsNotExist(err) {
				if _, ok := snap.Skill(name); !ok {
					t.Errorf("valid skill %s is missing from the snapshot", name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rule, severity, _ := strings.Cut(strings.TrimSpace(string(expect)), " ")
			prefix := root + "/" + name
			var found bool
			for _, p := range snap.Problems {
				if (p.Path == prefix || strings.HasPrefix(p.Path, prefix+"/")) && p.Rule == rule && string(p.Severity) == severity {
					found = true
					if p.Message == "" {
						t.Errorf("problem %v has no message", p)
					}
				}
			}
			if !found {
				t.Errorf("no %s %q problem under %s; problems: %v", severity, rule, prefix, snap.Problems)
			}
			_, published := snap.Skill(name)
			if want := severity == "warning"; published != want {
				t.Errorf("published = %v, want %v", published, want)
			}
		})
	}
	if n := len(snap.Skills); n != 3 {
		t.Errorf("published %d skills, want the 3 valid ones", n)
	}
}

// TestExampleTree checks layout, versions and artifact types of the bundled
// example tree.
func TestExampleTree(t *testing.T) {
	snap := scanTree(t, Source{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	if len(snap.Problems) != 0 {
		t.Errorf("example tree has problems: %v", snap.Problems)
	}
	tests := []struct {
		name     string
		latest   string
		versions string // newest first
		typ      item.ArtifactType
	}{
		{"code-review", "1.0.0", "1.0.0", item.TypeArchive},
		{"k8s-deploy", "1.2.0", "2.0.0-rc.1,1.2.0,1.0.0", item.TypeArchive},
		{"release-notes", "0.3.1", "0.3.1", item.TypeSkillMD},
		{"support-triage", "1.2.0", "1.2.0", item.TypeSkillMD},
		{"windows-notes", "0.0.0+8edeca7ea1f2", "0.0.0+8edeca7ea1f2", item.TypeSkillMD},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sk, ok := snap.Skill(tt.name)
			if !ok {
				t.Fatal("missing")
			}
			var vs []string
			for _, v := range sk.Versions {
				vs = append(vs, v.Version)
			}
			if got := strings.Join(vs, ","); got != tt.versions {
				t.Errorf("versions = %s, want %s", got, tt.versions)
			}
			if sk.Latest.Version != tt.latest || sk.Latest.Type != tt.typ {
				t.Errorf("latest = %s (%s), want %s (%s)", sk.Latest.Version, sk.Latest.Type, tt.latest, tt.typ)
			}
		})
	}
	k8s, _ := snap.Skill("k8s-deploy")
	script, ok := k8s.Latest.Resource("scripts/deploy.sh")
	if !ok || script.Mode != 0o755 {
		t.Errorf("scripts/deploy.sh = %+v, want mode 0755", script)
	}
	if logo, ok := k8s.Latest.Resource("assets/logo.png"); !ok || logo.Mode != 0o644 {
		t.Errorf("assets/logo.png = %+v, want mode 0644", logo)
	}
	rn, _ := snap.Skill("release-notes")
	if got := rn.Latest.PublishedAt.Format("2006-01-02T15:04:05Z07:00"); got != "2026-11-29T10:00:00Z" {
		t.Errorf("release-notes publishedAt = %s, want metadata.published", got)
	}
}

// TestArchiveFollowsZipRules opens every archive and checks the rules
// clients enforce and the determinism rules (docs/source-tree.md,
// "Archives").
func TestArchiveFollowsZipRules(t *testing.T) {
	snap := scanTree(t, Source{SkillsDir: "../../testdata/skills"})
	for _, sk := range snap.Skills {
		for _, v := range sk.Versions {
			if v.Type != item.TypeArchive {
				continue
			}
			b, _ := snap.Store.Get(v.Archive)
			zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("%s@%s: %v", v.Name, v.Version, err)
			}
			if zr.File[0].Name != "SKILL.md" {
				t.Errorf("%s@%s: first entry %q", v.Name, v.Version, zr.File[0].Name)
			}
			seen := map[string]bool{}
			for i, f := range zr.File {
				folded := strings.ToLower(f.Name)
				if seen[folded] || strings.Contains(f.Name, "..") || strings.HasPrefix(f.Name, "/") || strings.HasSuffix(f.Name, "/") || strings.Contains(f.Name, "//") {
					t.Errorf("%s@%s: bad entry name %q", v.Name, v.Version, f.Name)
				}
				seen[folded] = true
				if i > 1 && f.Name < zr.File[i-1].Name {
					t.Errorf("%s@%s: entries not sorted at %q", v.Name, v.Version, f.Name)
				}
				if m := f.Mode(); m != 0o644 && m != 0o755 {
					t.Errorf("%s: mode %v", f.Name, m)
				}
				if len(f.Extra) != 0 || f.Method != zip.Deflate {
					t.Errorf("%s: extra %d bytes, method %d", f.Name, len(f.Extra), f.Method)
				}
				rc, _ := f.Open()
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				var want []byte
				if f.Name == "SKILL.md" {
					want, _ = snap.Store.Get(v.SkillMD)
				} else if r, ok := v.Resource(f.Name); ok {
					want, _ = snap.Store.Get(r.Digest)
				}
				if !bytes.Equal(data, want) {
					t.Errorf("%s@%s/%s: zip entry differs from the published file", v.Name, v.Version, f.Name)
				}
			}
			if len(zr.File) != len(v.Resources)+1 {
				t.Errorf("%s@%s: %d entries, want %d", v.Name, v.Version, len(zr.File), len(v.Resources)+1)
			}
		}
	}
}

var writeFile = fixture.WriteFile

var skillMD = fixture.SkillMD

func problemsUnder(snap *Snapshot, prefix, rule string) []skill.Problem {
	var out []skill.Problem
	for _, p := range snap.Problems {
		if strings.HasPrefix(p.Path, prefix) && p.Rule == rule {
			out = append(out, p)
		}
	}
	return out
}

// TestFilesystemRules covers what cannot live in git: FIFOs, symlink loops,
// and size limits, each next to a valid skill that must stay published.
func TestFilesystemRules(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		lim   scan.Limits
		rule  string
	}{
		{"fifo", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, scan.Limits{}, skill.RuleFileType},
		{"dir-loop", func(t *testing.T, dir string) {
			symlink(t, "..", filepath.Join(dir, "sub", "up"))
		}, scan.Limits{}, skill.RuleSymlink},
		{"self-link", func(t *testing.T, dir string) {
			symlink(t, "self", filepath.Join(dir, "self"))
		}, scan.Limits{}, skill.RuleSymlink},
		{"file-too-big", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "big.bin"), strings.Repeat("x", 2000), 0o644)
		}, scan.Limits{MaxFileBytes: 1000}, skill.RuleLimit},
		{"too-many-files", func(t *testing.T, dir string) {
			for _, f := range []string{"a", "b", "c"} {
				writeFile(t, filepath.Join(dir, f), f, 0o644)
			}
		}, scan.Limits{MaxFiles: 3}, skill.RuleLimit},
		{"dotdot-in-name", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "notes..md"), "x", 0o644)
		}, scan.Limits{}, skill.RuleResourcePath},
		{"too-many-bytes", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "a.bin"), strings.Repeat("a", 600), 0o644)
			writeFile(t, filepath.Join(dir, "b.bin"), strings.Repeat("b", 600), 0o644)
		}, scan.Limits{MaxTotalBytes: 1000}, skill.RuleLimit},
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
			snap := scanTree(t, Source{SkillsDir: root, Limits: tt.lim})
			if len(problemsUnder(snap, root+"/bad", tt.rule)) == 0 {
				t.Errorf("no %q problem; problems: %v", tt.rule, snap.Problems)
			}
			if _, ok := snap.Skill("bad"); ok {
				t.Error("invalid skill was published")
			}
			if _, ok := snap.Skill("good"); !ok {
				t.Error("valid neighbour was dropped")
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
	snap := scanTree(t, Source{SkillsDir: root})
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
	if _, ok := snap.Skill("alias"); !ok {
		t.Errorf("skill folder reached through a symlink is missing; problems %v", snap.Problems)
	}
}

// TestScanIsDeterministic: two scans of one tree give identical documents
// and digests, whatever the modification times.
func TestScanIsDeterministic(t *testing.T) {
	src := Source{SkillsDir: "../../testdata/skills"}
	a, b := scanTree(t, src), scanTree(t, src)
	da, _ := a.Feed().Document(feed.Base{URL: "https://x.test"}, feed.DocKey{Kind: feed.DocRFCIndex})
	db, _ := b.Feed().Document(feed.Base{URL: "https://x.test"}, feed.DocKey{Kind: feed.DocRFCIndex})
	if !bytes.Equal(da.Body, db.Body) {
		t.Fatal("two scans of one tree rendered different indexes")
	}
}

func TestMissingRootFailsTheScan(t *testing.T) {
	_, err := Build(t.Context(), Source{SkillsDir: filepath.Join(t.TempDir(), "nope")}, 1)
	if err == nil {
		t.Fatal("scan of a missing root succeeded")
	}
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
}

func TestInvalidAgentFixtures(t *testing.T) {
	root := "../../testdata/invalid/agents"
	snap := scanTree(t, Source{AgentsDir: root})
	tests := []struct {
		path      string // under root
		rule      string
		severity  skill.Severity
		published string // agent name that must (still) be published, or ""
	}{
		{"bom-agent.md", skill.RuleEncoding, skill.SeverityError, ""},
		{"name-mismatch-agent.md", skill.RuleNameMismatch, skill.SeverityError, ""},
		{"empty-body.md", skill.RuleBody, skill.SeverityError, ""},
		{"bad-timeout.md", skill.RuleField, skill.SeverityError, ""},
		{"bad-role.md", skill.RuleField, skill.SeverityError, ""},
		{"dup.md", skill.RuleDuplicate, skill.SeverityError, ""},
		{"dup", skill.RuleDuplicate, skill.SeverityError, ""},
		{"version-file-mismatch/1.0.0.md", skill.RuleVersion, skill.SeverityError, ""},
		{"bad-version-file/1.0_x.md", skill.RuleVersion, skill.SeverityError, ""},
		{"unknown-key-agent.md", skill.RuleUnknownKey, skill.SeverityWarning, "unknown-key-agent"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			found := false
			for _, p := range snap.Problems {
				found = found || (p.Path == root+"/"+tt.path && p.Rule == tt.rule && p.Severity == tt.severity)
			}
			if !found {
				t.Errorf("no %s %q problem at %s; got %v", tt.severity, tt.rule, tt.path, snap.Problems)
			}
		})
	}
	var names []string
	for _, a := range snap.Agents {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "unknown-key-agent,valid-agent" {
		t.Errorf("published agents = %s, want only the valid ones", got)
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

func TestLayoutEdgeCases(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(agents, "README.md"), "# Our agents\n", 0o644)
	writeFile(t, filepath.Join(agents, "odd.md", "1.0.0.md"), "---\nname: odd\ndescription: d\n---\nBody\n", 0o644)
	writeFile(t, filepath.Join(skills, "order", "SKILL.md"), skillMD("order"), 0o644)
	writeFile(t, filepath.Join(skills, "order", "a", "x.md"), "x", 0o644)
	writeFile(t, filepath.Join(skills, "order", "a-b.md"), "y", 0o644)
	writeFile(t, filepath.Join(skills, "clash", "SKILL.md"), skillMD("clash"), 0o644)
	writeFile(t, filepath.Join(skills, "clash", "notes"), "file", 0o644)
	writeFile(t, filepath.Join(skills, "clash", "Notes", "x.md"), "in a folder", 0o644)
	snap := scanTree(t, Source{SkillsDir: skills, AgentsDir: agents})

	if len(problemsUnder(snap, agents+"/README.md", skill.RuleName)) != 1 {
		t.Errorf("README.md beside the agents is not reported as an invalid agent name: %v", snap.Problems)
	}
	if len(problemsUnder(snap, agents+"/odd.md", skill.RuleLayout)) == 0 {
		t.Errorf("folder odd.md/ not reported as a layout problem: %v", snap.Problems)
	}
	order, _ := snap.Skill("order")
	if got := order.Latest.Resources[0].Path; got != "a-b.md" {
		t.Errorf("first resource %q, want byte order (a-b.md before a/x.md)", got)
	}
	if _, ok := snap.Skill("clash"); ok || len(problemsUnder(snap, skills+"/clash", skill.RuleResourcePath)) == 0 {
		t.Errorf("file notes and folder Notes/ not reported: %v", snap.Problems)
	}
}

func TestMetadataListsKeepTheirItems(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), "---\nname: a\ndescription: d\nmetadata:\n  examples:\n    - Review this, then that\n    - Second\n  tags: x, y\n---\n", 0o644)
	snap := scanTree(t, Source{SkillsDir: root})
	a, _ := snap.Skill("a")
	if got := a.Latest.List("examples"); len(got) != 2 || got[0] != "Review this, then that" {
		t.Errorf("examples = %q: a YAML list item holding a comma must stay one item", got)
	}
	if got := a.Latest.List("tags"); len(got) != 2 || got[1] != "y" {
		t.Errorf("tags = %q: a comma-separated string splits", got)
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
	snap := scanTree(t, Source{SkillsDir: skills, AgentsDir: agents})

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

// TestNameCollisions: names a client's filesystem cannot hold side by
// side (letter case, full case folding, Unicode normalisation), and
// versions of one item equal under semver precedence or letter case, are
// errors on every name of the collision; the rest stays published.
func TestNameCollisions(t *testing.T) {
	tests := []struct {
		name  string
		files []string // below the skill (or agent) folder
		agent bool
		rule  string
		bad   []string // paths with a problem, below the folder
		good  []string // versions still published, for versioned items
	}{
		{"nfc and nfd", []string{"SKILL.md", "caf\u00e9.md", "cafe\u0301.md", "ok.md"}, false, skill.RuleResourcePath, []string{"caf\u00e9.md", "cafe\u0301.md"}, nil},
		{"full case folding", []string{"SKILL.md", "stra\u00dfe.md", "STRASSE.md"}, false, skill.RuleResourcePath, []string{"stra\u00dfe.md", "STRASSE.md"}, nil},
		{"kelvin sign", []string{"SKILL.md", "\u212a.md", "k.md"}, false, skill.RuleResourcePath, []string{"\u212a.md", "k.md"}, nil},
		{"folders", []string{"SKILL.md", "Docs/a.md", "docs/b.md", "docs/c.md"}, false, skill.RuleResourcePath, []string{"Docs", "docs"}, nil},
		{"skill versions", []string{"1.0.0/SKILL.md", "v1.0.0/SKILL.md", "1.0/SKILL.md", "1.0.0+build/SKILL.md", "2.0.0/SKILL.md", "1.0.1/SKILL.md"}, false, skill.RuleVersion, []string{"1.0.0", "v1.0.0", "1.0", "1.0.0+build"}, []string{"2.0.0", "1.0.1"}},
		{"skill versions in case", []string{"1.0.0-RC1/SKILL.md", "1.0.0-rc1/SKILL.md", "1.0.0-rc2/SKILL.md", "1.0.0/SKILL.md"}, false, skill.RuleVersion, []string{"1.0.0-RC1", "1.0.0-rc1"}, []string{"1.0.0", "1.0.0-rc2"}},
		{"agent versions", []string{"1.0.0.md", "v1.0.0.md", "2.0.0.md"}, true, skill.RuleVersion, []string{"1.0.0.md", "v1.0.0.md"}, []string{"2.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			skills, agents := t.TempDir(), t.TempDir()
			writeFile(t, filepath.Join(skills, "good", "SKILL.md"), skillMD("good"), 0o644)
			writeFile(t, filepath.Join(agents, "good.md"), agentMD("good"), 0o644)
			root, content := skills, skillMD("x")
			if tt.agent {
				root, content = agents, agentMD("x")
			}
			for _, f := range tt.files {
				writeFile(t, filepath.Join(root, "x", f), content, 0o644)
			}
			snap := scanTree(t, Source{SkillsDir: skills, AgentsDir: agents})
			var got []string
			for _, p := range snap.Problems {
				if p.Rule != tt.rule || p.Severity != skill.SeverityError {
					t.Errorf("unexpected problem %v", p)
					continue
				}
				got = append(got, strings.TrimPrefix(p.Path, root+"/x/"))
			}
			want := slices.Clone(tt.bad)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("problems at %q, want %q; all: %v", got, want, snap.Problems)
			}
			var published []string
			if tt.agent {
				if a, ok := snap.Agent("x"); ok {
					for _, v := range a.Versions {
						published = append(published, v.Version)
					}
				}
			} else if sk, ok := snap.Skill("x"); ok {
				for _, v := range sk.Versions {
					published = append(published, v.Version)
				}
			}
			if !slices.Equal(published, tt.good) {
				t.Errorf("published versions %q, want %q", published, tt.good)
			}
			if _, ok := snap.Skill("good"); !ok {
				t.Error("valid skill dropped")
			}
			if _, ok := snap.Agent("good"); !ok {
				t.Error("valid agent dropped")
			}
		})
	}
}

var symlink = fixture.Symlink

var agentMD = fixture.AgentMD

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
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

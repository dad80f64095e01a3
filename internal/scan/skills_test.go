package scan

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// TestInvalidFixtures scans testdata/invalid/skills, where every folder but
// valid-neighbour holds a `.expect` file naming the rule and severity its
// problem must have. Errors keep the skill out; warnings do not.
func TestInvalidFixtures(t *testing.T) {
	root := "../../testdata/invalid/skills"
	snap := scanTree(t, Input{SkillsDir: root})
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
					t.Errorf("valid skill %s is missing from the scan", name)
				}
				if ps := snap.SkillEntries[name].Problems; len(ps) != 0 {
					t.Errorf("valid skill %s has problems %v", name, ps)
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

// TestArchiveFollowsZipRules opens every archive and checks the rules
// clients enforce and the determinism rules (docs/source-tree.md,
// "Archives").
func TestArchiveFollowsZipRules(t *testing.T) {
	snap := scanTree(t, Input{SkillsDir: "../../testdata/skills"})
	archives := 0
	for _, sk := range snap.Skills {
		for _, v := range sk.Versions {
			if v.Type != item.TypeArchive {
				if v.Archive != "" || len(v.Resources) != 0 {
					t.Errorf("%s@%s: a lone SKILL.md with archive %q and resources %v", v.Name, v.Version, v.Archive, v.Resources)
				}
				continue
			}
			archives++
			b, ok := snap.Store.Get(v.Archive)
			if !ok {
				t.Fatalf("%s@%s: archive %s is not in the store", v.Name, v.Version, v.Archive)
			}
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
					if m := uint32(f.Mode().Perm()); m != r.Mode {
						t.Errorf("%s@%s/%s: zip mode %o, resource mode %o", v.Name, v.Version, f.Name, m, r.Mode)
					}
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
	if archives < 2 {
		t.Errorf("only %d archives checked", archives)
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
	snap := scanTree(t, Input{SkillsDir: skills, AgentsDir: agents})

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
	snap := scanTree(t, Input{SkillsDir: root})
	a, _ := snap.Skill("a")
	if got := a.Latest.List("examples"); len(got) != 2 || got[0] != "Review this, then that" {
		t.Errorf("examples = %q: a YAML list item holding a comma must stay one item", got)
	}
	if got := a.Latest.List("tags"); len(got) != 2 || got[1] != "y" {
		t.Errorf("tags = %q: a comma-separated string splits", got)
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
			snap := scanTree(t, Input{SkillsDir: skills, AgentsDir: agents})
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
				a, _ := snap.Agent("x")
				published = versionsOf(a)
			} else {
				sk, _ := snap.Skill("x")
				published = versionsOf(sk)
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

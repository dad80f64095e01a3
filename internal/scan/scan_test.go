package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/item"
)

// TestExampleTree checks layout, versions and artifact types of the bundled
// example tree.
func TestExampleTree(t *testing.T) {
	snap := scanTree(t, Input{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
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
			if got := strings.Join(versionsOf(sk), ","); got != tt.versions {
				t.Errorf("versions = %s, want %s", got, tt.versions)
			}
			if sk.Latest.Version != tt.latest || sk.Latest.Type != tt.typ {
				t.Errorf("latest = %s (%s), want %s (%s)", sk.Latest.Version, sk.Latest.Type, tt.latest, tt.typ)
			}
		})
	}
	if n := len(snap.Skills); n != len(tests) {
		t.Errorf("%d skills, want %d", n, len(tests))
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
	if got := rn.Latest.PublishedAt.Format("2006-01-02T15:04:05Z07:00"); got != "2026-11-29T10:00:00Z" || !rn.Latest.PublishedDeclared {
		t.Errorf("release-notes publishedAt = %s (declared %v), want metadata.published", got, rn.Latest.PublishedDeclared)
	}
	st, _ := snap.Skill("support-triage")
	if st.Latest.Subagent != "technical-support-diagnostician" {
		t.Errorf("support-triage routes to %q", st.Latest.Subagent)
	}
	if _, ok := snap.Agent("technical-support-diagnostician"); !ok {
		t.Error("the sub-agent support-triage routes to is missing")
	}
}

// artifactDigests lists, for every published version of s, its name,
// version, type and the digest and mode of each of its files.
func artifactDigests(s scanned) []string {
	var out []string
	for _, sk := range s.Skills {
		for _, v := range sk.Versions {
			line := fmt.Sprintf("skill %s@%s %s md=%s zip=%s", v.Name, v.Version, v.Type, v.SkillMD, v.Archive)
			for _, r := range v.Resources {
				line += fmt.Sprintf(" %s=%s/%o", r.Path, r.Digest, r.Mode)
			}
			out = append(out, line)
		}
	}
	for _, a := range s.Agents {
		for _, v := range a.Versions {
			out = append(out, fmt.Sprintf("agent %s@%s %s", v.Name, v.Version, v.Digest))
		}
	}
	return out
}

// TestScanIsDeterministic: two scans of one tree give identical items
// and stores, and a copy of the tree with other modification times the
// same versions, digests and archives (only undeclared published times
// follow the files).
func TestScanIsDeterministic(t *testing.T) {
	in := Input{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"}
	a, b := scanTree(t, in), scanTree(t, in)
	if !reflect.DeepEqual(a.Skills, b.Skills) || !reflect.DeepEqual(a.Agents, b.Agents) {
		t.Fatal("two scans of one tree made different items")
	}
	if a.Store.Len() == 0 || a.Store.Len() != b.Store.Len() || a.Store.Bytes() != b.Store.Bytes() {
		t.Errorf("stores of %d and %d blobs", a.Store.Len(), b.Store.Len())
	}
	a.Store.EachMissing(b.Store, func(d content.Digest, _ int64) { t.Errorf("blob %s in the first scan only", d) })
	b.Store.EachMissing(a.Store, func(d content.Digest, _ int64) { t.Errorf("blob %s in the second scan only", d) })

	skills, agents := fixture.ExampleTree(t, "../..")
	other := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, root := range []string{skills, agents} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink != 0 {
				return err
			}
			return os.Chtimes(p, other, other)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	c := scanTree(t, Input{SkillsDir: skills, AgentsDir: agents})
	if got, want := artifactDigests(c), artifactDigests(a); len(want) < 8 || !slices.Equal(got, want) {
		t.Errorf("other modification times changed what is published:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cr, _ := c.Skill("code-review")
	if cr.Latest.PublishedDeclared || !cr.Latest.PublishedAt.Equal(other) {
		t.Errorf("code-review publishedAt = %v, want the files' time %v", cr.Latest.PublishedAt, other)
	}
}

// TestMissingRootFailsTheScan: a configured root that is missing, or is
// not a folder, fails the whole scan; a scan reads no root partly.
func TestMissingRootFailsTheScan(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "nope")
	file := filepath.Join(tmp, "file")
	writeFile(t, file, "not a folder\n", 0o644)
	for _, in := range []Input{
		{SkillsDir: missing},
		{SkillsDir: file},
		{SkillsDir: "../../testdata/skills", AgentsDir: missing},
		{AgentsDir: file},
	} {
		in.Generation, in.Cache = 1, NewCache()
		r, err := Run(t.Context(), in)
		if !errors.Is(err, ErrScanFailed) || r != nil {
			t.Errorf("scan of %+v: %v, %v; want ErrScanFailed and no result", in, r, err)
		}
	}
}

// TestFailedScanKeepsTheCache: a scan that fails commits nothing to the
// cache, so the next scan still finds every unchanged file there.
func TestFailedScanKeepsTheCache(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "skills")
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	writeFile(t, filepath.Join(root, "a", "ref.md"), "ref\n", 0o644)
	writeFile(t, filepath.Join(root, "b", "SKILL.md"), skillMD("b"), 0o644)
	old := time.Now().Add(-time.Hour) // older than any doubt about a read
	for _, p := range []string{"a/SKILL.md", "a/ref.md", "b/SKILL.md"} {
		if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	cache := NewCache()
	// Without a state directory the bytes of unchanged files are the
	// previous scan's (Prev); the cache holds none.
	var prev *Result
	run := func(gen uint64) (*Result, error) {
		return Run(t.Context(), Input{SkillsDir: root, Generation: gen, Cache: cache, Prev: prev})
	}
	first, err := run(1)
	if err != nil {
		t.Fatal(err)
	}
	if first.FileCacheMisses != 3 || first.FileCacheHits != 0 {
		t.Fatalf("first scan: %d read, %d cached; want 3 and 0", first.FileCacheMisses, first.FileCacheHits)
	}
	prev = first
	moved := filepath.Join(tmp, "elsewhere")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := run(2); !errors.Is(err, ErrScanFailed) {
		t.Fatalf("scan of a missing root: %v", err)
	}
	if err := os.Rename(moved, root); err != nil {
		t.Fatal(err)
	}
	again, err := run(3)
	if err != nil {
		t.Fatal(err)
	}
	if again.FileCacheMisses != 0 || again.FileCacheHits != 3 {
		t.Errorf("after a failed scan: %d read, %d cached; want 0 and 3", again.FileCacheMisses, again.FileCacheHits)
	}
}

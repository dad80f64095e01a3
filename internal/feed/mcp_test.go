package feed

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/scan"
)

// mcpEntry is a skills/list entry as a host reads it.
type mcpEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []struct {
		URI, Digest string
		Size        int64
	} `json:"resources"`
}

func decodeEntry(t *testing.T, s MCPSkill) mcpEntry {
	t.Helper()
	var e mcpEntry
	if err := json.Unmarshal(s.Entry, &e); err != nil {
		t.Fatalf("entry of %s: %v\n%s", s.Name, err, s.Entry)
	}
	return e
}

// Every file an entry lists is the file MCPFile finds at its URI, with the
// digest and size of the bytes the store holds; the SKILL.md is listed
// first, the front matter is the file's, and the latest version is at
// skill://<name>/.
func TestMCPSkillsListEveryFile(t *testing.T) {
	f, store := scanFeed(t, Tree{SkillsDir: "../../testdata/skills"})
	skills := f.MCPSkills()
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
		e := decodeEntry(t, s)
		if e.URI != "skill://"+s.Name+"/SKILL.md" || e.URI != s.URI {
			t.Errorf("%s: uri %q", s.Name, e.URI)
		}
		if e.Frontmatter["name"] != s.Name || e.Frontmatter["description"] == "" {
			t.Errorf("%s: frontmatter %v", s.Name, e.Frontmatter)
		}
		if len(e.Resources) == 0 || e.Resources[0].URI != e.URI {
			t.Fatalf("%s: resources %+v do not start with the SKILL.md", s.Name, e.Resources)
		}
		for _, r := range e.Resources {
			file, ok := f.MCPFile(r.URI)
			if !ok {
				t.Fatalf("%s: no file at %s", s.Name, r.URI)
			}
			body, ok := store.Get(file.Digest)
			if !ok || content.Sum(body).String() != r.Digest || int64(len(body)) != r.Size || file.Size != r.Size {
				t.Errorf("%s: %s: digest %s size %d; store has %v (%d bytes)", s.Name, r.URI, r.Digest, r.Size, ok, len(body))
			}
		}
	}
	if !slices.IsSorted(names) || len(names) != 5 {
		t.Errorf("skills %v: want the 5 of the tree, by name", names)
	}
	k8s := decodeEntry(t, skills[slices.Index(names, "k8s-deploy")])
	if got := k8s.Frontmatter["compatibility"]; got != "Needs kubectl 1.28 or later on PATH." {
		t.Errorf("k8s-deploy compatibility %v: every front matter key is published", got)
	}
	if md := k8s.Frontmatter["metadata"].(map[string]any); md["version"] != "1.2.0" || md["tags"] != "kubernetes, deploy" {
		t.Errorf("k8s-deploy metadata %v", md)
	}
	if len(k8s.Resources) != 3 {
		t.Errorf("k8s-deploy 1.2.0 lists %d files, want SKILL.md, assets/logo.png and scripts/deploy.sh", len(k8s.Resources))
	}
}

// A version is reachable by number under _versions, the latest too, and
// the segment before SKILL.md is the skill's name there as well.
func TestMCPVersionsByNumber(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	vs := f.MCPVersions("k8s-deploy")
	var got []string
	for _, v := range vs {
		got = append(got, v.Version)
	}
	if !slices.Equal(got, []string{"2.0.0-rc.1", "1.2.0", "1.0.0"}) {
		t.Fatalf("versions %v", got)
	}
	old, ok := f.MCPSkill("skill://_versions/1.0.0/k8s-deploy/SKILL.md")
	if !ok || old.Version != "1.0.0" || old.Latest {
		t.Fatalf("1.0.0: %+v %v", old, ok)
	}
	if e := decodeEntry(t, old); len(e.Resources) != 1 || e.Resources[0].URI != old.URI {
		t.Errorf("1.0.0 is a lone SKILL.md: %+v", e.Resources)
	}
	latest, ok := f.MCPSkill("skill://k8s-deploy/SKILL.md")
	if !ok || latest.Version != "1.2.0" || !latest.Latest {
		t.Fatalf("latest: %+v %v", latest, ok)
	}
	byNumber, ok := f.MCPSkill("skill://_versions/1.2.0/k8s-deploy/SKILL.md")
	if !ok || !byNumber.Latest || byNumber.URI == latest.URI {
		t.Errorf("1.2.0 by number: %+v %v", byNumber, ok)
	}
	if _, ok := f.MCPFile("skill://_versions/1.2.0/k8s-deploy/scripts/deploy.sh"); !ok {
		t.Error("a resource of a version by number is not found")
	}
	for _, uri := range []string{
		"skill://_versions/9.9.9/k8s-deploy/SKILL.md", "skill://_versions/1.2.0/SKILL.md", "skill://nope/SKILL.md",
		"skill://k8s-deploy/../code-review/SKILL.md", "skill://k8s-deploy//SKILL.md", "skill://k8s-deploy/scripts",
		"skill://k8s-deploy/SKILL.md/x", "file://k8s-deploy/SKILL.md", "skill://k8s-deploy/%zz", "skill://k8s-deploy",
	} {
		if _, ok := f.MCPFile(uri); ok {
			t.Errorf("MCPFile(%q) found a file", uri)
		}
	}
}

// Folders list their direct children, folders as such; a file or an
// unknown path is no folder.
func TestMCPDirectory(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	root, ok := f.MCPDirectory("skill://k8s-deploy")
	if !ok {
		t.Fatal("the skill's root is no folder")
	}
	var got []string
	for _, e := range root {
		got = append(got, e.Name+map[bool]string{true: "/"}[e.Dir])
		if e.URI != "skill://k8s-deploy/"+e.Name {
			t.Errorf("entry %s: uri %s", e.Name, e.URI)
		}
	}
	if !slices.Equal(got, []string{"SKILL.md", "assets/", "scripts/"}) {
		t.Errorf("root lists %v", got)
	}
	scripts, ok := f.MCPDirectory("skill://k8s-deploy/scripts")
	if !ok || len(scripts) != 1 || scripts[0].Name != "deploy.sh" || scripts[0].Dir || scripts[0].File.Size == 0 {
		t.Errorf("scripts lists %+v %v", scripts, ok)
	}
	if old, ok := f.MCPDirectory("skill://_versions/1.0.0/k8s-deploy"); !ok || len(old) != 1 {
		t.Errorf("1.0.0's root lists %+v %v", old, ok)
	}
	for _, uri := range []string{"skill://k8s-deploy/SKILL.md", "skill://k8s-deploy/nope", "skill://nope", "skill://k8s-deploy/scripts/deploy.sh"} {
		if _, ok := f.MCPDirectory(uri); ok {
			t.Errorf("MCPDirectory(%q) found a folder", uri)
		}
	}
}

// A scoped view lists and finds only the skills it allows: a URI of any
// other is unknown, latest or by number.
func TestMCPScopedView(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	v := f.View("one", "", func(name string) bool { return name == "code-review" })
	if got := v.MCPSkills(); len(got) != 1 || got[0].Name != "code-review" {
		t.Fatalf("scoped list %+v", got)
	}
	for _, uri := range []string{"skill://k8s-deploy/SKILL.md", "skill://_versions/1.0.0/k8s-deploy/SKILL.md", "skill://k8s-deploy/scripts/deploy.sh"} {
		if _, ok := v.MCPFile(uri); ok {
			t.Errorf("scoped view reads %s", uri)
		}
		if _, ok := v.MCPSkill(uri); ok {
			t.Errorf("scoped view gets %s", uri)
		}
	}
	if _, ok := v.MCPDirectory("skill://k8s-deploy"); ok {
		t.Error("scoped view lists k8s-deploy's folder")
	}
	if v.MCPVersions("k8s-deploy") != nil {
		t.Error("scoped view lists k8s-deploy's versions")
	}
}

// A page continues after the name its cursor names, whichever names the
// view holds now.
func TestMCPSkillsAfter(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	var got []string
	for _, s := range f.MCPSkillsAfter("k8s-deploy") {
		got = append(got, s.Name)
	}
	if !slices.Equal(got, []string{"release-notes", "support-triage", "windows-notes"}) {
		t.Errorf("after k8s-deploy: %v", got)
	}
	if n := len(f.MCPSkillsAfter("kz")); n != 3 {
		t.Errorf("after a name no skill has: %d skills, want 3", n)
	}
	if n := len(f.MCPSkillsAfter("zzz")); n != 0 {
		t.Errorf("after the last: %d", n)
	}
}

// Resource paths are escaped segment by segment in URIs and found again.
func TestMCPEscapedPaths(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "spaced", "SKILL.md"), skillMD("spaced"), 0o644)
	writeFile(t, filepath.Join(dir, "spaced", "docs", "a b#c.md"), "x", 0o644)
	f := scanTree(t, Tree{SkillsDir: dir})
	e := decodeEntry(t, f.MCPSkills()[0])
	if len(e.Resources) != 2 || e.Resources[1].URI != "skill://spaced/docs/a%20b%23c.md" {
		t.Fatalf("resources %+v", e.Resources)
	}
	if file, ok := f.MCPFile(e.Resources[1].URI); !ok || file.Path != "docs/a b#c.md" {
		t.Errorf("escaped uri finds %+v %v", file, ok)
	}
}

// The rendered entries count in the feed's bytes, as its documents do.
func TestMCPSkillsCountInBytes(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	before := f.Bytes()
	var n int64
	for _, s := range f.MCPSkills() {
		n += int64(len(s.Entry))
	}
	if got := f.Bytes() - before; got < n {
		t.Errorf("the feed's bytes grew by %d; its entries hold %d", got, n)
	}
}

// unreadable is a store whose file d cannot be read while failing is set,
// as when its blob vanished from the state directory.
type unreadable struct {
	Files
	d       content.Digest
	failing atomic.Bool
}

func (u *unreadable) Read(d content.Digest) ([]byte, bool) {
	if d == u.d && u.failing.Load() {
		return nil, false
	}
	return u.Files.Read(d)
}

// An entry whose SKILL.md cannot be read has an empty front matter, and a
// list holding one is not kept: the next call, with the file readable
// again, carries the front matter.
func TestMCPSkillsWithAnUnreadableSkillMD(t *testing.T) {
	r, err := scan.Run(t.Context(), scan.Input{SkillsDir: "../../testdata/skills", Generation: 1, Cache: scan.NewCache()})
	if err != nil {
		t.Fatal(err)
	}
	sk := r.Skills[0]
	files := &unreadable{Files: r.Store, d: sk.Latest.SkillMD}
	files.failing.Store(true)
	f := New(Input{Generation: 1, Source: r, Files: files, Skills: r.Skills, Shared: NewSharedCache(testCacheBytes)})
	if e := decodeEntry(t, f.MCPSkills()[0]); len(e.Frontmatter) != 0 {
		t.Errorf("%s: front matter %v of an unreadable SKILL.md", sk.Name, e.Frontmatter)
	}
	files.failing.Store(false)
	if e := decodeEntry(t, f.MCPSkills()[0]); e.Frontmatter["name"] != sk.Name {
		t.Errorf("%s: front matter %v once readable; the incomplete list was kept", sk.Name, e.Frontmatter)
	}
}

package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/fixture"
)

const base = "https://skills.example.com"

// build scans the tree at skills and agents as the command does.
func build(t *testing.T, skills, agents string) *catalog.Snapshot {
	t.Helper()
	snap, err := catalog.Build(t.Context(), catalog.Source{SkillsDir: skills, AgentsDir: agents}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// exportTo writes the export of snap into out and returns its result.
func exportTo(t *testing.T, snap *catalog.Snapshot, out string, opts export.Options) export.Result {
	t.Helper()
	if opts.BaseURL == "" {
		opts.BaseURL = base
	}
	files, err := export.Files(snap.Feed(), snap.Store, opts)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := export.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	res, err := export.Export(t.Context(), tgt, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readTree returns every file under dir but the state file (and the
// file:// driver's metadata files), by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	return fixture.ReadTree(t, dir, func(rel string) bool { return rel == export.StateFile || strings.HasSuffix(rel, ".attrs") })
}

func TestTwoExportsAreIdentical(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	a, b := t.TempDir(), t.TempDir()
	exportTo(t, build(t, skills, agents), a, export.Options{})
	exportTo(t, build(t, skills, agents), b, export.Options{})
	ta, tb := readTree(t, a), readTree(t, b)
	if len(ta) < 50 {
		t.Fatalf("export of the example tree holds %d files", len(ta))
	}
	if !maps.EqualFunc(ta, tb, bytes.Equal) {
		t.Errorf("two exports of one tree differ:\n%q\n%q", slices.Sorted(maps.Keys(ta)), slices.Sorted(maps.Keys(tb)))
	}
	// Nothing links a dynamic route when no live server is named.
	for p, body := range ta {
		if strings.HasSuffix(p, ".json") || p == ".well-known/api-catalog" {
			for _, route := range []string{`"/api/v1/skills"`, `"/api/v1/subagents"`, "/health", "/api/v1/skills/"} {
				if bytes.Contains(body, []byte(route)) {
					t.Errorf("%s links the dynamic route %s", p, route)
				}
			}
		}
	}
}

// urlRE finds the artifact URLs documents advertise.
var urlRE = regexp.MustCompile(`"url": "` + regexp.QuoteMeta(base) + `/([^"]+)"`)

// advertised maps every artifact path the documents of tree name to its
// bytes in tree.
func advertised(t *testing.T, tree map[string][]byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for p, body := range tree {
		if !strings.HasSuffix(p, ".json") {
			continue
		}
		for _, m := range urlRE.FindAllSubmatch(body, -1) {
			u := string(m[1])
			b, ok := tree[u]
			if !ok {
				t.Errorf("%s advertises %s, which the export does not hold", p, u)
			}
			out[u] = b
		}
	}
	return out
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Re-exporting after an in-place edit of a declared version, a new
// skill and a removed one never changes the bytes at a path an earlier
// export advertised; pruning removes only what no current document names,
// and only once it is old enough.
func TestReexportNeverChangesAdvertisedBytes(t *testing.T) {
	skills := t.TempDir()
	out := t.TempDir()
	md := func(name string) string {
		return "---\nname: " + name + "\ndescription: Test skill " + name + ".\nversion: 1.0.0\n---\nBody.\n"
	}
	write(t, filepath.Join(skills, "alpha", "SKILL.md"), md("alpha"))
	write(t, filepath.Join(skills, "alpha", "notes.md"), "first notes\n")
	write(t, filepath.Join(skills, "gone", "SKILL.md"), md("gone"))
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	exportTo(t, build(t, skills, ""), out, export.Options{Now: func() time.Time { return t0 }})
	first := advertised(t, readTree(t, out))
	if len(first) < 3 {
		t.Fatalf("the first export advertises %d artifacts", len(first))
	}

	write(t, filepath.Join(skills, "alpha", "notes.md"), "edited notes, same version\n")
	write(t, filepath.Join(skills, "beta", "SKILL.md"), md("beta"))
	if err := os.RemoveAll(filepath.Join(skills, "gone")); err != nil {
		t.Fatal(err)
	}
	snap := build(t, skills, "")
	res := exportTo(t, snap, out, export.Options{PruneOlderThan: time.Hour, Now: func() time.Time { return t0.Add(time.Minute) }})
	tree := readTree(t, out)
	for p, b := range first {
		if got, ok := tree[p]; !ok || !bytes.Equal(got, b) {
			t.Errorf("re-export changed %s, advertised by the first export (present %v)", p, ok)
		}
	}
	// What the current documents name (earlier documents stay until
	// pruned too).
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	current := map[string][]byte{}
	for _, f := range files {
		current[f.Key] = f.Body
	}
	second := advertised(t, current)
	var stale []string
	for p := range first {
		if _, ok := second[p]; !ok {
			stale = append(stale, p)
		}
	}
	if len(stale) < 3 || res.Kept < len(stale) || res.Pruned != 0 {
		t.Fatalf("after the edit: %d advertised paths no longer named (%q), result %+v; want the edited archive, resource and the removed skill, kept", len(stale), stale, res)
	}
	if !bytes.Contains(tree[".well-known/agent-skills/index.json"], []byte("beta")) || bytes.Contains(tree[".well-known/agent-skills/index.json"], []byte(`"gone"`)) {
		t.Errorf("the index does not follow the tree:\n%s", tree[".well-known/agent-skills/index.json"])
	}

	// An hour after they were last named, the unnamed ones go; what the
	// current documents name stays.
	res = exportTo(t, build(t, skills, ""), out, export.Options{PruneOlderThan: time.Hour, Now: func() time.Time { return t0.Add(time.Minute + time.Hour) }})
	tree = readTree(t, out)
	for _, p := range stale {
		if _, ok := tree[p]; ok {
			t.Errorf("%s, named by no document for an hour, survived the prune", p)
		}
	}
	for p := range second {
		if _, ok := tree[p]; !ok {
			t.Errorf("prune removed %s, which a current document names", p)
		}
	}
	if res.Pruned < len(stale) || res.Written != 0 {
		t.Errorf("prune result %+v: want at least %d pruned and nothing written", res, len(stale))
	}
	if _, err := os.Stat(filepath.Join(out, "skill", "gone")); !os.IsNotExist(err) {
		t.Errorf("the removed skill's folder stays after the prune: %v", err)
	}
}

// The bucket form, through gocloud.dev/blob's file:// driver: the same
// objects, and a second export uploads nothing.
func TestBucketUploadsOnlyWhatChanged(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	dir, bucketDir := t.TempDir(), t.TempDir()
	exportTo(t, snap, dir, export.Options{})
	url := "file://" + filepath.ToSlash(bucketDir)
	first := exportTo(t, snap, url, export.Options{})
	if first.Written != first.Files {
		t.Errorf("first upload %+v: want every file written", first)
	}
	if got, want := readTree(t, bucketDir), readTree(t, dir); !maps.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("the bucket holds other objects than the folder export")
	}
	again := exportTo(t, snap, url, export.Options{})
	if again.Written != 0 || again.Unchanged != again.Files {
		t.Errorf("second upload %+v: want nothing written", again)
	}
}

// A state file that is not one is named, not overwritten.
func TestBadStateFile(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	out := t.TempDir()
	write(t, filepath.Join(out, export.StateFile), "not json")
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := export.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	_, err = export.Export(t.Context(), tgt, files, export.Options{BaseURL: base})
	if err == nil || !strings.Contains(err.Error(), export.StateFile) {
		t.Errorf("export over a bad state file: %v", err)
	}
	var v any
	if b, _ := os.ReadFile(filepath.Join(out, export.StateFile)); json.Unmarshal(b, &v) == nil {
		t.Error("the bad state file was overwritten")
	}
}

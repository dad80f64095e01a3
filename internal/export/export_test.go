package export_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/feed"
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
	// With the HTML catalogue: its pages are made once per snapshot, from
	// what the documents are made of, and must be as reproducible.
	exportTo(t, build(t, skills, agents), a, export.Options{Catalogue: true})
	exportTo(t, build(t, skills, agents), b, export.Options{Catalogue: true})
	ta, tb := readTree(t, a), readTree(t, b)
	if _, ok := ta["ui/skills/k8s-deploy/index.html"]; len(ta) < 50 || !ok {
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
			if !strings.HasPrefix("/"+u, strings.TrimSuffix(feed.PathBlob, "{digest}")) {
				continue // a document's URL (the AI catalogue names the agent card's), not an artifact's
			}
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

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Files are written so that a reader walking the export while it is
// written never follows a link to a file not there yet: every URL or href
// a JSON file holds that names another file of the export names one
// written before it. Before, every per-item document had one rank, so an
// identity was written before its versions and a page before the
// identities it lists.
func TestExportWritesWhatIsLinkedFirst(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	for i, f := range files {
		at[f.Key] = i
	}
	links := 0
	for i, f := range files {
		if !strings.HasPrefix(f.ContentType, "application/") || !json.Valid(f.Body) {
			continue
		}
		var doc any
		if err := json.Unmarshal(f.Body, &doc); err != nil {
			t.Fatal(err)
		}
		for s := range jsonStrings(doc) {
			target, ok := strings.CutPrefix(s, base)
			if !ok && !strings.HasPrefix(s, "/") {
				continue
			}
			if !ok {
				target = s
			}
			target, _, _ = strings.Cut(strings.TrimPrefix(target, "/"), "?")
			j, exported := at[target]
			if !exported || j == i {
				continue
			}
			links++
			if j > i {
				t.Errorf("%s (written %d.) links %s, written after it (%d.)", f.Key, i+1, target, j+1)
			}
		}
	}
	if links < len(files)/2 {
		t.Fatalf("found %d links between %d files: the walk misses them", links, len(files))
	}
}

// jsonStrings yields every string value in a decoded JSON document.
func jsonStrings(v any) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		var walk func(any) bool
		walk = func(v any) bool {
			switch x := v.(type) {
			case string:
				return yield(x)
			case []any:
				for _, e := range x {
					if !walk(e) {
						return false
					}
				}
			case map[string]any:
				for _, e := range x {
					if !walk(e) {
						return false
					}
				}
			}
			return true
		}
		walk(v)
	}
}

// shipped are files of a skill a browser runs script in when it opens
// them with their own type, and one it does not.
var shipped = map[string]string{
	"pwn.html":  "<!doctype html><title>shipped</title><script>document.title = 'pwned'</script>\n",
	"pwn.svg":   "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>document.title = 'pwned'</script></svg>\n",
	"pwn.xml":   "<html xmlns=\"http://www.w3.org/1999/xhtml\"><script>document.title = 'pwned'</script></html>\n",
	"notes.md":  "notes\n",
	"pwn.xhtml": "<html xmlns=\"http://www.w3.org/1999/xhtml\"><script>document.title = 'pwned'</script></html>\n",
}

// A skill's HTML, SVG and XML files are stored in a bucket as text/plain
// with Content-Disposition: attachment, so a bucket serving its objects
// (S3, GCS, Azure: no Content-Security-Policy) makes browsers download
// them, or at most show their text, never run their script; the other
// files keep their types. The bytes, and so the digests and the URLs, do
// not change. An object an earlier export stored as text/html is
// uploaded again for its metadata. Into a folder, which has no types,
// the export warns. Before, a bucket stored text/html and image/svg+xml.
func TestActiveFilesAreInert(t *testing.T) {
	skills := t.TempDir()
	write(t, filepath.Join(skills, "shipper", "SKILL.md"), "---\nname: shipper\ndescription: Ships HTML, SVG and XML.\nversion: 1.0.0\n---\nBody.\n")
	for name, body := range shipped {
		write(t, filepath.Join(skills, "shipper", name), body)
	}
	snap := build(t, skills, "")
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range files {
		name := path.Base(f.Key)
		body, ok := shipped[name]
		if !ok {
			continue
		}
		seen[name]++
		if string(f.Body) != body {
			t.Errorf("%s: the export changed the bytes", f.Key)
		}
		wantCT, wantCD := "text/plain; charset=utf-8", "attachment"
		switch name {
		case "notes.md":
			wantCT, wantCD = "text/markdown; charset=utf-8", ""
		case "pwn.xhtml": // not in serve's table: application/octet-stream
			wantCT, wantCD = "application/octet-stream", ""
		}
		if f.ContentType != wantCT || f.ContentDisposition != wantCD {
			t.Errorf("%s: Content-Type %q, Content-Disposition %q; want %q, %q", f.Key, f.ContentType, f.ContentDisposition, wantCT, wantCD)
		}
	}
	for name := range shipped {
		if seen[name] != 2 { // the artifact and the latest-version file
			t.Errorf("%s is in the export %d times; want 2", name, seen[name])
		}
	}

	// A bucket an earlier export wrote with the active types.
	bucketDir := t.TempDir()
	url := "file://" + filepath.ToSlash(bucketDir)
	exportTo(t, snap, url, export.Options{})
	b, err := blob.OpenBucket(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var old []string
	for _, f := range files {
		a, err := b.Attributes(t.Context(), f.Key)
		if err != nil {
			t.Fatal(err)
		}
		if a.ContentType != f.ContentType || a.ContentDisposition != f.ContentDisposition {
			t.Errorf("object %s: Content-Type %q, Content-Disposition %q; want %q, %q", f.Key, a.ContentType, a.ContentDisposition, f.ContentType, f.ContentDisposition)
		}
		if f.ContentDisposition != "" {
			if err := b.WriteAll(t.Context(), f.Key, f.Body, &blob.WriterOptions{ContentType: "text/html; charset=utf-8", CacheControl: f.CacheControl}); err != nil {
				t.Fatal(err)
			}
			old = append(old, f.Key)
		}
	}
	if res := exportTo(t, snap, url, export.Options{}); res.Written != len(old) || res.Metadata != len(old) {
		t.Errorf("export over objects stored as text/html: %+v; want the %d of them written for their metadata", res, len(old))
	}

	// A folder: the host sets the types; the export says so.
	res := exportTo(t, snap, t.TempDir(), export.Options{})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "8 files are HTML, SVG or XML") || !strings.Contains(res.Warnings[0], "docs/operations.md") {
		t.Errorf("export of active files into a folder warns %q; want one warning naming the 8 files and the docs", res.Warnings)
	}
}

// A resource name of 255 bytes, the most a file system takes, is written
// into a folder: its temporary file has a short name, not ".tmp-" and the
// name. Before, it exceeded the limit and the export stopped there.
func TestFolderWritesLongNames(t *testing.T) {
	out := t.TempDir()
	tgt, err := export.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	key := "api/v1/blobs/" + strings.Repeat("n", 252) + ".md"
	for _, body := range []string{"first\n", "second\n"} {
		if err := tgt.Write(t.Context(), export.File{Key: key, Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(out, filepath.FromSlash(key))); string(got) != body {
			t.Errorf("%s holds %q; want %q", key, got, body)
		}
	}
	entries, err := os.ReadDir(filepath.Join(out, "api", "v1", "blobs"))
	if err != nil || len(entries) != 1 {
		t.Errorf("the folder holds %v (%v); want the file alone, no temporary file left", entries, err)
	}
}

// A file a folder cannot hold is that file's failure, not the export's:
// two skills whose files have the same bytes, one at "LICENSE" and one at
// "LICENSE/x", have artifacts at ".../<digest>/LICENSE" and
// ".../<digest>/LICENSE/x", which a file system cannot both hold. Every
// other file is written, the indexes and the state file too, and the
// error names the one left out. Before, the export stopped at it, with
// no index written.
func TestWriteFailureIsTheFilesOwn(t *testing.T) {
	skills := t.TempDir()
	const license = "The same licence text, byte for byte.\n"
	for _, s := range []struct{ name, file string }{{"alpha", "LICENSE"}, {"beta", "LICENSE/x"}} {
		write(t, filepath.Join(skills, s.name, "SKILL.md"), "---\nname: "+s.name+"\ndescription: Skill "+s.name+".\nversion: 1.0.0\n---\nBody.\n")
		write(t, filepath.Join(skills, s.name, filepath.FromSlash(s.file)), license)
	}
	snap := build(t, skills, "")
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{t.TempDir(), "file://" + filepath.ToSlash(t.TempDir())} {
		// Twice: the second export finds the file where the folder
		// should be, and writes nothing else.
		for i, written := range []int{len(files) - 1, 0} {
			tgt, err := export.Open(t.Context(), out)
			if err != nil {
				t.Fatal(err)
			}
			res, err := export.Export(t.Context(), tgt, files, export.Options{BaseURL: base})
			tgt.Close()
			if err == nil || !strings.Contains(err.Error(), "/LICENSE/x") || res.Failed != 1 || res.Written != written {
				t.Errorf("export %d to %s: %+v, %v; want %d files written, LICENSE/x not, and an error naming it", i+1, out, res, err, written)
			}
		}
		dir := strings.TrimPrefix(out, "file://")
		for _, p := range []string{".well-known/agent-skills/index.json", export.StateFile} {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				t.Errorf("export to %s: %v", out, err)
			}
		}
	}
}

// A folder a link to outside the output has replaced is not written
// through, in a folder or a file:// bucket: the write is refused, the
// file outside stays as it was, and the rest is written. (Pruning
// through a link is tested in cmd/skillserver.)
func TestWriteDoesNotFollowLinks(t *testing.T) {
	skills := t.TempDir()
	write(t, filepath.Join(skills, "alpha", "SKILL.md"), "---\nname: alpha\ndescription: Skill alpha.\nversion: 1.0.0\n---\nBody.\n")
	for _, bucket := range []bool{false, true} {
		dir := t.TempDir()
		out := dir
		if bucket {
			out = "file://" + filepath.ToSlash(dir)
		}
		exportTo(t, build(t, skills, ""), out, export.Options{})
		outside := t.TempDir()
		if err := os.RemoveAll(filepath.Join(dir, "skills", "v1", "alpha")); err != nil {
			t.Fatal(err)
		}
		fixture.Symlink(t, outside, filepath.Join(dir, "skills", "v1", "alpha"))
		write(t, filepath.Join(outside, "index.json"), "not the export's\n")
		files, err := export.Files(build(t, skills, "").Feed(), build(t, skills, "").Store, export.Options{BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		tgt, err := export.Open(t.Context(), out)
		if err != nil {
			t.Fatal(err)
		}
		res, err := export.Export(t.Context(), tgt, files, export.Options{BaseURL: base})
		tgt.Close()
		if err == nil || !strings.Contains(err.Error(), "skills/v1/alpha is a symbolic link") || res.Failed < 2 {
			t.Errorf("export to %s through a link: %+v, %v; want the files below it refused", out, res, err)
		}
		if got := readFile(t, filepath.Join(outside, "index.json")); string(got) != "not the export's\n" {
			t.Errorf("export to %s wrote through the link: %q", out, got)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Errorf("export to %s wrote into the folder outside: %v", out, ents)
		}
	}
}

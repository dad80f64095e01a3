package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
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
// objects, and a second export uploads nothing, not even its state file
// (the same file, not one renamed over it); nor does a second export
// into a folder.
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
	for _, out := range []string{url, dir} {
		stateDir := strings.TrimPrefix(out, "file://")
		before := stat(t, filepath.Join(stateDir, export.StateFile))
		again := exportTo(t, snap, out, export.Options{})
		if again.Written != 0 || again.Metadata != 0 || again.Unchanged != again.Files {
			t.Errorf("second export to %s %+v: want nothing written", out, again)
		}
		if !os.SameFile(before, stat(t, filepath.Join(stateDir, export.StateFile))) {
			t.Errorf("the second export to %s rewrote its state file", out)
		}
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// Objects with the right bytes but the wrong attributes are uploaded
// again and counted apart; objects with wrong bytes are uploaded too, not
// counted as metadata only; the rest is not touched.
func TestBucketCorrectsMetadata(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	bucketDir := t.TempDir()
	url := "file://" + filepath.ToSlash(bucketDir)
	exportTo(t, snap, url, export.Options{})
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]export.File{}
	for _, f := range files {
		byKey[f.Key] = f
	}
	artifact := files[0].Key // artifacts come first
	const index, manifest, card = ".well-known/agent-skills/index.json", "manifest.json", ".well-known/agent-card.json"
	if !strings.HasPrefix(artifact, "api/v1/blobs/") || byKey[index].Key == "" || byKey[manifest].Key == "" || byKey[card].Key == "" {
		t.Fatalf("the export lacks an artifact, %s, %s or %s", index, manifest, card)
	}
	b, err := blob.OpenBucket(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tamper := map[string]*blob.WriterOptions{
		artifact: {ContentType: "application/octet-stream"},
		index:    {ContentType: byKey[index].ContentType, CacheControl: "public, max-age=31536000, immutable"},
		manifest: {ContentType: byKey[manifest].ContentType, CacheControl: byKey[manifest].CacheControl, ContentEncoding: "gzip"},
	}
	for key, opts := range tamper {
		if err := b.WriteAll(t.Context(), key, byKey[key].Body, opts); err != nil {
			t.Fatal(err)
		}
	}
	// Other bytes, the right attributes.
	if err := b.WriteAll(t.Context(), card, []byte("{}"), &blob.WriterOptions{ContentType: byKey[card].ContentType, CacheControl: byKey[card].CacheControl}); err != nil {
		t.Fatal(err)
	}
	untouched := map[string]os.FileInfo{}
	for _, f := range files {
		if _, ok := tamper[f.Key]; !ok && f.Key != card {
			untouched[f.Key] = stat(t, filepath.Join(bucketDir, filepath.FromSlash(f.Key)))
		}
	}

	res := exportTo(t, snap, url, export.Options{})
	if res.Written != 4 || res.Metadata != 3 || res.Unchanged != res.Files-4 {
		t.Errorf("export after the tampering %+v: want 4 written, 3 of them for metadata only", res)
	}
	for _, f := range files {
		a, err := b.Attributes(t.Context(), f.Key)
		if err != nil {
			t.Fatal(err)
		}
		body, err := b.ReadAll(t.Context(), f.Key)
		if err != nil {
			t.Fatal(err)
		}
		if a.ContentType != f.ContentType || a.CacheControl != f.CacheControl || a.ContentEncoding != "" || !bytes.Equal(body, f.Body) {
			t.Errorf("%s after the export: Content-Type %q, Cache-Control %q, Content-Encoding %q, bytes equal %v; want %q, %q, none, equal",
				f.Key, a.ContentType, a.CacheControl, a.ContentEncoding, bytes.Equal(body, f.Body), f.ContentType, f.CacheControl)
		}
		if before, ok := untouched[f.Key]; ok && !os.SameFile(before, stat(t, filepath.Join(bucketDir, filepath.FromSlash(f.Key)))) {
			t.Errorf("%s, untouched, was written again", f.Key)
		}
	}
}

// The state file of 0.1.0 (every key to the last time an export named
// it) is read: what it names that no document names any more is pruned
// once old enough, and the file is replaced by the current form.
func TestStateFileOf010(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	out := t.TempDir()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	exportTo(t, snap, out, export.Options{Now: func() time.Time { return t0 }})
	var st struct {
		Keys []string `json:"keys"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, export.StateFile)), &st); err != nil {
		t.Fatal(err)
	}
	old := map[string]string{"skill/old/.well-known/agent-skills/index.json": "2026-12-01T10:00:00Z", "skill/recent/index.json": "2026-12-01T11:30:00Z"}
	for k := range old {
		write(t, filepath.Join(out, filepath.FromSlash(k)), "{}\n")
	}
	named := maps.Clone(old)
	for _, k := range st.Keys {
		named[k] = "2026-12-01T12:00:00Z"
	}
	b, err := json.Marshal(map[string]any{"named": named})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(out, export.StateFile), string(b))

	res := exportTo(t, snap, out, export.Options{PruneOlderThan: time.Hour, Now: func() time.Time { return t0.Add(time.Minute) }})
	if res.Pruned != 1 || res.Kept != 1 || res.Written != 0 {
		t.Errorf("export over a 0.1.0 state file %+v: want the key last named 2 hours ago pruned, the one 30 minutes ago kept, nothing written", res)
	}
	if _, err := os.Stat(filepath.Join(out, "skill", "old")); !os.IsNotExist(err) {
		t.Errorf("the pruned key's folder stays: %v", err)
	}
	raw := readFile(t, filepath.Join(out, export.StateFile))
	var got struct {
		Keys    []string          `json:"keys"`
		Unnamed map[string]string `json:"unnamed_since"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Keys, st.Keys) || !maps.Equal(got.Unnamed, map[string]string{"skill/recent/index.json": "2026-12-01T11:30:00Z"}) || bytes.Contains(raw, []byte(`"named"`)) {
		t.Errorf("state file after the export, want the current keys and the kept one unnamed since it was last named:\n%s", raw)
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
	if b, err := os.ReadFile(filepath.Join(out, export.StateFile)); err != nil || string(b) != "not json" {
		t.Errorf("the bad state file was overwritten or removed: %q, %v", b, err)
	}
}

// A state file time that does not parse (edited by hand) is not old: the
// key is kept, and its time counts from this export.
func TestStateFileBadTimeIsKept(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	out := t.TempDir()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	exportTo(t, snap, out, export.Options{Now: func() time.Time { return t0 }})
	var st struct {
		Keys []string `json:"keys"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, export.StateFile)), &st); err != nil {
		t.Fatal(err)
	}
	const stray = "skill/gone/index.json"
	write(t, filepath.Join(out, filepath.FromSlash(stray)), "{}\n")
	b, err := json.Marshal(map[string]any{"keys": st.Keys, "unnamed_since": map[string]string{stray: "last Tuesday"}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(out, export.StateFile), string(b))

	later := t0.Add(48 * time.Hour)
	res := exportTo(t, snap, out, export.Options{PruneOlderThan: time.Hour, Now: func() time.Time { return later }})
	if res.Pruned != 0 || res.Kept != 1 {
		t.Errorf("export over a state file with a bad time %+v: want the key kept, nothing pruned", res)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(stray))); err != nil {
		t.Errorf("the key with a bad time was removed: %v", err)
	}
	var got struct {
		Unnamed map[string]string `json:"unnamed_since"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, export.StateFile)), &got); err != nil {
		t.Fatal(err)
	}
	if want := later.Format(time.RFC3339); got.Unnamed[stray] != want {
		t.Errorf("unnamed_since of the key = %q, want this export's time %q", got.Unnamed[stray], want)
	}
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

// A store whose MD5 of an object is not the MD5 of its bytes (S3 gives
// such ETags to objects it encrypts with SSE-KMS or SSE-C keys; here the
// file:// driver's recorded MD5 is overwritten) still has an unchanged
// tree's export write nothing: the export recorded the MD5 of what it
// wrote in the object's metadata. Before, every such object was uploaded
// again by every export.
func TestBucketWhoseMD5IsNotTheData(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	bucketDir := t.TempDir()
	url := "file://" + filepath.ToSlash(bucketDir)
	first := exportTo(t, snap, url, export.Options{})
	var attrs []string
	err := filepath.WalkDir(bucketDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".attrs") {
			attrs = append(attrs, p)
		}
		return err
	})
	if err != nil || len(attrs) < first.Files {
		t.Fatalf("%d .attrs files of the file:// driver under %s for %d files: %v", len(attrs), bucketDir, first.Files, err)
	}
	for _, p := range attrs {
		var xa map[string]any
		if err := json.Unmarshal(readFile(t, p), &xa); err != nil {
			t.Fatal(err)
		}
		xa["md5"] = []byte("0123456789abcdef") // 16 bytes, not the data's MD5
		b, err := json.Marshal(xa)
		if err != nil {
			t.Fatal(err)
		}
		write(t, p, string(b))
	}
	if res := exportTo(t, snap, url, export.Options{}); res.Written != 0 || res.Unchanged != first.Files {
		t.Errorf("export to a bucket whose MD5s are not the data's: %+v; want nothing written (%d attributes files changed)", res, len(attrs))
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

package catalog

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
)

// retiredOnlyBytes is what the retired snapshots hold that the published
// one does not, each blob counted once, found through the published
// documents' digests rather than through retention's own accounting.
func retiredOnlyBytes(c *Catalog) int64 {
	cur := c.Current().Store
	seen := map[content.Digest]bool{}
	var n int64
	count := func(s *Snapshot, d content.Digest) {
		if b, ok := s.Store.Get(d); ok && !cur.Has(d) && !seen[d] {
			seen[d] = true
			n += int64(len(b))
		}
	}
	for _, s := range c.Retired() {
		for _, sk := range s.Skills {
			for _, v := range sk.Versions {
				count(s, v.SkillMD)
				if v.Type == item.TypeArchive {
					count(s, v.Archive)
				}
				for _, r := range v.Resources {
					count(s, r.Digest)
				}
			}
		}
	}
	return n
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestRetentionBoundsRetiredSnapshots: rewriting a large resource eight
// times retires eight snapshots, each holding the old file and archive.
// What they hold counts against retention_max_bytes, so the oldest are
// dropped, and the live heap grows by about the bound, not by eight
// copies.
func TestRetentionBoundsRetiredSnapshots(t *testing.T) {
	const size = 4 << 20
	const bound = 10 << 20
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	big := make([]byte, size) // random: the archive is as large as the file
	write := func() {
		rand.Read(big)
		writeFile(t, filepath.Join(root, "a", "big.bin"), string(big), 0o644)
	}
	write()
	start := liveHeap()
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: 10 * time.Minute, RetentionMaxBytes: bound})
	for i := range 8 {
		write()
		if _, err := c.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		st := c.Retention()
		if st.Bytes > bound {
			t.Errorf("rewrite %d: retention holds %d bytes, bound %d", i, st.Bytes, bound)
		}
		if held := retiredOnlyBytes(c); held > st.Bytes || held > bound {
			t.Errorf("rewrite %d: retired snapshots hold %d bytes the published one does not; retention counts %d, bound %d", i, held, st.Bytes, bound)
		}
	}
	// The published snapshot holds the file and its archive, the scan
	// cache the file; retention at most the bound. Eight retired copies
	// would be 64 MiB more.
	if grown, want := liveHeap()-start, int64(3*size+bound+8<<20); grown > want {
		t.Errorf("the live heap grew by %d MiB after 8 rewrites, want at most %d MiB", grown>>20, want>>20)
	}
	if st := c.Retention(); st.SnapshotsDropped == 0 || st.Snapshots == 0 {
		t.Errorf("stats %+v: want some retired snapshots kept and some dropped for the bound", st)
	}
	runtime.KeepAlive(c)
}

// TestRetentionExpiresOnATimer: what a reload retired is released when
// its window ends, with no further reload.
func TestRetentionExpiresOnATimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
		writeFile(t, filepath.Join(root, "a", "ref.md"), "one", 0o644)
		var mu sync.Mutex
		var reported RetentionStats // the last stats metrics were told
		report := func(st RetentionStats) { mu.Lock(); reported = st; mu.Unlock() }
		c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: time.Minute,
			OnReload: func(res ReloadResult) { report(res.Retention) }, OnRetention: report})
		writeFile(t, filepath.Join(root, "a", "ref.md"), "two", 0o644)
		if _, err := c.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st := c.Retention(); st.Snapshots != 1 || st.Bytes == 0 {
			t.Fatalf("after the reload: %+v, want one retired snapshot and its bytes", st)
		}
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if st := c.Retention(); st.Snapshots != 1 {
			t.Fatalf("released before the window ended: %+v", st)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if st := c.Retention(); st.Snapshots != 0 || st.Bytes != 0 || st.Artifacts != 0 {
			t.Errorf("a minute after the reload, retention still holds %+v", st)
		}
		// The gauges (skillserver_retained_bytes) follow, with no reload.
		mu.Lock()
		defer mu.Unlock()
		if reported.Snapshots != 0 || reported.Bytes != 0 || reported.Artifacts != 0 {
			t.Errorf("after the window, the last stats reported were %+v, want nothing retained", reported)
		}
	})
}

// TestPartialUpdatesDropRewrittenBlobs: partial reloads lay new blobs
// over the previous store. A large file rewritten through the watch must
// not leave every earlier version in the published store: the overlay is
// flattened once it outgrows an eighth of the store in bytes, not only
// in blobs.
func TestPartialUpdatesDropRewrittenBlobs(t *testing.T) {
	const size = 1 << 20
	root := t.TempDir()
	for i := range 300 {
		name := fmt.Sprintf("s%03d", i)
		writeFile(t, filepath.Join(root, name, "SKILL.md"), skillMD(name), 0o644)
	}
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	big := make([]byte, size)
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: -1})
	for range 8 {
		rand.Read(big)
		writeFile(t, filepath.Join(root, "a", "big.bin"), string(big), 0o644)
		if _, err := c.Update(t.Context(), scan.Changes{Skills: map[string]bool{"a": true}}); err != nil {
			t.Fatal(err)
		}
	}
	snap := c.Current()
	var live int64
	for _, sk := range snap.Skills {
		for _, v := range sk.Versions {
			for _, d := range append([]content.Digest{v.SkillMD, v.Archive}, resourceDigests(v)...) {
				if b, ok := snap.Store.Get(d); ok {
					live += int64(len(b))
				}
			}
		}
	}
	if got := snap.Store.Bytes(); got > 3*live {
		t.Errorf("the published store holds %d MiB for %d MiB it serves", got>>20, live>>20)
	}
}

func resourceDigests(v *item.SkillVersion) []content.Digest {
	var out []content.Digest
	for _, r := range v.Resources {
		out = append(out, r.Digest)
	}
	return out
}

// TestLocate: Locate looks in the snapshot a request began on, then in
// the retired snapshots, newest first, then in retention, each as the
// lookup asks and as its view sees the tree, and nowhere past the window.
func TestLocate(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), "---\nname: a\ndescription: d\nversion: 1.0.0\n---\n", 0o644)
	writeFile(t, filepath.Join(root, "a", "ref.md"), "one", 0o644)
	writeFile(t, filepath.Join(root, "b", "SKILL.md"), skillMD("b"), 0o644)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: 10 * time.Minute, Now: clock.Now})
	a1, _ := c.Current().Skill("a")
	b, _ := c.Current().Skill("b")
	ver := a1.Latest.Version
	oldRef, oldZip := a1.Latest.Resources[0].Digest, a1.Latest.Archive
	oldZipBytes, _ := c.Current().Store.Get(oldZip)
	base := feed.Base{URL: "https://skills.example.com"}
	versionDoc := feed.DocKey{Kind: feed.DocSkillVersion, Name: "a", Version: ver}
	apiDoc := feed.DocKey{Kind: feed.DocAPISkillVersion, Name: "a", Version: ver}
	onlyA := View{Scope: "a", Allow: func(n string) bool { return n == "a" }}
	onlyB := View{Scope: "b", Allow: func(n string) bool { return n == "b" }}
	docOf := func(s *Snapshot) []byte {
		d, ok := s.Feed().Document(base, versionDoc)
		if !ok {
			t.Fatal("no version document")
		}
		return d.Body
	}
	check := func(what string, q Lookup, want string, found bool) Found {
		t.Helper()
		got, ok := c.Locate(nil, q)
		switch {
		case ok != found:
			t.Errorf("%s: found %v, want %v", what, ok, found)
		case ok && q.Asks != AsksDocument && string(blobBytes(t, got.Blob)) != want:
			t.Errorf("%s: %q, want %q", what, blobBytes(t, got.Blob), want)
		case ok && q.Asks == AsksDocument && string(got.Doc.Body) != want:
			t.Errorf("%s: document\n%s\nwant\n%s", what, got.Doc.Body, want)
		}
		return got
	}

	// The same version edited in place twice: the current snapshot's
	// document wins, the retired ones serve the files it no longer has.
	writeFile(t, filepath.Join(root, "a", "ref.md"), "two", 0o644)
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "a", "ref.md"), "three", 0o644)
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	last := c.Current()
	check("current document", Lookup{Asks: AsksDocument, Doc: versionDoc, Base: base}, string(docOf(last)), true)
	check("retired file", Lookup{Asks: AsksFile, Digest: oldRef, Name: "ref.md"}, "one", true)
	if got := check("retired archive", Lookup{Asks: AsksFile, Digest: oldZip, Name: "archive.zip"}, string(oldZipBytes), true); got.Install != "a" {
		t.Errorf("retired archive installs %q, want a", got.Install)
	}
	check("retired file, other name", Lookup{Asks: AsksFile, Digest: oldRef, Name: "other.md"}, "", false)
	check("retired file, other item's view", Lookup{Asks: AsksFile, View: onlyB, Digest: oldRef, Name: "ref.md"}, "", false)
	check("retired file, its item's view", Lookup{Asks: AsksFile, View: onlyA, Digest: oldRef, Name: "ref.md"}, "one", true)

	// The skill removed: its documents answer from the newest retired
	// snapshot, and only those of a kind a walk of the tree reaches.
	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	check("newest retired document", Lookup{Asks: AsksDocument, Doc: versionDoc, Base: base}, string(docOf(last)), true)
	check("document of a kind not retained", Lookup{Asks: AsksDocument, Doc: apiDoc, Base: base}, "", false)

	// Retired snapshots gone (dropped for the byte bound, say): retention
	// answers for the window.
	c.retain.mu.Lock()
	for len(c.retain.snapshots) > 0 {
		c.retain.dropSnapshot(0)
	}
	c.retain.mu.Unlock()
	check("document without retired snapshots", Lookup{Asks: AsksDocument, Doc: versionDoc, Base: base}, "", false)
	check("retained file", Lookup{Asks: AsksFile, Digest: oldRef, Name: "ref.md"}, "one", true)
	if got := check("retained archive", Lookup{Asks: AsksFile, Digest: oldZip, Name: "archive.zip"}, string(oldZipBytes), true); got.Install != "a" {
		t.Errorf("retained archive installs %q, want a", got.Install)
	}
	check("retained file, other item's view", Lookup{Asks: AsksFile, View: onlyB, Digest: oldRef, Name: "ref.md"}, "", false)
	check("retained file, its item's view", Lookup{Asks: AsksFile, View: onlyA, Digest: oldRef, Name: "ref.md"}, "one", true)
	refKey := ArtifactKey{Name: "a", Version: ver, File: "ref.md"}
	check("pinned, retained", Lookup{Asks: AsksPinned, Digest: oldRef, Key: refKey}, "one", true)
	check("pinned, no key", Lookup{Asks: AsksPinned, Digest: oldRef}, "", false)
	check("pinned, another key", Lookup{Asks: AsksPinned, Digest: oldRef, Key: ArtifactKey{Name: "a", Version: ver, File: "x.md"}}, "", false)
	check("pinned, served now", Lookup{Asks: AsksPinned, Digest: b.Latest.SkillMD, Served: b.Latest.SkillMD}, skillMD("b"), true)
	check("blob, retained", Lookup{Asks: AsksBlob, Digest: oldRef}, "one", true)
	check("blob, retained, scoped view", Lookup{Asks: AsksBlob, View: onlyA, Digest: oldRef}, "", false)
	check("blob, current", Lookup{Asks: AsksBlob, Digest: b.Latest.SkillMD}, skillMD("b"), true)
	check("blob, current, its item's view", Lookup{Asks: AsksBlob, View: onlyB, Digest: b.Latest.SkillMD}, skillMD("b"), true)
	check("blob, current, other item's view", Lookup{Asks: AsksBlob, View: onlyA, Digest: b.Latest.SkillMD}, "", false)

	clock.Advance(11 * time.Minute)
	check("file past the window", Lookup{Asks: AsksFile, Digest: oldRef, Name: "ref.md"}, "", false)
	check("pinned past the window", Lookup{Asks: AsksPinned, Digest: oldRef, Key: refKey}, "", false)
	check("blob past the window", Lookup{Asks: AsksBlob, Digest: oldRef}, "", false)
}

// blobBytes reads a found blob whole.
func blobBytes(t *testing.T, b content.Blob) []byte {
	t.Helper()
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

package catalog

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/content"
)

// TestSweepKeepsWhatRetentionNames: with the blobs in a state directory,
// a reload that replaces a file keeps the old bytes on disk, and served,
// for as long as retention names them; the first flat reload after the
// window removes them, and never a blob the published snapshot serves.
func TestSweepKeepsWhatRetentionNames(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	writeFile(t, filepath.Join(root, "a", "ref.md"), "one", 0o644)
	dir := testDir(t)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: 10 * time.Minute, Now: clock.Now, Blobs: dir})
	v1, _ := c.Current().Skill("a")
	oldZip, oldRef := v1.Latest.Archive, v1.Latest.Resources[0].Digest
	zipKey := ArtifactKey{Name: "a", Version: v1.Latest.Version, File: "archive.zip"}
	if n := c.Current().Store.MemoryBytes(); n != 0 {
		t.Errorf("the snapshot holds %d bytes in memory, want none: they are in the state directory", n)
	}

	writeFile(t, filepath.Join(root, "a", "ref.md"), "two", 0o644)
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []content.Digest{oldZip, oldRef} {
		if !dir.Has(d) {
			t.Errorf("blob %s swept while retention names it", d)
		}
	}
	if b, ok := c.Retained(zipKey, oldZip); !ok || content.Sum(b) != oldZip {
		t.Fatal("the old archive is not served from the state directory within the window")
	}

	clock.Advance(11 * time.Minute)
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []content.Digest{oldZip, oldRef} {
		if dir.Has(d) {
			t.Errorf("blob %s kept after its window ended and a full reload", d)
		}
	}
	snap := c.Current()
	for _, d := range snap.Store.Digests() {
		if _, ok := snap.Store.Get(d); !ok {
			t.Errorf("the published blob %s was swept", d)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir.Path(), "blobs", "sha256", "*", "*"))
	if len(files) != snap.Store.Len() {
		t.Errorf("%d blob files on disk, want the %d the snapshot holds", len(files), snap.Store.Len())
	}
}

// testDir is a new state directory's blob folder, closed with the test.
func testDir(t *testing.T) *content.Dir {
	t.Helper()
	dir, err := content.OpenDir(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	return dir
}

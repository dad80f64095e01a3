package catalog

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// A verify publishes what a full reload would when, and only when, that
// differs from what is published: the files' bytes, a modification time
// the documents show, a problem, an entry gone.
func TestVerifyPublishesOnlyWhatChanged(t *testing.T) {
	root, agents := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(root, "flat", "SKILL.md"), skillMD("flat"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "1.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "2.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(agents, "helper.md"), "---\nname: helper\ndescription: d\n---\nBody\n", 0o644)
	var reports atomic.Int32
	c := newTestCatalog(t, Source{SkillsDir: root, AgentsDir: agents}, Options{OnReload: func(ReloadResult) { reports.Add(1) }})

	// unchanged verifies that nothing is published: the snapshot stays
	// the one published, and no reload is reported. The files were just
	// written, so the first one also reads them again to confirm them
	// (their modification times are too close to their reads to trust).
	unchanged := func(when string) {
		t.Helper()
		cur, n := c.Current(), reports.Load()
		snap, err := c.Verify(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if snap != cur || c.Current() != cur || reports.Load() != n {
			t.Errorf("%s: a verify of an unchanged tree published generation %d over %d (%d reports, were %d)",
				when, c.Current().Generation, cur.Generation, reports.Load(), n)
		}
	}
	unchanged("after the first scan")

	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, change := range []struct {
		name string
		make func()
	}{
		{"a file's bytes", func() {
			writeFile(t, filepath.Join(root, "flat", "SKILL.md"), "---\nname: flat\ndescription: another\n---\nBody\n", 0o644)
		}},
		{"a modification time", func() {
			if err := os.Chtimes(filepath.Join(root, "flat", "SKILL.md"), old, old); err != nil {
				t.Fatal(err)
			}
		}},
		{"a problem only", func() { writeFile(t, filepath.Join(root, "Not_A_Name", "SKILL.md"), skillMD("x"), 0o644) }},
		{"a version gone", func() {
			if err := os.RemoveAll(filepath.Join(root, "multi", "1.0.0")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a sub-agent gone", func() {
			if err := os.Remove(filepath.Join(agents, "helper.md")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		before := c.Current()
		change.make()
		snap, err := c.Verify(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", change.name, err)
		}
		if snap == before || snap.Generation != before.Generation+1 || c.Current() != snap {
			t.Errorf("%s: the verify did not publish it (generation %d, was %d)", change.name, c.Current().Generation, before.Generation)
		}
		unchanged("after " + change.name)
	}
}

package scan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// stateTree is a skills tree with an archive skill, a flat skill and an
// agent, every file older than the cache's doubt about a read, and a
// state directory to scan it with.
type stateTree struct {
	root, agents, state string
}

func newStateTree(t *testing.T) stateTree {
	t.Helper()
	tmp := t.TempDir()
	st := stateTree{root: filepath.Join(tmp, "skills"), agents: filepath.Join(tmp, "agents"), state: filepath.Join(tmp, "state")}
	writeFile(t, filepath.Join(st.root, "a", "SKILL.md"), skillMD("a"), 0o644)
	writeFile(t, filepath.Join(st.root, "a", "ref.md"), "ref\n", 0o644)
	writeFile(t, filepath.Join(st.root, "a", "scripts", "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	writeFile(t, filepath.Join(st.root, "b", "1.0.0", "SKILL.md"), skillMD("b"), 0o644)
	writeFile(t, filepath.Join(st.root, "b", "1.0.0", "notes.txt"), "notes\n", 0o644)
	writeFile(t, filepath.Join(st.agents, "helper.md"), agentMD("helper"), 0o644)
	st.age(t)
	return st
}

// age moves every file's modification time an hour back.
func (st stateTree) age(t *testing.T) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, root := range []string{st.root, st.agents} {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				os.Chtimes(p, old, old)
			}
			return err
		})
	}
}

// start opens the state directory and its cache as a new process would,
// and scans the tree once.
func (st stateTree) start(t *testing.T) (*Result, []error) {
	t.Helper()
	dir, err := content.OpenDir(st.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	defer dir.Close()
	cache, errs := OpenCache(filepath.Join(st.state, "scan-cache"), "stamp")
	r, err := Run(t.Context(), Input{SkillsDir: st.root, AgentsDir: st.agents, Generation: 1, Cache: cache, Blobs: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Save(); err != nil {
		t.Fatal(err)
	}
	return r, errs
}

// published lists every version a scan publishes with its digests.
func published(r *Result) []string {
	var out []string
	for _, s := range r.Skills {
		for _, v := range s.Versions {
			out = append(out, s.Name+"@"+v.Version+" "+string(v.Digest())+" "+strings.Join(digestsOf(v), ","))
		}
	}
	for _, a := range r.Agents {
		for _, v := range a.Versions {
			out = append(out, a.Name+"@"+v.Version+" "+string(v.Digest))
		}
	}
	return out
}

func digestsOf(v *item.SkillVersion) []string {
	var out []string
	for _, d := range v.Blobs() {
		out = append(out, string(d))
	}
	return out
}

// TestRestartReadsAndDeflatesNothing: a second process over the same
// unchanged tree and state directory stats the files and publishes the
// same versions, digests and bytes without reading a file or building an
// archive.
func TestRestartReadsAndDeflatesNothing(t *testing.T) {
	st := newStateTree(t)
	first, errs := st.start(t)
	if len(errs) != 0 {
		t.Fatalf("first start: cache errors %v", errs)
	}
	if first.FileCacheMisses != 6 || first.ArchivesBuilt != 2 {
		t.Fatalf("first start: %d files read, %d archives built; want 6 and 2", first.FileCacheMisses, first.ArchivesBuilt)
	}
	if n := first.Store.MemoryBytes(); n != 0 {
		t.Errorf("the store holds %d bytes in memory; over a state directory it holds none", n)
	}
	// Shards are written only when an entry in them changed: set them
	// back in time, and a restart over the same tree leaves them there.
	shards, _ := filepath.Glob(filepath.Join(st.state, "scan-cache", "*.cache"))
	old := time.Unix(1_000_000_000, 0)
	for _, p := range shards {
		os.Chtimes(p, old, old)
	}
	again, errs := st.start(t)
	if len(errs) != 0 {
		t.Fatalf("restart: cache errors %v", errs)
	}
	for _, p := range shards {
		if fi, err := os.Stat(p); err != nil || !fi.ModTime().Equal(old) {
			t.Errorf("restart over an unchanged tree rewrote %s (%v)", filepath.Base(p), err)
		}
	}
	if again.FileCacheMisses != 0 || again.FileCacheHits != 6 || again.ArchivesBuilt != 0 {
		t.Errorf("restart: %d files read, %d cached, %d archives built; want 0, 6 and 0", again.FileCacheMisses, again.FileCacheHits, again.ArchivesBuilt)
	}
	if a, b := published(first), published(again); !slices.Equal(a, b) {
		t.Errorf("restart published\n%v\nwant\n%v", b, a)
	}
	for _, d := range first.Store.Digests() {
		want, _ := first.Store.Get(d)
		if got, ok := again.Store.Get(d); !ok || string(got) != string(want) {
			t.Errorf("blob %s after the restart: %d bytes (%v), want %d", d, len(got), ok, len(want))
		}
	}
}

// TestFreshCheckoutDeflatesNothing: every file written again with the
// same bytes (new inodes and times, as git-sync's new worktree has them)
// is read and hashed again, but its archive is found by the digests of
// its inputs and not built again.
func TestFreshCheckoutDeflatesNothing(t *testing.T) {
	st := newStateTree(t)
	first, _ := st.start(t)
	for _, root := range []string{st.root, st.agents} {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			b, _ := os.ReadFile(p)
			os.Remove(p)
			return os.WriteFile(p, b, fi.Mode().Perm())
		})
	}
	st.age(t)
	again, _ := st.start(t)
	if again.FileCacheMisses != 6 || again.ArchivesBuilt != 0 {
		t.Errorf("fresh checkout: %d files read, %d archives built; want 6 and 0", again.FileCacheMisses, again.ArchivesBuilt)
	}
	if a, b := published(first), published(again); !slices.Equal(a, b) {
		t.Errorf("fresh checkout published\n%v\nwant\n%v", b, a)
	}
}

// TestRestartAfterAnInPlaceEdit: a declared version's file edited while
// the server was down (same path, same size, another time) is read
// again, and the version publishes the new bytes.
func TestRestartAfterAnInPlaceEdit(t *testing.T) {
	st := newStateTree(t)
	first, _ := st.start(t)
	notes := filepath.Join(st.root, "b", "1.0.0", "notes.txt")
	if err := os.WriteFile(notes, []byte("NOTES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	older := time.Now().Add(-30 * time.Minute)
	if err := os.Chtimes(notes, older, older); err != nil {
		t.Fatal(err)
	}
	shards, _ := filepath.Glob(filepath.Join(st.state, "scan-cache", "*.cache"))
	old := time.Unix(1_000_000_000, 0)
	for _, p := range shards {
		os.Chtimes(p, old, old)
	}
	again, _ := st.start(t)
	rewritten := 0
	for _, p := range shards {
		if fi, err := os.Stat(p); err == nil && !fi.ModTime().Equal(old) {
			rewritten++
		}
	}
	if rewritten != 1 {
		t.Errorf("%d shards rewritten after one entry changed, want 1", rewritten)
	}
	if again.FileCacheMisses != 1 || again.ArchivesBuilt != 1 {
		t.Errorf("after the edit: %d files read, %d archives built; want 1 and 1", again.FileCacheMisses, again.ArchivesBuilt)
	}
	b0, _ := first.Skill("b")
	b1, _ := again.Skill("b")
	res, _ := b1.Latest.Resource("notes.txt")
	if b1.Latest.Version != "1.0.0" || res.Digest != content.Sum([]byte("NOTES\n")) || b1.Latest.Archive == b0.Latest.Archive {
		t.Errorf("b@%s notes %s archive %s; want 1.0.0 with the edited notes in a new archive", b1.Latest.Version, res.Digest, b1.Latest.Archive)
	}
	if got, ok := again.Store.Get(res.Digest); !ok || string(got) != "NOTES\n" {
		t.Errorf("edited file serves %q (%v)", got, ok)
	}
}

// TestUntrustedCacheShardsAreIgnored: a truncated, a corrupt and a
// foreign shard, and shards stamped by another build, are each reported
// once, never trusted, and the scan over them publishes what a scan
// without a cache does.
func TestUntrustedCacheShardsAreIgnored(t *testing.T) {
	st := newStateTree(t)
	first, _ := st.start(t)
	shards, _ := filepath.Glob(filepath.Join(st.state, "scan-cache", "*.cache"))
	if len(shards) != 3 {
		t.Fatalf("%d shards written, want one per entry (3): an empty shard is no file", len(shards))
	}
	truncate := func(p string) {
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:len(b)/2], 0o644)
	}
	flip := func(p string) {
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 0xff
		os.WriteFile(p, b, 0o644)
	}
	foreign := func(p string) { os.WriteFile(p, []byte("PK\x03\x04 not a cache at all"), 0o644) }
	for i, spoil := range []func(string){truncate, flip, foreign} {
		spoil(shards[i])
	}
	again, errs := st.start(t)
	joined := ""
	for _, e := range errs {
		joined += e.Error() + "\n"
	}
	for _, want := range []string{"checksum mismatch", "not a scan cache of this format"} {
		if !strings.Contains(joined, want) {
			t.Errorf("cache errors do not say %q:\n%s", want, joined)
		}
	}
	if again.FileCacheMisses != 6 {
		t.Errorf("%d files read, want all 6: every entry's shard was spoiled", again.FileCacheMisses)
	}
	if a, b := published(first), published(again); !slices.Equal(a, b) {
		t.Errorf("over spoiled shards published\n%v\nwant\n%v", b, a)
	}
	// The spoiled shards were written again: the next start trusts all.
	third, errs := st.start(t)
	if len(errs) != 0 || third.FileCacheMisses != 0 {
		t.Errorf("after the rewrite: errors %v, %d files read; want none", errs, third.FileCacheMisses)
	}

	// Another build's stamp: every shard is ignored, in one line.
	dir, err := content.OpenDir(st.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	cache, errs := OpenCache(filepath.Join(st.state, "scan-cache"), "another build")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "another build") {
		t.Errorf("another stamp: errors %v, want one naming it", errs)
	}
	r, err := Run(t.Context(), Input{SkillsDir: st.root, AgentsDir: st.agents, Generation: 1, Cache: cache, Blobs: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.FileCacheMisses != 6 {
		t.Errorf("another stamp: %d files read, want all 6", r.FileCacheMisses)
	}
}

// TestSavedShardsLeaveMemory: once saved, a cache kept on disk holds no
// entry in memory, and each scan reads back the shards of the entries it
// opens: a partial one the changed entry's (saved again whole), a full
// one every shard, reusing every unchanged file and archive. An entry
// removed while its shard was on disk leaves the shard; a shard spoiled
// while on disk is reported by the scan that reads it back, its entries
// are read from the files, and it is written again; a full scan whose
// result is dropped (Restore) leaves memory and disk as they were.
func TestSavedShardsLeaveMemory(t *testing.T) {
	st := newStateTree(t)
	dir, err := content.OpenDir(st.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	cacheDir := filepath.Join(st.state, "scan-cache")
	cache, _ := OpenCache(cacheDir, "stamp")
	gen := uint64(0)
	scan := func(what string, prev *Result, changes *Changes) *Result {
		t.Helper()
		gen++
		r, err := Run(t.Context(), Input{SkillsDir: st.root, AgentsDir: st.agents, Generation: gen, Prev: prev, Changes: changes, Cache: cache, Blobs: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := cache.Save(); err != nil {
			t.Fatal(err)
		}
		if n := cache.Len(); n != 0 {
			t.Errorf("%s: %d entries in memory after the save, want 0", what, n)
		}
		return r
	}
	first := scan("first scan", nil, nil)

	notes := filepath.Join(st.root, "b", "1.0.0", "notes.txt")
	writeFile(t, notes, "NOTES\n", 0o644)
	if older := time.Now().Add(-30 * time.Minute); os.Chtimes(notes, older, older) != nil {
		t.Fatal("chtimes")
	}
	partial := scan("partial scan", first, &Changes{Skills: map[string]bool{"b": true}})
	if partial.FileCacheHits != 1 || partial.FileCacheMisses != 1 || partial.ArchivesBuilt != 1 {
		t.Errorf("partial scan of b: %d cached, %d read, %d archives built; want 1, 1 and 1", partial.FileCacheHits, partial.FileCacheMisses, partial.ArchivesBuilt)
	}
	full := scan("full scan", partial, nil)
	if full.FileCacheHits != 6 || full.FileCacheMisses != 0 || full.ArchivesBuilt != 0 || len(full.CacheIgnored) != 0 {
		t.Errorf("full scan: %d cached, %d read, %d archives built, ignored %v; want 6, 0, 0, none", full.FileCacheHits, full.FileCacheMisses, full.ArchivesBuilt, full.CacheIgnored)
	}
	if a, b := published(partial), published(full); !slices.Equal(a, b) {
		t.Errorf("full scan from the shards published\n%v\nwant\n%v", b, a)
	}

	// Dropped: memory and the shards' files stay as they were.
	shards, _ := filepath.Glob(filepath.Join(cacheDir, "*.cache"))
	old := time.Unix(1_000_000_000, 0)
	for _, p := range shards {
		os.Chtimes(p, old, old)
	}
	m := cache.Mark()
	gen++
	if _, err := Run(t.Context(), Input{SkillsDir: st.root, AgentsDir: st.agents, Generation: gen, Prev: full, Cache: cache, Blobs: dir}); err != nil {
		t.Fatal(err)
	}
	cache.Restore(m)
	if n := cache.Len(); n != 0 {
		t.Errorf("after Restore: %d entries in memory, want 0", n)
	}
	if err := cache.Save(); err != nil {
		t.Fatal(err)
	}
	for _, p := range shards {
		if fi, err := os.Stat(p); err != nil || !fi.ModTime().Equal(old) {
			t.Errorf("a dropped scan's cache was saved: %s rewritten (%v)", filepath.Base(p), err)
		}
	}

	if err := os.Remove(filepath.Join(st.agents, "helper.md")); err != nil {
		t.Fatal(err)
	}
	spoiled := shardPath(cacheDir, shardOf("skills/a"))
	if err := os.WriteFile(spoiled, []byte("not a cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	last := scan("full scan after a removal", full, nil)
	if len(last.CacheIgnored) != 1 || !strings.Contains(last.CacheIgnored[0].Error(), spoiled) {
		t.Errorf("spoiled shard: ignored %v, want one error naming %s", last.CacheIgnored, spoiled)
	}
	if last.FileCacheMisses != 3 || last.FileCacheHits != 2 {
		t.Errorf("after spoiling a's shard: %d read, %d cached; want a's 3 read, b's 2 cached", last.FileCacheMisses, last.FileCacheHits)
	}
	again, errs := OpenCache(cacheDir, "stamp")
	if len(errs) != 0 {
		t.Errorf("shards after the rewrite: %v", errs)
	}
	if _, ok := again.entries["agents/helper"]; ok || again.Len() != 2 {
		t.Errorf("shards hold %d entries (helper: %v); want a's and b's only", again.Len(), ok)
	}
}

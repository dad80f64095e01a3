package catalog

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

// fakeClock is a settable clock for retention tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestCatalog(t *testing.T, src Source, opts Options) *Catalog {
	t.Helper()
	c := New(src, slog.New(slog.DiscardHandler), opts)
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

func hasStale(snap *Snapshot, prefix string) bool {
	for _, p := range snap.Problems {
		if p.Rule == skill.RuleStale && strings.HasPrefix(p.Path, prefix) {
			return true
		}
	}
	return false
}

func TestLastGoodVersion(t *testing.T) {
	root := t.TempDir()
	agents := t.TempDir()
	writeFile(t, filepath.Join(root, "flat", "SKILL.md"), skillMD("flat"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "1.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "2.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(agents, "helper.md"), "---\nname: helper\ndescription: d\n---\nBody\n", 0o644)
	c := newTestCatalog(t, Source{SkillsDir: root, AgentsDir: agents}, Options{})
	first := c.Current()
	flat1, _ := first.Skill("flat")

	// Half-saved edits: broken front matter everywhere.
	writeFile(t, filepath.Join(root, "flat", "SKILL.md"), "---\nname: flat\ndescr", 0o644)
	writeFile(t, filepath.Join(root, "multi", "2.0.0", "SKILL.md"), "", 0o644)
	writeFile(t, filepath.Join(agents, "helper.md"), "---\nname: helper\n", 0o644)

	for _, reload := range []struct {
		name string
		run  func() (*Snapshot, error)
	}{
		{"full", func() (*Snapshot, error) { return c.Reload(t.Context()) }},
		{"update", func() (*Snapshot, error) {
			return c.Update(t.Context(), scan.Changes{Skills: map[string]bool{"flat": true, "multi": true}, Agents: map[string]bool{"helper": true}})
		}},
	} {
		t.Run(reload.name, func(t *testing.T) {
			snap, err := reload.run()
			if err != nil {
				t.Fatal(err)
			}
			flat, ok := snap.Skill("flat")
			if !ok || flat.Latest.SkillMD != flat1.Latest.SkillMD {
				t.Fatalf("flat lost its last good version")
			}
			b, ok := snap.Store.Get(flat.Latest.SkillMD)
			if !ok || content.Sum(b) != flat.Latest.SkillMD {
				t.Error("last good bytes missing from the new store")
			}
			multi, _ := snap.Skill("multi")
			if multi == nil || len(multi.Versions) != 2 || multi.Latest.Version != "2.0.0" {
				t.Errorf("multi = %+v, want both versions with 2.0.0 kept", multi)
			}
			if _, ok := snap.Agent("helper"); !ok {
				t.Error("agent lost its last good version")
			}
			for _, p := range []string{root + "/flat", root + "/multi/2.0.0", agents + "/helper.md"} {
				if !hasStale(snap, p) {
					t.Errorf("no stale problem for %s: %v", p, snap.Problems)
				}
			}
			if hasStale(snap, root+"/multi/1.0.0") {
				t.Error("valid version 1.0.0 reported stale")
			}
		})
	}

	// A fixed file replaces the last good version; removal removes.
	writeFile(t, filepath.Join(root, "flat", "SKILL.md"), skillMD("flat")+"more\n", 0o644)
	if err := os.RemoveAll(filepath.Join(root, "multi", "2.0.0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(agents, "helper.md")); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	flat, _ := snap.Skill("flat")
	if flat.Latest.SkillMD == flat1.Latest.SkillMD || hasStale(snap, root+"/flat") {
		t.Error("fixed file did not replace the last good version")
	}
	if multi, _ := snap.Skill("multi"); len(multi.Versions) != 1 {
		t.Error("removed version folder is still published")
	}
	if _, ok := snap.Agent("helper"); ok {
		t.Error("removed agent is still published")
	}
}

// TestUnreadableFileKeepsItems: a file that cannot be read (here a link
// whose target vanished mid-save) is a problem for that version, never a
// removal and never an empty collection.
func TestUnreadableFileKeepsItems(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	writeFile(t, filepath.Join(root, "a", "ref.md"), "ref", 0o644)
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{})
	if err := os.Remove(filepath.Join(root, "a", "ref.md")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "gone.md", filepath.Join(root, "a", "ref.md"))
	snap, err := c.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a, ok := snap.Skill("a")
	if !ok || len(snap.Skills) != 1 {
		t.Fatal("unreadable file removed the skill")
	}
	if _, ok := a.Latest.Resource("ref.md"); !ok || !hasStale(snap, root+"/a") {
		t.Error("last good version not kept and reported stale")
	}
}

func TestUpdateReusesUnchangedEntries(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(root, n, "SKILL.md"), skillMD(n), 0o644)
		writeFile(t, filepath.Join(root, n, "ref.md"), "ref "+n, 0o644)
	}
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{})
	first := c.Current()
	writeFile(t, filepath.Join(root, "b", "ref.md"), "changed", 0o644)
	writeFile(t, filepath.Join(root, "d", "SKILL.md"), skillMD("d"), 0o644)
	snap, err := c.Update(t.Context(), scan.Changes{Skills: map[string]bool{"b": true, "d": true}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Rescanned != 2 {
		t.Errorf("rescanned %d entries, want 2", snap.Rescanned)
	}
	for _, n := range []string{"a", "c"} {
		if snap.skillEntries[n] != first.skillEntries[n] {
			t.Errorf("%s was rebuilt, not reused", n)
		}
		sk, _ := snap.Skill(n)
		if _, ok := snap.Store.Get(sk.Latest.Archive); !ok {
			t.Errorf("%s: reused archive missing from the store", n)
		}
	}
	b1, _ := first.Skill("b")
	b2, _ := snap.Skill("b")
	if b1.Latest.Archive == b2.Latest.Archive {
		t.Error("changed skill b kept its old archive")
	}
	if _, ok := snap.Skill("d"); !ok {
		t.Error("new skill d missing")
	}
	// A full reload of an unchanged tree reads nothing that is not in doubt.
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	again, err := c.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again.FileCacheMisses != 0 || again.FileCacheHits != 7 {
		t.Errorf("full reload of an unchanged tree: %d read, %d cached; want 0 and 7", again.FileCacheMisses, again.FileCacheHits)
	}
}

func TestRetention(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	writeFile(t, filepath.Join(root, "a", "ref.md"), "one", 0o644)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: 10 * time.Minute, Now: clock.Now})
	v1, _ := c.Current().Skill("a")
	oldZip, oldRef := v1.Latest.Archive, v1.Latest.Resources[0].Digest
	zipKey := ArtifactKey{Name: "a", Version: v1.Latest.Version, File: "archive.zip"}
	oldZipBytes, _ := c.Current().Store.Get(oldZip)

	writeFile(t, filepath.Join(root, "a", "ref.md"), "two", 0o644)
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(9 * time.Minute)
	b, ok := c.Retained(zipKey, oldZip)
	if !ok || content.Sum(b) != oldZip {
		t.Fatal("old archive not retained within the window")
	}
	if _, ok := c.Retained(ArtifactKey{Name: "a", Version: v1.Latest.Version, File: "ref.md"}, oldRef); !ok {
		t.Error("old resource not retained")
	}
	if _, ok := c.Retained(ArtifactKey{Name: "a", Version: v1.Latest.Version, File: "other.md"}, oldZip); ok {
		t.Error("retained bytes answered under a path that never served them")
	}
	// The old version's SKILL.md is retained under its old URL too, but
	// the new version serves the same bytes: only the old archive and
	// ref.md cost retention anything.
	if st, want := c.Retention(), int64(len(oldZipBytes)+len("one")); st.Artifacts != 3 || st.Bytes != want {
		t.Errorf("stats %+v: want 3 artifacts (SKILL.md, archive, ref.md) and %d bytes", st, want)
	}
	if len(c.Retired()) != 1 {
		t.Errorf("%d retired snapshots, want 1", len(c.Retired()))
	}
	clock.Advance(2 * time.Minute)
	if _, ok := c.Retained(zipKey, oldZip); ok {
		t.Error("old archive still served after the window")
	}
	if _, err := c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := c.Retention(); st.Artifacts != 0 || st.Bytes != 0 {
		t.Errorf("expired retention not released: %+v", st)
	}
}

func TestRetentionByteBound(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	writeFile(t, filepath.Join(root, "a", "big.bin"), strings.Repeat("x", 4000), 0o644)
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{Retention: 10 * time.Minute, RetentionMaxBytes: 5000})
	for i := range 3 {
		writeFile(t, filepath.Join(root, "a", "big.bin"), strings.Repeat(string(rune('a'+i)), 4000), 0o644)
		if _, err := c.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	st := c.Retention()
	if st.Bytes > 5000 || st.Evicted == 0 {
		t.Errorf("stats %+v: want at most 5000 bytes and evictions", st)
	}
}

// TestRebuiltArchiveMatchesAFreshBuild: when one file of a version
// changes, its archive is rebuilt from the other files' deflated entries
// of the previous archive; the bytes must equal what a scan from scratch
// builds, including for a later version that shares files with an
// earlier one.
func TestRebuiltArchiveMatchesAFreshBuild(t *testing.T) {
	root := t.TempDir()
	body := strings.Repeat("Reusable reference text, deflated once. ", 200)
	writeFile(t, filepath.Join(root, "flat", "SKILL.md"), skillMD("flat"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "1.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	writeFile(t, filepath.Join(root, "multi", "2.0.0", "SKILL.md"), skillMD("multi"), 0o644)
	for _, f := range []string{"a.md", "b.md", "c/d.md", "run.sh"} {
		writeFile(t, filepath.Join(root, "flat", f), f+body, 0o644)
		writeFile(t, filepath.Join(root, "multi", "1.0.0", f), f+body, 0o755)
		writeFile(t, filepath.Join(root, "multi", "2.0.0", f), f+body, 0o755)
	}
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{})
	before, _ := c.Current().Skill("flat")

	writeFile(t, filepath.Join(root, "flat", "b.md"), "changed "+body, 0o644)
	writeFile(t, filepath.Join(root, "multi", "2.0.0", "c", "d.md"), "changed "+body, 0o755)
	snap, err := c.Update(t.Context(), scan.Changes{Skills: map[string]bool{"flat": true, "multi": true}})
	if err != nil {
		t.Fatal(err)
	}
	fresh := scanTree(t, Source{SkillsDir: root})
	for _, name := range []string{"flat", "multi"} {
		got, _ := snap.Skill(name)
		want, _ := fresh.Skill(name)
		for _, wv := range want.Versions {
			gv, ok := got.Version(wv.Version)
			if !ok {
				t.Fatalf("%s %s missing after the update", name, wv.Version)
			}
			if gv.Archive != wv.Archive {
				t.Errorf("%s %s: archive %s after the update, %s from scratch", name, wv.Version, gv.Archive, wv.Archive)
			}
			b, _ := snap.Store.Get(gv.Archive)
			if content.Sum(b) != gv.Archive {
				t.Errorf("%s %s: stored archive does not match its digest", name, wv.Version)
			}
		}
	}
	if after, _ := snap.Skill("flat"); after.Latest.Archive == before.Latest.Archive {
		t.Error("the changed version kept its old archive")
	}
}

var staleGeneration = regexp.MustCompile(`generation [0-9]+`)

// TestPartialUpdatesMatchFullReloads: a partial reload patches what it
// derives from the entries (problem list, version and error counts,
// sub-agent route warnings, sorted lists) instead of recomputing it. Two
// catalogs follow the same rounds of changes, one through Update with the
// changed names and one through full Reloads; after every round both
// must publish the same thing.
func TestPartialUpdatesMatchFullReloads(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	src := Source{SkillsDir: skills, AgentsDir: agents}
	routed := func(name, agent string) string {
		return "---\nname: " + name + "\ndescription: routes to " + agent + "\nmetadata:\n  subagent: " + agent + "\n---\n"
	}
	writeFile(t, filepath.Join(agents, "helper.md"), agentMD("helper"), 0o644)
	writeFile(t, filepath.Join(skills, "router", "SKILL.md"), routed("router", "helper"), 0o644)
	for _, n := range []string{"alpha", "beta", "gamma"} {
		writeFile(t, filepath.Join(skills, n, "SKILL.md"), skillMD(n), 0o644)
	}
	writeFile(t, filepath.Join(skills, "Bad Name", "SKILL.md"), skillMD("x"), 0o644)

	// The catalogue of updates keeps its blobs in a state directory, the
	// other in memory: both must publish the same bytes.
	upd := newTestCatalog(t, src, Options{Blobs: testDir(t)})
	full := newTestCatalog(t, src, Options{})
	fingerprints := []string{upd.Current().Fingerprint()}
	rounds := []struct {
		name    string
		change  func()
		changes scan.Changes
		same    bool // what is published stays the same
	}{
		{"add a skill", func() { writeFile(t, filepath.Join(skills, "delta", "SKILL.md"), skillMD("delta"), 0o644) },
			scan.Changes{Skills: map[string]bool{"delta": true}}, false},
		{"break a skill (last good stays)", func() { writeFile(t, filepath.Join(skills, "beta", "SKILL.md"), "---\nname: [\n", 0o644) },
			scan.Changes{Skills: map[string]bool{"beta": true}}, true},
		{"remove the agent a skill routes to", func() { os.Remove(filepath.Join(agents, "helper.md")) },
			scan.Changes{Agents: map[string]bool{"helper": true}}, false},
		{"add a version", func() {
			os.Rename(filepath.Join(skills, "gamma", "SKILL.md"), filepath.Join(skills, "gamma.md"))
			writeFile(t, filepath.Join(skills, "gamma", "1.0.0", "SKILL.md"), skillMD("gamma"), 0o644)
			writeFile(t, filepath.Join(skills, "gamma", "2.0.0", "SKILL.md"), skillMD("gamma"), 0o644)
		}, scan.Changes{Skills: map[string]bool{"gamma": true, "gamma.md": true}}, false},
		{"bring the agent back", func() { writeFile(t, filepath.Join(agents, "helper.md"), agentMD("helper"), 0o644) },
			scan.Changes{Agents: map[string]bool{"helper": true}}, false},
		{"fix one skill, remove another", func() {
			writeFile(t, filepath.Join(skills, "beta", "SKILL.md"), skillMD("beta"), 0o644)
			os.RemoveAll(filepath.Join(skills, "alpha"))
			os.RemoveAll(filepath.Join(skills, "Bad Name"))
		}, scan.Changes{Skills: map[string]bool{"beta": true, "alpha": true, "Bad Name": true}}, false},
	}
	for _, r := range rounds {
		r.change()
		a, err := upd.Update(t.Context(), r.changes)
		if err != nil {
			t.Fatal(err)
		}
		b, err := full.Reload(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !a.partial {
			t.Fatalf("%s: the update was not partial", r.name)
		}
		got, want := publishedState(a), publishedState(b)
		if got != want {
			t.Errorf("%s: after Update\n%s\nafter a full Reload\n%s", r.name, got, want)
		}
		for _, d := range b.Store.Digests() {
			if data, ok := a.Store.Get(d); !ok || content.Sum(data) != d {
				t.Errorf("%s: blob %s is not served from the state directory (%v)", r.name, d, ok)
			}
		}
		if changed := a.Fingerprint() != fingerprints[len(fingerprints)-1]; changed == r.same {
			t.Errorf("%s: fingerprint changed %v, want %v", r.name, changed, !r.same)
		}
		fingerprints = append(fingerprints, a.Fingerprint())
	}
	// A replica that starts now, with no history, publishes the same.
	if fresh, now := scanTree(t, src).Fingerprint(), upd.Current().Fingerprint(); fresh != now {
		t.Errorf("fingerprint after the updates %s, of a fresh scan %s", now, fresh)
	}
}

// publishedState renders what a snapshot publishes about its entries. A
// stale warning names the generation that last scanned the version, which
// is older after partial reloads that did not rescan it; that is left out.
func publishedState(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "skill versions %d, agent versions %d, errors %d, fingerprint %s\n", s.VersionCount(), s.AgentVersionCount(), s.ErrorCount(), s.Fingerprint())
	for _, sk := range s.Skills {
		got, ok := s.Skill(sk.Name)
		fmt.Fprintf(&b, "skill %s (found %v, same %v):", sk.Name, ok, got == sk)
		for _, v := range sk.Versions {
			fmt.Fprintf(&b, " %s=%s", v.Version, v.SkillMD)
		}
		b.WriteString("\n")
	}
	for _, a := range s.Agents {
		got, ok := s.Agent(a.Name)
		fmt.Fprintf(&b, "agent %s (found %v, same %v): %d versions\n", a.Name, ok, got == a, len(a.Versions))
	}
	for _, p := range s.Problems {
		fmt.Fprintf(&b, "problem %s %s %s: %s\n", p.Path, p.Rule, p.Severity, staleGeneration.ReplaceAllString(p.Message, "generation N"))
	}
	return b.String()
}

// TestUpdateRescansLinkedEntries: the file watch names the entry that
// holds a changed file on disk. A skill or agent that reaches that file
// through a symlink must be rescanned too, or it would keep publishing
// the old bytes until the next full rescan.
func TestUpdateRescansLinkedEntries(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(skills, "shared", "SKILL.md"), skillMD("shared"), 0o644)
	writeFile(t, filepath.Join(skills, "shared", "common.md"), "common v1\n", 0o644)
	writeFile(t, filepath.Join(skills, "user", "SKILL.md"), skillMD("user"), 0o644)
	symlink(t, "../shared/common.md", filepath.Join(skills, "user", "common.md"))
	writeFile(t, filepath.Join(skills, "plain", "SKILL.md"), skillMD("plain"), 0o644)
	writeFile(t, filepath.Join(agents, "store", "reviewer.md"), agentMD("reviewer"), 0o644)
	symlink(t, "store/reviewer.md", filepath.Join(agents, "reviewer.md"))
	c := newTestCatalog(t, Source{SkillsDir: skills, AgentsDir: agents}, Options{})
	before := c.Current()

	writeFile(t, filepath.Join(skills, "shared", "common.md"), "common v2\n", 0o644)
	writeFile(t, filepath.Join(agents, "store", "reviewer.md"), strings.Replace(agentMD("reviewer"), "You review.", "You review twice.", 1), 0o644)
	// What the watch sends: the entries that hold the changed files.
	snap, err := c.Update(t.Context(), scan.Changes{Skills: map[string]bool{"shared": true}, Agents: map[string]bool{"store": true}})
	if err != nil {
		t.Fatal(err)
	}
	user, _ := snap.Skill("user")
	r, ok := user.Latest.Resource("common.md")
	if !ok {
		t.Fatalf("user lost common.md; problems %v", snap.Problems)
	}
	if b, _ := snap.Store.Get(r.Digest); string(b) != "common v2\n" {
		t.Errorf("user serves %q through its link, want the changed bytes", b)
	}
	ra, _ := snap.Agent("reviewer")
	if b, _ := snap.Store.Get(ra.Latest.Digest); !strings.Contains(string(b), "twice") {
		t.Errorf("linked agent serves %q, want the changed file", b)
	}
	if snap.skillEntries["plain"] != before.skillEntries["plain"] {
		t.Error("an entry without links was rescanned")
	}
	if got := snap.Rescanned; got != 4 {
		t.Errorf("rescanned %d entries, want 4 (shared, user, store, reviewer)", got)
	}
}

// TestUpdateWithNothingToRescanPublishesNothing: an update that names no
// entry, in a catalogue without links, keeps the current snapshot: no new
// generation for an event that cannot change what is published.
func TestUpdateWithNothingToRescanPublishesNothing(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{})
	before := c.Current()
	snap, err := c.Update(t.Context(), scan.Changes{Skills: map[string]bool{}, Agents: map[string]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	if snap != before || c.Current() != before {
		t.Errorf("generation %d published for an update naming nothing (was %d)", c.Current().Generation, before.Generation)
	}
}

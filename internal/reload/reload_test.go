package reload

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/scan"
)

// recorder is a Target that records reloads; each blocks until released.
type recorder struct {
	mu      sync.Mutex
	calls   []*scan.Changes // nil entry: full reload
	started chan struct{}
	release chan struct{}
}

func newRecorder() *recorder {
	return &recorder{started: make(chan struct{}, 100), release: make(chan struct{}, 100)}
}

func (r *recorder) record(c *scan.Changes) (*catalog.Snapshot, error) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	n := len(r.calls)
	r.mu.Unlock()
	r.started <- struct{}{}
	<-r.release
	return &catalog.Snapshot{Generation: uint64(n)}, nil
}

func (r *recorder) Reload(context.Context) (*catalog.Snapshot, error) { return r.record(nil) }

// verifyCall is what recorder records for a Verify.
var verifyCall = &scan.Changes{}

func (r *recorder) Verify(context.Context) (*catalog.Snapshot, error) { return r.record(verifyCall) }
func (r *recorder) Update(_ context.Context, c scan.Changes) (*catalog.Snapshot, error) {
	return r.record(&c)
}

// watch starts a Watcher on roots feeding a Reloader whose reloads rec
// records; both stop when the test ends.
func watch(t *testing.T, roots Roots) *recorder {
	t.Helper()
	rec, _ := watcher(t, roots)
	return rec
}

// watcher is watch, returning the Watcher too.
func watcher(t *testing.T, roots Roots) (*recorder, *Watcher) {
	t.Helper()
	rec := newRecorder()
	r := New(rec, slog.New(slog.DiscardHandler), Options{})
	w, err := NewWatcher(roots, WatchTiming{Debounce: 20 * time.Millisecond, MaxWait: time.Second}, r, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go w.Run(ctx)
	go r.Run(ctx)
	return rec, w
}

// next waits for the next reload, lets it finish and returns what it
// was asked to rescan (nil: everything).
func (r *recorder) next(t *testing.T) *scan.Changes {
	t.Helper()
	select {
	case <-r.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload")
	}
	r.mu.Lock()
	c := r.calls[len(r.calls)-1]
	r.mu.Unlock()
	r.release <- struct{}{}
	return c
}

func (r *recorder) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.calls) }

func TestRequestsDuringAReloadCoalesceIntoOne(t *testing.T) {
	rec := newRecorder()
	r := New(rec, slog.New(slog.DiscardHandler), Options{})
	ctx := running(t, r)

	first := r.Request(nil)
	<-rec.started // reload 1 is running
	var tickets []Ticket
	for _, name := range []string{"a", "b", "c"} {
		tickets = append(tickets, r.Request(&scan.Changes{Skills: map[string]bool{name: true}}))
	}
	rec.release <- struct{}{} // finish reload 1
	snap, err := r.Wait(ctx, first)
	if err != nil || snap.Generation != 1 {
		t.Fatalf("first wait: %v %v", snap, err)
	}
	<-rec.started // reload 2: all three requests at once
	rec.release <- struct{}{}
	for _, tk := range tickets {
		snap, err := r.Wait(ctx, tk)
		if err != nil || snap.Generation != 2 {
			t.Fatalf("ticket %d: generation %v, want 2", tk, snap)
		}
	}
	if n := rec.count(); n != 2 {
		t.Fatalf("%d reloads, want 2", n)
	}
	rec.mu.Lock()
	second := rec.calls[1]
	rec.mu.Unlock()
	if second == nil || len(second.Skills) != 3 {
		t.Errorf("second reload carried %+v, want the three changes merged", second)
	}
}

func TestVerifyCoversChangesAndGivesWayToAFullRescan(t *testing.T) {
	rec := newRecorder()
	r := New(rec, slog.New(slog.DiscardHandler), Options{})
	ctx := running(t, r)

	r.Request(nil)
	<-rec.started // reload 1 is running
	verify := r.Verify()
	changed := r.Request(&scan.Changes{Skills: map[string]bool{"a": true}})
	rec.release <- struct{}{}
	<-rec.started // reload 2: the verify and the change at once
	asked, ask := context.WithCancel(ctx)
	ask() // Wait answers at once: the result if the ticket is done, else the context's error
	if _, err := r.Wait(asked, verify); err == nil {
		t.Fatal("the verify's ticket was done before its reload finished")
	}
	full := r.Request(nil)
	again := r.Verify()
	rec.release <- struct{}{}
	for _, tk := range []Ticket{verify, changed} {
		if snap, err := r.Wait(ctx, tk); err != nil || snap.Generation != 2 {
			t.Fatalf("ticket %d: %v %v, want reload 2", tk, snap, err)
		}
	}
	<-rec.started // reload 3: a full rescan and a verify at once
	rec.release <- struct{}{}
	for _, tk := range []Ticket{full, again} {
		if snap, err := r.Wait(ctx, tk); err != nil || snap.Generation != 3 {
			t.Fatalf("ticket %d: %v %v, want reload 3", tk, snap, err)
		}
	}
	rec.mu.Lock()
	calls := slices.Clone(rec.calls)
	rec.mu.Unlock()
	if len(calls) != 3 || calls[0] != nil || calls[1] != verifyCall || calls[2] != nil {
		t.Errorf("reloads %v, want a full one, a verify (covering the change), a full one (covering the verify)", calls)
	}
}

func TestWaitNeedsAReloadThatStartedAfterTheRequest(t *testing.T) {
	rec := newRecorder()
	r := New(rec, slog.New(slog.DiscardHandler), Options{})
	ctx := running(t, r)
	r.Request(nil)
	<-rec.started
	late := r.Request(nil) // arrives while reload 1 runs
	rec.release <- struct{}{}
	done := make(chan *catalog.Snapshot)
	go func() { s, _ := r.Wait(ctx, late); done <- s }()
	<-rec.started
	select {
	case <-done:
		t.Fatal("Wait returned with the reload that was already running")
	default:
	}
	rec.release <- struct{}{}
	if s := <-done; s.Generation != 2 {
		t.Errorf("generation %d, want 2", s.Generation)
	}
}

// TestWatcherNamesChangedEntries uses the real file system and inotify.
func TestWatcherNamesChangedEntries(t *testing.T) {
	skills, agents := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(skills, "old", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := watch(t, Roots{Skills: skills, Agents: agents})

	expect := func(t *testing.T, skill, agent string) {
		t.Helper()
		c := rec.next(t)
		if c == nil || (skill != "" && !c.Skills[skill]) || (agent != "" && !c.Agents[agent]) {
			t.Errorf("changes %+v, want skill %q agent %q", c, skill, agent)
		}
	}
	// A file deep inside an existing skill.
	if err := os.WriteFile(filepath.Join(skills, "old", "refs", "x.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, "old", "")
	// A folder created after the watch started, then a file inside it.
	if err := os.MkdirAll(filepath.Join(skills, "new", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	expect(t, "new", "")
	if err := os.WriteFile(filepath.Join(skills, "new", "deep", "y.md"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, "new", "")
	// An agent file maps to the agent's name.
	if err := os.WriteFile(filepath.Join(agents, "helper.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, "", "helper")
}

// TestWatcherFollowsASwappedRootLink: git-sync publishes by pointing a
// symlink at a new worktree and deleting the old one. The watch must move
// to the new target.
func TestWatcherFollowsASwappedRootLink(t *testing.T) {
	a, b, link, staging := swappableRoot(t)
	rec := watch(t, Roots{Skills: link})
	next := func() *scan.Changes { t.Helper(); return rec.next(t) }
	// Swap the link atomically; the flip alone must be noticed.
	flipLink(t, staging, b, link)
	if c := next(); c != nil {
		t.Fatalf("flipping the root's link asked for %+v, want a full rescan", c)
	}
	// git-sync deletes the old worktree later; that is a full rescan too.
	if err := os.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	if c := next(); c != nil {
		t.Fatalf("removing the old root asked for %+v, want a full rescan", c)
	}
	// Now a change in the new worktree must be seen.
	if err := os.WriteFile(filepath.Join(b, "two", "SKILL.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		c := next()
		if c != nil && c.Skills["two"] {
			return
		}
	}
}

// swappableRoot lays out git-sync's publishing: worktrees a (skill one)
// and b (skill two), link pointing at a, and a staging folder for
// flipLink.
func swappableRoot(t *testing.T) (a, b, link, staging string) {
	t.Helper()
	base := t.TempDir()
	a, b = filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{filepath.Join(a, "one"), filepath.Join(b, "two")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link = filepath.Join(base, "current")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	return a, b, link, stagingDir(t, base)
}

// stagingDir makes the folder in dir where flipLink prepares a link,
// before the watch starts: created later, it would be an event of the
// watched dir.
func stagingDir(t *testing.T, dir string) string {
	t.Helper()
	staging := filepath.Join(dir, "staging")
	if err := os.Mkdir(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	return staging
}

// flipLink points link at target atomically, as git-sync does: a new
// link made aside, renamed over the old one. Made in staging, a folder
// nobody watches, the new link is no event of link's folder: the rename
// is the only one, so the reload that follows is the flip's, however
// slowly the events come (made beside link, it was a reload of its own
// when the machine was slow enough to let the debounce fire in between).
func flipLink(t *testing.T, staging, target, link string) {
	t.Helper()
	tmp := filepath.Join(staging, "tmp-link")
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

// TestWatcherSkipsVersionControlMetadata: .git changes on every commit
// and is never published, so it is not watched; other hidden folders are
// (a skill may link into one), and their events name no entry.
func TestWatcherSkipsVersionControlMetadata(t *testing.T) {
	skills := t.TempDir()
	for _, d := range []string{".git", ".team", "real"} {
		if err := os.MkdirAll(filepath.Join(skills, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec, w := watcher(t, Roots{Skills: skills})
	for _, p := range w.fsw.WatchList() {
		if strings.Contains(p, string(filepath.Separator)+".git") {
			t.Errorf("%s is watched", p)
		}
	}
	if err := os.WriteFile(filepath.Join(skills, ".git", "index"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skills, "real", "SKILL.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := rec.next(t); c == nil || len(c.Skills) != 1 || !c.Skills["real"] {
		t.Errorf("first reload after a .git write and a skill write: %+v, want only skill real", c)
	}
	if err := os.WriteFile(filepath.Join(skills, ".team", "style.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := rec.next(t); c == nil || len(c.Skills) != 0 || len(c.Agents) != 0 {
		t.Errorf("reload for a write in a hidden folder: %+v, want an update naming no entry", c)
	}
}

// TestWatcherResumesOnARecreatedRoot: `rm -rf skills && cp -r new skills`
// deletes every watched folder. The folder holding the root is watched,
// so the new root is watched as soon as it appears. When that folder goes
// too, nothing is left to watch; SIGHUP (Rewatch) resolves the roots again.
func TestWatcherResumesOnARecreatedRoot(t *testing.T) {
	for _, tt := range []struct {
		name    string
		remove  string // relative to the temporary folder; the root is holder/skills
		rewatch bool
	}{
		{"root", "holder/skills", false},
		{"folder holding the root, then Rewatch", "holder", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			skills := filepath.Join(base, "holder", "skills")
			if err := os.MkdirAll(filepath.Join(skills, "old"), 0o755); err != nil {
				t.Fatal(err)
			}
			rec, w := watcher(t, Roots{Skills: skills})
			if err := os.RemoveAll(filepath.Join(base, tt.remove)); err != nil {
				t.Fatal(err)
			}
			// The events of the root's contents come first: under load a
			// debounce may pass between them and the root's own, so an
			// update for "old" may come before the full rescan.
			nextFull(t, rec)
			if err := os.MkdirAll(filepath.Join(skills, "fresh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.rewatch {
				w.Rewatch(t.Context())
			}
			expectWatched(t, rec, filepath.Join(skills, "fresh"))
		})
	}
}

// TestWatcherSetUpWithoutItsRoot: a watch set up after the first scan may
// find its root gone (replaced by rm -rf and a copy); the folder that held
// it is watched, so the root's return asks for a full rescan and is
// watched.
func TestWatcherSetUpWithoutItsRoot(t *testing.T) {
	skills := filepath.Join(t.TempDir(), "skills")
	rec, _ := watcher(t, Roots{Skills: skills})
	if err := os.MkdirAll(filepath.Join(skills, "fresh"), 0o755); err != nil {
		t.Fatal(err)
	}
	nextFull(t, rec)
	expectWatched(t, rec, filepath.Join(skills, "fresh"))
}

// TestWatcherRewatchesARecreatedHolder: once SIGHUP (Rewatch) resumed the
// watch after the folder holding the root was deleted and created again,
// that new folder is watched, so the root deleted and created again later
// is followed without another SIGHUP.
func TestWatcherRewatchesARecreatedHolder(t *testing.T) {
	base := t.TempDir()
	holder := filepath.Join(base, "holder")
	skills := filepath.Join(holder, "skills")
	if err := os.MkdirAll(filepath.Join(skills, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, w := watcher(t, Roots{Skills: skills})
	if err := os.RemoveAll(holder); err != nil {
		t.Fatal(err)
	}
	nextFull(t, rec)
	if err := os.MkdirAll(filepath.Join(skills, "fresh"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.Rewatch(t.Context())
	expectWatched(t, rec, filepath.Join(skills, "fresh"))

	if err := os.RemoveAll(skills); err != nil {
		t.Fatal(err)
	}
	nextFull(t, rec) // the root is gone when its watch is resolved again
	if err := os.MkdirAll(filepath.Join(skills, "again"), 0o755); err != nil {
		t.Fatal(err)
	}
	expectWatched(t, rec, filepath.Join(skills, "again"))
}

// TestRewatchAddsTheTreeAgain: a root deleted and created again often
// gets the old one's inode, so no stat tells the new folder from the old
// one, whose watch went with it; Rewatch (SIGHUP) must watch the tree
// anyway. Here the watch is removed by hand and the folder stays the same.
func TestRewatchAddsTheTreeAgain(t *testing.T) {
	skills := t.TempDir()
	rec, w := watcher(t, Roots{Skills: skills})
	if err := w.fsw.Remove(skills); err != nil {
		t.Fatal(err)
	}
	w.Rewatch(t.Context())
	if err := os.Mkdir(filepath.Join(skills, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	expectWatched(t, rec, filepath.Join(skills, "new"))
}

// nextFull lets reloads finish until a full rescan has started.
func nextFull(t *testing.T, rec *recorder) {
	t.Helper()
	for rec.next(t) != nil {
	}
}

// expectWatched writes files into dir until a reload names dir's entry.
// A write before the watch of dir is set misses; the full rescan asked
// for when the watch was set comes next, so the next write is seen. When
// dir is not watched at all, no reload comes and rec.next fails.
func expectWatched(t *testing.T, rec *recorder, dir string) {
	t.Helper()
	for i := 0; ; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.md", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if c := rec.next(t); c != nil && c.Skills[filepath.Base(dir)] {
			return
		}
	}
}

// TestWatcherDropsTheParentOfAReplacedCheckout: with git-sync's layout
// (current -> a checkout holding skills/), the folder holding the root is
// the checkout; after a flip the old checkout's folder is watched no more,
// so flips do not pile up watches.
func TestWatcherDropsTheParentOfAReplacedCheckout(t *testing.T) {
	base := t.TempDir()
	one, two := filepath.Join(base, "one"), filepath.Join(base, "two")
	for _, d := range []string{filepath.Join(one, "skills", "x"), filepath.Join(two, "skills", "y")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "current")
	if err := os.Symlink(one, link); err != nil {
		t.Fatal(err)
	}
	staging := stagingDir(t, base)
	rec, w := watcher(t, Roots{Skills: filepath.Join(link, "skills")})
	if !slices.Contains(w.fsw.WatchList(), one) {
		t.Fatalf("%s, holding the root, is not watched: %v", one, w.fsw.WatchList())
	}
	flipLink(t, staging, two, link)
	if c := rec.next(t); c != nil {
		t.Fatalf("flipping the link asked for %+v, want a full rescan", c)
	}
	watched := w.fsw.WatchList()
	if slices.Contains(watched, one) || !slices.Contains(watched, two) {
		t.Errorf("after the flip, watched %v: want %s and not %s", watched, two, one)
	}
}

// TestWatcherIgnoresTheTreeALinkLeft: after a flip, the tree the root's
// link pointed at is still watched until it is deleted; its events change
// nothing that is served, so they ask for no reload. They were an update
// naming no entry, which slipped in before the flip's full rescan when
// git-sync's deletion of the old tree came slowly.
func TestWatcherIgnoresTheTreeALinkLeft(t *testing.T) {
	a, b, link, staging := swappableRoot(t)
	w, err := NewWatcher(Roots{Skills: link}, WatchTiming{Debounce: time.Millisecond}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	old := filepath.Join(a, "one", "SKILL.md")
	c := emptyChanges()
	if got := w.note(fsnotify.Event{Name: old, Op: fsnotify.Write}, &c); got != eventNoted || !c.Skills["one"] {
		t.Fatalf("a write in the root: %v, want noted", got)
	}
	flipLink(t, staging, b, link)
	w.rewatchRoots(true)
	c = emptyChanges()
	if got := w.note(fsnotify.Event{Name: old, Op: fsnotify.Remove}, &c); got != eventIgnored || len(c.Skills) != 0 {
		t.Errorf("a removal in the tree the link left: %v %+v, want ignored", got, c)
	}
	if got := w.note(fsnotify.Event{Name: filepath.Join(b, "two", "SKILL.md"), Op: fsnotify.Write}, &c); got != eventNoted || !c.Skills["two"] {
		t.Errorf("a write in the new root: %v %+v, want skill two noted", got, c)
	}
}

// TestRewatchLeavesALiveWatch: a full rescan trigger (SIGHUP,
// rescan_interval) adds a root's tree again only where the watch lost the
// root; a root whose watch is alive is not walked again (at 10,000 skills
// that walk took as long as the rescan). Here a subfolder's watch is
// removed by hand: Rewatch leaves it so while the root's watch lives, and
// adds it back once the root's is gone too.
func TestRewatchLeavesALiveWatch(t *testing.T) {
	skills := t.TempDir()
	sub := filepath.Join(skills, "one")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, w := watcher(t, Roots{Skills: skills})
	if err := w.fsw.Remove(sub); err != nil {
		t.Fatal(err)
	}
	w.Rewatch(t.Context())
	if slices.Contains(w.fsw.WatchList(), sub) {
		t.Fatalf("Rewatch walked a root whose watch is alive: %s is watched again", sub)
	}
	if err := w.fsw.Remove(skills); err != nil {
		t.Fatal(err)
	}
	w.Rewatch(t.Context())
	if got := w.fsw.WatchList(); !slices.Contains(got, skills) || !slices.Contains(got, sub) {
		t.Errorf("after the root's watch went, Rewatch watches %v, want %s and %s", got, skills, sub)
	}
}

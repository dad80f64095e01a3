package reload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
)

// Roots are the directories to watch; "" means not configured.
type Roots struct {
	Skills string
	Agents string
}

// Watcher turns file-system events under the roots into reload requests
// naming the top-level entries that changed, debounced. It watches every
// folder recursively, including folders created later, except version
// control metadata (.git and the like), which is never published and
// changes on every commit. Other hidden folders are watched although
// they are never published either: a skill may link to a file in one
// (.shared/), and an event there asks for an update that names no entry,
// which rescans the entries that hold links (catalog.Catalog.Update).
//
// It also watches the folder holding each root, so a root deleted and
// created again (rm -rf skills && cp -r new skills) is watched again.
type Watcher struct {
	roots    Roots
	abs      Roots
	timing   WatchTiming
	reloader *Reloader
	log      *slog.Logger
	fsw      *fsnotify.Watcher
	// linkDirs hold a symlink on the way to a root (git-sync's "current");
	// they are watched, not recursively, so a flip of the link is seen.
	linkDirs map[string]bool
	// parents hold a root (as resolved); they are watched, not
	// recursively, for events naming the root itself. Other events there
	// are not ours.
	parents map[string]bool
	lost    bool               // a root could not be watched at the last try
	rewatch chan chan struct{} // Rewatch asks the loop to resolve the roots again
	stopped chan struct{}      // closed when the loop has returned
}

// WatchTiming is how a Watcher debounces events.
type WatchTiming struct {
	// Debounce is the quiet time after the last event before a reload
	// is requested.
	Debounce time.Duration
	// MaxWait bounds how long an event waits for its reload while events
	// keep coming; below Debounce it counts as Debounce.
	MaxWait time.Duration
}

// NewWatcher starts watching roots. Close it, or cancel the context given
// to Run. A root that does not exist (deleted since the scan that read it)
// is watched for its return, as one lost later is; any other failure (the
// kernel's watch limit, a folder that cannot be read) is an error.
func NewWatcher(roots Roots, timing WatchTiming, r *Reloader, log *slog.Logger) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watch: %w", err)
	}
	w := newWatcher(roots, timing, r, log)
	w.fsw = fsw
	if err := w.resolve(true); err != nil {
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOSPC) {
			fsw.Close()
			return nil, err
		}
		w.lost = true
		log.Warn(lostRootMessage, "error", err)
	}
	return w, nil
}

func newWatcher(roots Roots, timing WatchTiming, r *Reloader, log *slog.Logger) *Watcher {
	timing.MaxWait = max(timing.MaxWait, timing.Debounce)
	for _, p := range []*string{&roots.Skills, &roots.Agents} {
		if abs, err := filepath.Abs(*p); *p != "" && err == nil {
			*p = abs
		}
	}
	return &Watcher{roots: roots, timing: timing, reloader: r, log: log, linkDirs: map[string]bool{},
		parents: map[string]bool{}, rewatch: make(chan chan struct{}), stopped: make(chan struct{})}
}

// Rewatch resolves the roots again, as a full rescan trigger (SIGHUP)
// should: a root that was gone and is back is watched again. It returns
// once that is done, the watch has stopped, or ctx is done.
func (w *Watcher) Rewatch(ctx context.Context) {
	done := make(chan struct{})
	select {
	case w.rewatch <- done:
	case <-w.stopped:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// resolve (re)computes the real paths of the roots and watches them. A
// root reached through a symlink (git-sync swaps one on every sync) is
// watched at its target; when that target goes away, resolve runs again
// and follows the link to the new one. A root deleted and created again at
// the same path is watched anew: after an event that may mean so (walk
// set) its tree is added again, as nothing tells a folder from the one it
// replaced (the new one often gets the old one's inode, and the events of
// the old one's removal may not have arrived yet), and adding a folder
// watched already changes nothing. Otherwise (a full rescan trigger:
// SIGHUP, rescan_interval) a root's tree is added only where the watch
// lost it: after a failure, when the root resolves to another folder, or
// when the root's own watch is gone. A root deleted while watched takes
// its watch off the list and raises its own event, whose full rescan adds
// the tree; re-adding every folder of a large tree on every trigger would
// double a full rescan's time for nothing. A root that cannot be watched
// does not keep the other from being resolved. The folders holding the
// roots are watched before the roots' trees are walked too, so a root
// replaced during the walk (whose watches then sit on the folders it
// replaced) is an event, not a miss.
func (w *Watcher) resolve(walk bool) error {
	w.watchParents()
	defer w.watchParents()
	var errs []error
	for _, p := range []struct {
		in  string
		out *string
	}{{w.roots.Skills, &w.abs.Skills}, {w.roots.Agents, &w.abs.Agents}} {
		if p.in == "" {
			continue
		}
		if err := w.watchLinkDirs(p.in); err != nil {
			errs = append(errs, err)
			continue
		}
		real, err := filepath.EvalSymlinks(p.in)
		if err != nil {
			errs = append(errs, fmt.Errorf("watch %s: %w", p.in, err))
			continue
		}
		abs, err := filepath.Abs(real)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if walk || w.lost || abs != *p.out || !w.watching(abs) {
			if err := w.addTree(abs); err != nil {
				errs = append(errs, err)
			}
		}
		*p.out = abs
	}
	return errors.Join(errs...)
}

// watchParents watches the folders holding the roots, so deleting and
// creating a root are events, and stops watching those that no longer hold
// one (a checkout git-sync replaced). Without it (an unreadable parent) the
// watch of a re-created root resumes only with Rewatch.
func (w *Watcher) watchParents() {
	want := map[string]bool{}
	// A root never resolved (gone when the watch was set up) has its
	// folder as configured watched, so its return is seen.
	for _, root := range []string{cmp.Or(w.abs.Skills, w.roots.Skills), cmp.Or(w.abs.Agents, w.roots.Agents)} {
		if dir := filepath.Dir(root); root != "" && dir != root {
			want[dir] = true
		}
	}
	for dir := range w.parents {
		if !want[dir] {
			delete(w.parents, dir)
			if !w.linkDirs[dir] && !w.underRoot(dir) {
				_ = w.fsw.Remove(dir) // gone already when the checkout was deleted
			}
		}
	}
	for dir := range want {
		// Added again even when watched: a folder deleted and created
		// again (SIGHUP after rm -rf of the folder holding the root) is
		// another folder, whose watch went with the old one. Adding a
		// folder watched already changes nothing.
		if err := w.fsw.Add(dir); err != nil {
			delete(w.parents, dir)
			w.log.Warn("cannot watch the folder holding a root; if the root is deleted and created again, SIGHUP resumes its watch", "path", dir, "error", err)
			continue
		}
		w.parents[dir] = true
	}
}

// lostRootMessage is the log line of a root that cannot be watched, at
// the set-up or later.
const lostRootMessage = "cannot watch a root; its watch resumes when it is back (created again, SIGHUP or rescan_interval); meanwhile reloads need SIGHUP, rescan_interval or POST /-/reload"

// watching reports whether the folder p has a watch. The kernel ends the
// watch of a folder deleted or moved away, and fsnotify takes it off its
// list when it reads that event.
func (w *Watcher) watching(p string) bool { return slices.Contains(w.fsw.WatchList(), p) }

// rewatchRoots resolves the roots again, saying when a lost one is back;
// walk adds their trees again whatever (resolve).
func (w *Watcher) rewatchRoots(walk bool) {
	if err := w.resolve(walk); err != nil {
		if !w.lost {
			w.log.Warn(lostRootMessage, "error", err)
		}
		w.lost = true
		return
	}
	if w.lost {
		w.log.Info("file watch resumed", "skills", w.abs.Skills, "agents", w.abs.Agents)
	}
	w.lost = false
}

// watchLinkDirs watches the folder holding each symlink on the path to a
// root, so replacing the link (git-sync's flip) is an event.
func (w *Watcher) watchLinkDirs(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	prefix := string(filepath.Separator)
	for _, part := range strings.Split(strings.TrimPrefix(abs, prefix), string(filepath.Separator)) {
		next := filepath.Join(prefix, part)
		info, err := os.Lstat(next)
		if err != nil {
			return nil // the rest does not exist yet; EvalSymlinks reports it
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			// Added again even when watched, as watchParents does: the
			// folder may have been created again.
			if err := w.fsw.Add(prefix); err != nil {
				return fmt.Errorf("watch %s: %w", prefix, err)
			}
			w.linkDirs[prefix] = true
		}
		prefix = next
	}
	return nil
}

// vcsDirs are version control metadata folders, never watched.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, ".jj": true}

// addTree watches dir and every folder below it but version control
// metadata. The folders below dir's own are walked on every core: each is
// a listing and a watch to add, and the first scan waits for all of them.
func (w *Watcher) addTree(dir string) error {
	if err := w.add(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var subdirs []string
	for _, e := range entries {
		if e.IsDir() && !vcsDirs[e.Name()] {
			subdirs = append(subdirs, filepath.Join(dir, e.Name()))
		}
	}
	// The first failure (the watch limit, typically) ends the walk.
	var mu sync.Mutex
	var first error
	next := make(chan string)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(subdirs)) {
		wg.Go(func() {
			for sub := range next {
				if err := w.walk(sub); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, sub := range subdirs {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- sub
	}
	close(next)
	wg.Wait()
	return first
}

// walk watches dir and every folder below it but version control
// metadata; what vanishes or cannot be read below dir is left to the
// scan to report.
func (w *Watcher) walk(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case !d.IsDir():
			return nil
		case p != dir && vcsDirs[d.Name()]:
			return filepath.SkipDir
		}
		return w.add(p)
	})
}

// add watches the folder p.
func (w *Watcher) add(p string) error {
	if err := w.fsw.Add(p); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			// inotify says ENOSPC when the per-user watch limit is
			// reached, which a tree of 100,000 skills exceeds at the
			// default limit.
			return fmt.Errorf("watch %s: %w: the limit of watched folders is reached; on Linux raise fs.inotify.max_user_watches above the tree's folder count (sysctl)", p, err)
		}
		return fmt.Errorf("watch %s: %w", p, err)
	}
	return nil
}

// Close stops watching.
func (w *Watcher) Close() error { return w.fsw.Close() }

// Run forwards events until ctx is done.
func (w *Watcher) Run(ctx context.Context) {
	defer w.fsw.Close()
	w.loop(ctx, w.fsw.Events, w.fsw.Errors)
}

// loop turns events into debounced reload requests.
func (w *Watcher) loop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error) {
	defer close(w.stopped)
	pending := emptyChanges()
	full := false
	d := debounce{wait: w.timing.Debounce, maxWait: w.timing.MaxWait}
	defer d.stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch w.note(ev, &pending) {
			case eventIgnored:
				continue
			case eventUnattributed:
				full = true
			}
			d.event()
		case err, ok := <-errs:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file watch overflowed; rescanning everything", "error", err)
			} else {
				w.log.Warn("file watch error; rescanning everything", "error", err)
			}
			full = true
			d.start()
		case done := <-w.rewatch:
			w.rewatchRoots(false)
			close(done)
		case <-d.c:
			d.fired()
			if full {
				w.rewatchRoots(true)
				w.reloader.Request(nil)
			} else {
				changes := pending
				w.reloader.Request(&changes)
			}
			pending, full = emptyChanges(), false
		}
	}
}

// What an event means for the pending reload.
type eventKind int

const (
	eventNoted        eventKind = iota // recorded in the changes (maybe naming no entry)
	eventUnattributed                  // cannot be put on one entry: rescan everything
	eventIgnored                       // not about a root: no reload
)

// note records which top-level entry ev touches.
func (w *Watcher) note(ev fsnotify.Event, c *scan.Changes) eventKind {
	dir := filepath.Dir(ev.Name)
	if w.isRoot(ev.Name) {
		return eventUnattributed // the root itself: created, deleted, renamed or linked anew
	}
	if w.linkDirs[dir] && !w.underRoot(ev.Name) {
		return eventUnattributed // a link on the way to a root may have moved
	}
	if w.parents[dir] && !w.underRoot(ev.Name) {
		return eventIgnored // a neighbour of a root
	}
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() && !vcsDirs[filepath.Base(ev.Name)] {
			if err := w.addTree(ev.Name); err != nil {
				w.log.Warn("cannot watch new folder; rescanning everything", "path", ev.Name, "error", err)
				return eventUnattributed
			}
		}
	}
	for _, r := range []struct {
		root string
		into map[string]bool
		kind item.Kind
	}{
		{w.abs.Skills, c.Skills, item.KindSkill},
		{w.abs.Agents, c.Agents, item.KindSubagent},
	} {
		if r.root == "" {
			continue
		}
		rel, err := filepath.Rel(r.root, ev.Name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		key, ok := scan.EntryKey(r.kind, top)
		if !ok {
			return eventNoted // hidden: never published; an update naming no entry still rescans linked ones
		}
		r.into[key] = true
		return eventNoted
	}
	// Under no root: a tree that was one before its link moved on, whose
	// watches outlive it until it is deleted. Its events are no change of
	// what is served; the flip and the deletion are seen in the folder
	// holding the link.
	return eventIgnored
}

// isRoot reports whether p is a root, as configured or as resolved.
func (w *Watcher) isRoot(p string) bool {
	for _, root := range []string{w.abs.Skills, w.abs.Agents, w.roots.Skills, w.roots.Agents} {
		if root != "" && root == p {
			return true
		}
	}
	return false
}

func (w *Watcher) underRoot(p string) bool {
	for _, root := range []string{w.abs.Skills, w.abs.Agents} {
		if root != "" && (p == root || strings.HasPrefix(p, root+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

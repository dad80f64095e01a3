package reload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/skillserver/skillserver/internal/catalog"
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
type Watcher struct {
	roots    Roots
	abs      Roots
	debounce time.Duration
	reloader *Reloader
	log      *slog.Logger
	fsw      *fsnotify.Watcher
	// linkDirs hold a symlink on the way to a root (git-sync's "current");
	// they are watched, not recursively, so a flip of the link is seen.
	linkDirs map[string]bool
}

// NewWatcher starts watching roots. Close it, or cancel the context given
// to Run.
func NewWatcher(roots Roots, debounce time.Duration, r *Reloader, log *slog.Logger) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watch: %w", err)
	}
	w := &Watcher{roots: roots, debounce: debounce, reloader: r, log: log, fsw: fsw, linkDirs: map[string]bool{}}
	if err := w.resolve(); err != nil {
		fsw.Close()
		return nil, err
	}
	return w, nil
}

// resolve (re)computes the real paths of the roots and watches them. A
// root reached through a symlink (git-sync swaps one on every sync) is
// watched at its target; when that target goes away, resolve runs again
// and follows the link to the new one.
func (w *Watcher) resolve() error {
	for _, p := range []struct {
		in  string
		out *string
	}{{w.roots.Skills, &w.abs.Skills}, {w.roots.Agents, &w.abs.Agents}} {
		if p.in == "" {
			continue
		}
		if err := w.watchLinkDirs(p.in); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(p.in)
		if err != nil {
			return fmt.Errorf("watch %s: %w", p.in, err)
		}
		abs, err := filepath.Abs(real)
		if err != nil {
			return err
		}
		if abs == *p.out {
			continue
		}
		*p.out = abs
		if err := w.addTree(abs); err != nil {
			return err
		}
	}
	return nil
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
		if info.Mode()&fs.ModeSymlink != 0 && !w.linkDirs[prefix] {
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
// metadata.
func (w *Watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished or unreadable below the root: the scan reports it
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && vcsDirs[d.Name()] {
			return filepath.SkipDir
		}
		if err := w.fsw.Add(p); err != nil {
			return fmt.Errorf("watch %s: %w", p, err)
		}
		return nil
	})
}

// Close stops watching.
func (w *Watcher) Close() error { return w.fsw.Close() }

// Run forwards events until ctx is done.
func (w *Watcher) Run(ctx context.Context) {
	defer w.fsw.Close()
	pending := emptyChanges()
	full := false
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if !w.note(ev, &pending) {
				full = true
			}
			if timer == nil {
				timer = time.NewTimer(w.debounce)
				fire = timer.C
			} else {
				timer.Reset(w.debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file watch overflowed; rescanning everything", "error", err)
			} else {
				w.log.Warn("file watch error; rescanning everything", "error", err)
			}
			full = true
			if timer == nil {
				timer = time.NewTimer(w.debounce)
				fire = timer.C
			}
		case <-fire:
			timer, fire = nil, nil
			if full {
				if err := w.resolve(); err != nil {
					w.log.Warn("cannot watch a root; reloads need SIGHUP, rescan_interval or POST /-/reload until it is back", "error", err)
				}
				w.reloader.Request(nil)
			} else {
				changes := pending
				w.reloader.Request(&changes)
			}
			pending, full = emptyChanges(), false
		}
	}
}

// note records which top-level entry ev touches. It returns false when
// the event cannot be attributed to one (the root itself), which asks for
// a full rescan.
func (w *Watcher) note(ev fsnotify.Event, c *catalog.Changes) bool {
	if w.linkDirs[filepath.Dir(ev.Name)] && !w.underRoot(ev.Name) {
		return false // a link on the way to a root may have moved
	}
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() && !vcsDirs[filepath.Base(ev.Name)] {
			if err := w.addTree(ev.Name); err != nil {
				w.log.Warn("cannot watch new folder; rescanning everything", "path", ev.Name, "error", err)
				return false
			}
		}
	}
	for _, r := range []struct {
		root string
		into map[string]bool
		key  func(string) string
	}{
		{w.abs.Skills, c.Skills, func(s string) string { return s }},
		{w.abs.Agents, c.Agents, func(s string) string { return strings.TrimSuffix(s, ".md") }},
	} {
		if r.root == "" {
			continue
		}
		rel, err := filepath.Rel(r.root, ev.Name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if rel == "." {
			return false
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if strings.HasPrefix(top, ".") {
			return true // hidden: never published; an update naming no entry still rescans linked ones
		}
		r.into[r.key(top)] = true
		return true
	}
	return true
}

func (w *Watcher) underRoot(p string) bool {
	for _, root := range []string{w.abs.Skills, w.abs.Agents} {
		if root != "" && (p == root || strings.HasPrefix(p, root+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

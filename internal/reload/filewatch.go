package reload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// WatchFile calls changed when file may have changed, until ctx ends:
// once events naming it have been quiet for timing.Debounce, or
// timing.MaxWait into a burst of them, so a file is read after its
// writer is done rather than at its first write.
//
// The folder holding file is watched, not the file: editors and secret
// mounts replace a file rather than write it, which would end a watch of
// the file itself. Only events naming file count, and, when file is a
// symlink, events naming the links on its way to its target and the
// target itself: a Kubernetes secret volume's file is a link through
// "..data", a link swapped to a new folder on every update. Other
// events in the folder (a log file beside it, whose every line is a
// write) are no change of file.
//
// changed must cope with calls that changed nothing.
func WatchFile(ctx context.Context, file string, timing WatchTiming, changed func()) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", file, err)
	}
	w, err := newFileWatch(file, timing, changed)
	if err != nil {
		_ = fsw.Close()
		return err
	}
	w.add, w.remove = fsw.Add, fsw.Remove
	if err := w.resolve(); err != nil {
		_ = fsw.Close()
		return err
	}
	go func() {
		defer fsw.Close()
		w.loop(ctx, fsw.Events, fsw.Errors)
	}()
	return nil
}

// fileWatch is the state of WatchFile.
type fileWatch struct {
	file        string // absolute
	timing      WatchTiming
	changed     func()
	add, remove func(dir string) error
	// paths are the paths whose events are about file; dirs the
	// folders watched for them.
	paths, dirs map[string]bool
}

func newFileWatch(file string, timing WatchTiming, changed func()) (*fileWatch, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", file, err)
	}
	timing.MaxWait = max(timing.MaxWait, timing.Debounce)
	return &fileWatch{file: abs, timing: timing, changed: changed, dirs: map[string]bool{}}, nil
}

// maxLinks bounds the links followed from the file, as the kernel does.
const maxLinks = 40

// filePaths lists the paths whose change may change what reading file
// gives: file, and for each symlink on the way from it to its target,
// the entry of the link's folder its target goes through (Kubernetes'
// "..data") and the path it points at.
func filePaths(file string) map[string]bool {
	paths := map[string]bool{file: true}
	p := file
	for range maxLinks {
		info, err := os.Lstat(p)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			first, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(target)), "/")
			if first != ".." && first != "." {
				paths[filepath.Join(filepath.Dir(p), first)] = true
			}
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
		paths[p] = true
	}
	return paths
}

// resolve works out the paths again (a link may point elsewhere now)
// and watches their folders. The folder of the file itself must be
// watched; the others are watched if they can be.
func (w *fileWatch) resolve() error {
	w.paths = filePaths(w.file)
	want := map[string]bool{}
	for p := range w.paths {
		want[filepath.Dir(p)] = true
	}
	for dir := range w.dirs {
		if !want[dir] {
			delete(w.dirs, dir)
			_ = w.remove(dir) // gone already when its folder was deleted
		}
	}
	for dir := range want {
		// Added again even when watched: a folder deleted and created
		// again is another folder, whose watch went with the old one.
		if err := w.add(dir); err != nil {
			if dir == filepath.Dir(w.file) {
				return fmt.Errorf("watch %s: %w", w.file, err)
			}
			continue // a link's target folder not there (yet)
		}
		w.dirs[dir] = true
	}
	return nil
}

// loop calls changed once the events about the file have been quiet
// for the debounce.
func (w *fileWatch) loop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error) {
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
			if w.paths[filepath.Clean(ev.Name)] {
				d.event()
			}
		case _, ok := <-errs:
			if !ok {
				return
			}
			d.start() // an overflow may have hidden an event about the file
		case <-d.c:
			d.fired()
			_ = w.resolve() // the folder of the file stays watched when it was; a failure leaves SIGHUP
			w.changed()
		}
	}
}

package reload

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// WatchFile calls changed after each event in the folder holding file,
// until ctx ends. The folder is watched, not the file: editors and
// secret mounts (Kubernetes swaps a ..data link) replace a file rather
// than write it, which would end a watch of the file itself. changed
// must cope with events that changed nothing, and with a file caught
// half-written (the write's next event calls it again).
func WatchFile(ctx context.Context, file string, changed func()) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", file, err)
	}
	if err := fsw.Add(filepath.Dir(file)); err != nil {
		_ = fsw.Close()
		return fmt.Errorf("watch %s: %w", file, err)
	}
	go func() {
		defer fsw.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-fsw.Events:
				if !ok {
					return
				}
				changed()
			case _, ok := <-fsw.Errors:
				if !ok {
					return
				}
				changed() // an overflow may have hidden the event
			}
		}
	}()
	return nil
}

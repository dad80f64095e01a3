package reload

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchedFile runs a WatchFile loop for file on a channel of events,
// inside a synctest bubble, and returns where to send events and the
// times changed was called at.
func watchedFile(t *testing.T, file string, timing WatchTiming) (chan<- fsnotify.Event, <-chan time.Time) {
	t.Helper()
	calls := make(chan time.Time, 100)
	w, err := newFileWatch(file, timing, func() { calls <- time.Now() })
	if err != nil {
		t.Fatal(err)
	}
	w.add, w.remove = func(string) error { return nil }, func(string) error { return nil }
	if err := w.resolve(); err != nil {
		t.Fatal(err)
	}
	events := make(chan fsnotify.Event)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go w.loop(ctx, events, nil)
	return events, calls
}

func drain(calls <-chan time.Time) int {
	n := 0
	for {
		select {
		case <-calls:
			n++
		default:
			return n
		}
	}
}

// TestWatchFileIgnoresItsNeighbours: events about other files of the
// folder (a log file beside the token file, which every log line
// writes) never call changed; before, each one did, and each call's
// error line was the next event.
func TestWatchFileIgnoresItsNeighbours(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	synctest.Test(t, func(t *testing.T) {
		events, calls := watchedFile(t, file, WatchTiming{Debounce: 250 * time.Millisecond, MaxWait: 2 * time.Second})
		for range 1000 {
			events <- fsnotify.Event{Name: filepath.Join(dir, "skillserver.log"), Op: fsnotify.Write}
			time.Sleep(5 * time.Millisecond)
		}
		events <- fsnotify.Event{Name: filepath.Join(dir, "tokens.swp"), Op: fsnotify.Create}
		time.Sleep(time.Minute)
		if n := drain(calls); n != 0 {
			t.Fatalf("changed called %d times for events about other files", n)
		}
	})
}

// TestWatchFileDebounces: the writes of one save (truncate, write,
// write, chmod) are one call, watch_debounce after the last of them;
// the file renamed over is one more.
func TestWatchFileDebounces(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	synctest.Test(t, func(t *testing.T) {
		events, calls := watchedFile(t, file, WatchTiming{Debounce: 250 * time.Millisecond, MaxWait: 2 * time.Second})
		start := time.Now()
		for _, op := range []fsnotify.Op{fsnotify.Write, fsnotify.Write, fsnotify.Write, fsnotify.Chmod} {
			events <- fsnotify.Event{Name: file, Op: op}
			time.Sleep(100 * time.Millisecond)
		}
		at := <-calls
		if d := at.Sub(start); d != 550*time.Millisecond {
			t.Errorf("changed called %s after the first write, want 550ms (250ms after the last)", d)
		}
		synctest.Wait()
		if n := drain(calls); n != 0 {
			t.Errorf("%d more calls for one save", n)
		}
		events <- fsnotify.Event{Name: file, Op: fsnotify.Create} // renamed over
		<-calls
	})
}

// TestWatchFileFollowsKubernetesSecrets: a Secret volume's file is
// tokens -> ..data/tokens, ..data -> ..<timestamp>; an update writes a
// new timestamped folder and swaps ..data, and tokens itself never
// changes. The swap calls changed; the rest of the update does not.
func TestWatchFileFollowsKubernetesSecrets(t *testing.T) {
	dir := t.TempDir()
	for _, step := range []func() error{
		func() error { return os.Mkdir(filepath.Join(dir, "..2026_01_01"), 0o755) },
		func() error {
			return os.WriteFile(filepath.Join(dir, "..2026_01_01", "tokens"), []byte("a secret-0123456789abc *\n"), 0o600)
		},
		func() error { return os.Symlink("..2026_01_01", filepath.Join(dir, "..data")) },
		func() error { return os.Symlink("..data/tokens", filepath.Join(dir, "tokens")) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "tokens")
	want := []string{file, filepath.Join(dir, "..data"), filepath.Join(dir, "..data", "tokens")}
	if got := slices.Sorted(maps.Keys(filePaths(file))); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("filePaths = %q, want %q", got, want)
	}
	synctest.Test(t, func(t *testing.T) {
		events, calls := watchedFile(t, file, WatchTiming{Debounce: 250 * time.Millisecond, MaxWait: 2 * time.Second})
		// What kubelet does besides the swap, as inotify reports it.
		for _, ev := range []fsnotify.Event{
			{Name: filepath.Join(dir, "..2026_02_02"), Op: fsnotify.Create},
			{Name: filepath.Join(dir, "..data_tmp"), Op: fsnotify.Create},
			{Name: filepath.Join(dir, "..data_tmp"), Op: fsnotify.Rename},
		} {
			events <- ev
		}
		time.Sleep(time.Minute)
		if n := drain(calls); n != 0 {
			t.Fatalf("changed called %d times before the swap", n)
		}
		events <- fsnotify.Event{Name: filepath.Join(dir, "..data"), Op: fsnotify.Create}
		<-calls
	})
}

// TestWatchFileSeesASecretUpdate: the same update on a real file
// system, through inotify.
func TestWatchFileSeesASecretUpdate(t *testing.T) {
	dir := t.TempDir()
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	version := func(name string) {
		mustDo(os.Mkdir(filepath.Join(dir, name), 0o755))
		mustDo(os.WriteFile(filepath.Join(dir, name, "tokens"), []byte(name+"\n"), 0o600))
	}
	version("..2026_01_01")
	mustDo(os.Symlink("..2026_01_01", filepath.Join(dir, "..data")))
	mustDo(os.Symlink("..data/tokens", filepath.Join(dir, "tokens")))
	// Each call reads the file, as the server does.
	file := filepath.Join(dir, "tokens")
	read := make(chan string, 100)
	mustDo(WatchFile(t.Context(), file, WatchTiming{Debounce: 10 * time.Millisecond}, func() {
		b, _ := os.ReadFile(file)
		read <- string(b)
	}))
	seen := func(want string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case got := <-read:
				if got == want {
					return
				}
			case <-timeout:
				t.Fatalf("the swap of ..data to %q was not seen", want)
			}
		}
	}
	version("..2026_02_02")
	mustDo(os.Symlink("..2026_02_02", filepath.Join(dir, "..data_tmp")))
	mustDo(os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	mustDo(os.RemoveAll(filepath.Join(dir, "..2026_01_01")))
	seen("..2026_02_02\n")
	// The watch goes on: the next update is seen too.
	version("..2026_03_03")
	mustDo(os.Symlink("..2026_03_03", filepath.Join(dir, "..data_tmp")))
	mustDo(os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	seen("..2026_03_03\n")
}

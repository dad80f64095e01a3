package reload

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/scan"
)

// request is one reload a Reloader ran: when, and what it rescanned (nil:
// everything).
type request struct {
	at      time.Time
	changes *scan.Changes
}

// requestTarget sends every reload it runs on got.
type requestTarget struct{ got chan request }

func (r requestTarget) Reload(context.Context) (*catalog.Snapshot, error) {
	r.got <- request{at: time.Now()}
	return &catalog.Snapshot{}, nil
}

// Verify is not asked for by a watch's event loop.
func (r requestTarget) Verify(ctx context.Context) (*catalog.Snapshot, error) { return r.Reload(ctx) }

func (r requestTarget) Update(_ context.Context, c scan.Changes) (*catalog.Snapshot, error) {
	r.got <- request{at: time.Now(), changes: &c}
	return &catalog.Snapshot{}, nil
}

// debounced runs a Watcher's event loop with timing on a channel of
// events about a skills root at /skills, inside a synctest bubble, with no
// file system behind it. It returns where to send events and the reloads
// that follow.
func debounced(t *testing.T, timing WatchTiming) (chan<- fsnotify.Event, <-chan request) {
	t.Helper()
	got := make(chan request, 100)
	r := New(requestTarget{got}, slog.New(slog.DiscardHandler), Options{})
	w := newWatcher(Roots{Skills: "/skills"}, timing, r, slog.New(slog.DiscardHandler))
	w.abs = w.roots
	events := make(chan fsnotify.Event)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go r.Run(ctx)
	go w.loop(ctx, events, nil)
	return events, got
}

func write(name string) fsnotify.Event { return fsnotify.Event{Name: name, Op: fsnotify.Write} }

func skillsOf(r request) []string {
	if r.changes == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(r.changes.Skills))
}

// TestDebounceCoalescesABurst: events closer together than the debounce
// become one reload, watch_debounce after the last of them.
func TestDebounceCoalescesABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		events, got := debounced(t, WatchTiming{Debounce: 250 * time.Millisecond, MaxWait: 2 * time.Second})
		start := time.Now()
		for i, name := range []string{"/skills/a/x.md", "/skills/b/SKILL.md", "/skills/a/y.md"} {
			if i > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			events <- write(name)
		}
		r := <-got
		if at := r.at.Sub(start); at != 450*time.Millisecond {
			t.Errorf("reload %s after the first event, want 450ms (250ms after the last)", at)
		}
		if names := skillsOf(r); !slices.Equal(names, []string{"a", "b"}) {
			t.Errorf("reload rescanned %v, want [a b] at once", names)
		}
		synctest.Wait()
		select {
		case r := <-got:
			t.Errorf("a second reload %s after the burst: %v", r.at.Sub(start), skillsOf(r))
		default:
		}
	})
}

// TestChurnDoesNotPostponeReloads: a file rewritten every 60ms never
// leaves the tree quiet for the debounce; a change elsewhere must still be
// reloaded by watch_max_wait after the burst began, and again every
// watch_max_wait for as long as the churn lasts.
func TestChurnDoesNotPostponeReloads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxWait = 2 * time.Second
		events, got := debounced(t, WatchTiming{Debounce: 250 * time.Millisecond, MaxWait: maxWait})
		stop, stopped := make(chan struct{}), make(chan struct{})
		defer func() { close(stop); <-stopped }()
		start := time.Now()
		go func() {
			defer close(stopped)
			tick := time.NewTicker(60 * time.Millisecond)
			defer tick.Stop()
			for {
				events <- write("/skills/.cache/state")
				select {
				case <-tick.C:
				case <-stop:
					return
				}
			}
		}()
		time.Sleep(time.Second)
		events <- write("/skills/new/SKILL.md")

		next := func() request {
			t.Helper()
			select {
			case r := <-got:
				return r
			case <-time.After(time.Minute):
				t.Fatal("no reload in a minute of churn")
				return request{}
			}
		}
		first := next()
		if at := first.at.Sub(start); at != maxWait || !slices.Equal(skillsOf(first), []string{"new"}) {
			t.Errorf("first reload %s after the churn began, rescanning %v; want %s, [new]", at, skillsOf(first), maxWait)
		}
		// The next burst begins with the next churn event, up to 60ms later.
		second := next()
		if gap := second.at.Sub(first.at); gap > maxWait+60*time.Millisecond {
			t.Errorf("second reload %s after the first, want at most %s", gap, maxWait+60*time.Millisecond)
		}
	})
}

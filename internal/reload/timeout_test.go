package reload

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
)

// stuckTarget's first reloads block until unblock is closed, whatever
// their context says, like an open or read stuck in the kernel on a hung
// NFS or FUSE mount; the others return at once.
type stuckTarget struct {
	stuck   int // how many of the first reloads block
	unblock chan struct{}

	mu      sync.Mutex
	calls   int
	updates int // calls of Update, the rest are full reloads
}

func (s *stuckTarget) Reload(context.Context) (*catalog.Snapshot, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if n <= s.stuck {
		<-s.unblock
	}
	return &catalog.Snapshot{Generation: uint64(n)}, nil
}

func (s *stuckTarget) Update(ctx context.Context, _ catalog.Changes) (*catalog.Snapshot, error) {
	s.mu.Lock()
	s.updates++
	s.mu.Unlock()
	return s.Reload(ctx)
}

// countingObserver records what a Reloader reports.
type countingObserver struct {
	mu         sync.Mutex
	inProgress int
	abandoned  int
}

func (o *countingObserver) ObserveReloadsInProgress(n int) {
	o.mu.Lock()
	o.inProgress = n
	o.mu.Unlock()
}
func (o *countingObserver) ObserveReloadAbandoned() { o.mu.Lock(); o.abandoned++; o.mu.Unlock() }
func (o *countingObserver) get() (inProgress, abandoned int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.inProgress, o.abandoned
}

// TestStuckReloadIsAbandoned: a reload that never returns is given up on
// at the timeout, logged at error level and counted, and the next request
// runs a new reload that completes.
func TestStuckReloadIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := &stuckTarget{stuck: 1, unblock: make(chan struct{})}
		// Read only after ReloadNow returned: the line is written before
		// the reload is marked done, which Wait observes under the lock.
		var logs strings.Builder
		obs := &countingObserver{}
		r := New(target, slog.New(slog.NewTextHandler(&logs, nil)), Options{Timeout: time.Minute, MaxAbandoned: 4, Observer: obs})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go r.Run(ctx)

		start := time.Now()
		snap, err := r.ReloadNow(ctx)
		if !errors.Is(err, ErrTimeout) || snap != nil {
			t.Fatalf("stuck reload: %v, %v; want ErrTimeout", snap, err)
		}
		if waited := time.Since(start); waited != time.Minute {
			t.Errorf("gave up after %s, want the timeout, 1m", waited)
		}
		if line := logs.String(); !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "reload abandoned after reload_timeout") {
			t.Errorf("log %q: want an error line saying the reload was abandoned", line)
		}
		if inProgress, abandoned := obs.get(); inProgress != 1 || abandoned != 1 {
			t.Errorf("in progress %d, abandoned %d; want 1 (still blocked) and 1", inProgress, abandoned)
		}

		// The reloader stays usable.
		snap, err = r.ReloadNow(ctx)
		if err != nil || snap.Generation != 2 {
			t.Fatalf("reload after the stuck one: %v, %v; want generation 2", snap, err)
		}

		// When the stuck one returns at last, nothing is in progress.
		close(target.unblock)
		synctest.Wait()
		if inProgress, abandoned := obs.get(); inProgress != 0 || abandoned != 1 {
			t.Errorf("after the stuck reload returned: in progress %d, abandoned %d; want 0 and 1", inProgress, abandoned)
		}
	})
}

// TestAbandonedReloadsAreBounded: each abandoned reload still blocked
// holds a thread; once MaxAbandoned are, no new reload starts until one
// returns.
func TestAbandonedReloadsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := &stuckTarget{stuck: 2, unblock: make(chan struct{})}
		r := New(target, slog.New(slog.DiscardHandler), Options{Timeout: time.Minute, MaxAbandoned: 2})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go r.Run(ctx)
		for range 2 {
			if _, err := r.ReloadNow(ctx); !errors.Is(err, ErrTimeout) {
				t.Fatalf("stuck reload: %v, want ErrTimeout", err)
			}
		}
		if _, err := r.ReloadNow(ctx); !errors.Is(err, ErrTooManyAbandoned) {
			t.Fatalf("third reload with two still blocked: %v, want ErrTooManyAbandoned", err)
		}
		target.mu.Lock()
		started := target.calls
		target.mu.Unlock()
		if started != 2 {
			t.Errorf("%d reloads started, want 2", started)
		}
		close(target.unblock)
		synctest.Wait() // their return rescans on its own (TestAbandonedReloadReturningRescans)
		if snap, err := r.ReloadNow(ctx); err != nil || snap.Generation < 3 {
			t.Errorf("reload once the blocked ones returned: %v, %v; want generation 3 or later", snap, err)
		}
	})
}

// TestAbandonedReloadReturningRescans: the changes a reload carried are
// not live once it was abandoned or refused. When a blocked reload returns
// at last (the mount is back) and none has succeeded since, a full rescan
// runs on its own: with the file watch alone, no other trigger may come.
func TestAbandonedReloadReturningRescans(t *testing.T) {
	for _, tt := range []struct {
		name  string
		later bool // a second trigger arrives while the first is blocked, and is refused
	}{
		{"timed out", false},
		{"refused while one was blocked", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				target := &stuckTarget{stuck: 1, unblock: make(chan struct{})}
				r := New(target, slog.New(slog.DiscardHandler), Options{Timeout: time.Minute, MaxAbandoned: 1})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				go r.Run(ctx)
				changes := &catalog.Changes{Skills: map[string]bool{"a": true}}
				if _, err := r.Wait(ctx, r.Request(changes)); !errors.Is(err, ErrTimeout) {
					t.Fatalf("stuck update: %v, want ErrTimeout", err)
				}
				if tt.later {
					if _, err := r.Wait(ctx, r.Request(changes)); !errors.Is(err, ErrTooManyAbandoned) {
						t.Fatalf("update while one is blocked: %v, want ErrTooManyAbandoned", err)
					}
				}
				close(target.unblock)
				synctest.Wait()
				target.mu.Lock()
				calls, updates := target.calls, target.updates
				target.mu.Unlock()
				if calls != 2 || updates != 1 {
					t.Errorf("%d reloads ran, %d of them updates; want 2: the blocked update, then a full rescan once it returned", calls, updates)
				}
			})
		})
	}
}

// TestAbandonedReloadReturningAfterASuccessRescansNothing: when a later
// reload succeeded, what the abandoned one carried is live; its return
// starts nothing.
func TestAbandonedReloadReturningAfterASuccessRescansNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target := &stuckTarget{stuck: 1, unblock: make(chan struct{})}
		r := New(target, slog.New(slog.DiscardHandler), Options{Timeout: time.Minute, MaxAbandoned: 4})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go r.Run(ctx)
		if _, err := r.ReloadNow(ctx); !errors.Is(err, ErrTimeout) {
			t.Fatalf("stuck reload: %v, want ErrTimeout", err)
		}
		if _, err := r.ReloadNow(ctx); err != nil {
			t.Fatalf("reload after the stuck one: %v", err)
		}
		close(target.unblock)
		synctest.Wait()
		target.mu.Lock()
		calls := target.calls
		target.mu.Unlock()
		if calls != 2 {
			t.Errorf("%d reloads ran, want 2", calls)
		}
	})
}

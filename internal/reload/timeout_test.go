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
	"github.com/skillserver/skillserver/internal/scan"
)

// stuckTarget's first reloads block until unblock is closed, whatever
// their context says, like an open or read stuck in the kernel on a hung
// NFS or FUSE mount; the others return at once.
type stuckTarget struct {
	stuck   int // how many of the first reloads block
	unblock chan struct{}

	mu       sync.Mutex
	calls    int
	updates  int // calls of Update
	verifies int // calls of Verify; the rest are full reloads
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

// counts returns how many reloads started, and how many of them were
// updates.
func (s *stuckTarget) counts() (calls, updates int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, s.updates
}

// running runs r until the test ends and returns the context to wait
// with.
func running(t *testing.T, r *Reloader) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go r.Run(ctx)
	return ctx
}

func (s *stuckTarget) Verify(ctx context.Context) (*catalog.Snapshot, error) {
	s.mu.Lock()
	s.verifies++
	s.mu.Unlock()
	return s.Reload(ctx)
}

func (s *stuckTarget) Update(ctx context.Context, _ scan.Changes) (*catalog.Snapshot, error) {
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
		ctx := running(t, r)

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
		ctx := running(t, r)
		for range 2 {
			if _, err := r.ReloadNow(ctx); !errors.Is(err, ErrTimeout) {
				t.Fatalf("stuck reload: %v, want ErrTimeout", err)
			}
		}
		if _, err := r.ReloadNow(ctx); !errors.Is(err, ErrTooManyAbandoned) {
			t.Fatalf("third reload with two still blocked: %v, want ErrTooManyAbandoned", err)
		}
		if started, _ := target.counts(); started != 2 {
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
// When a later reload succeeded, what it carried is live, and its return
// starts nothing.
func TestAbandonedReloadReturningRescans(t *testing.T) {
	for _, tt := range []struct {
		name     string
		max      int   // MaxAbandoned
		later    bool  // a second update comes while the first is blocked
		laterErr error // what it returns
		calls    int   // reloads that ran in the end; all but the first rescanned everything
	}{
		{"timed out", 1, false, nil, 2},
		{"refused while one was blocked", 1, true, ErrTooManyAbandoned, 2},
		{"a later one succeeded", 2, true, nil, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				target := &stuckTarget{stuck: 1, unblock: make(chan struct{})}
				r := New(target, slog.New(slog.DiscardHandler), Options{Timeout: time.Minute, MaxAbandoned: tt.max})
				ctx := running(t, r)
				changes := &scan.Changes{Skills: map[string]bool{"a": true}}
				if _, err := r.Wait(ctx, r.Request(changes)); !errors.Is(err, ErrTimeout) {
					t.Fatalf("stuck update: %v, want ErrTimeout", err)
				}
				if tt.later {
					if _, err := r.Wait(ctx, r.Request(changes)); !errors.Is(err, tt.laterErr) {
						t.Fatalf("update while one is blocked: %v, want %v", err, tt.laterErr)
					}
				}
				close(target.unblock)
				synctest.Wait()
				if calls, updates := target.counts(); calls != tt.calls || updates != 1 {
					t.Errorf("%d reloads ran, %d of them updates; want %d, all full but the first", calls, updates, tt.calls)
				}
			})
		})
	}
}

// Package reload decides when the catalogue rescans. It coalesces
// triggers (signals, file-system events, a periodic timer, admin requests)
// into reloads that run one at a time, merges the changes they name, and
// tells a waiter when a reload that started after its request is live.
//
// It imports internal/catalog for its types and internal/scan for the
// entry-key rule only, and must not import HTTP, feed or configuration
// packages.
package reload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/scan"
)

// Target is what gets reloaded (catalog.Catalog). A reload whose context
// is done must not keep a later one waiting (catalog.Catalog does not).
type Target interface {
	Reload(ctx context.Context) (*catalog.Snapshot, error)
	// Verify rescans everything but publishes only what differs from
	// the current snapshot (catalog.Catalog.Verify).
	Verify(ctx context.Context) (*catalog.Snapshot, error)
	Update(ctx context.Context, changes scan.Changes) (*catalog.Snapshot, error)
}

// scope is how much a pending request rescans; a larger one covers the
// smaller ones pending with it.
type scope int

const (
	scopeChanges scope = iota // the entries named in the changes
	scopeVerify               // everything, published only if it differs
	scopeFull                 // everything, published
)

// Observer is told how reloads fare, for metrics (internal/metrics).
type Observer interface {
	// ObserveReloadsInProgress reports how many reloads have started and
	// not returned, abandoned ones included.
	ObserveReloadsInProgress(n int)
	// ObserveReloadAbandoned reports a reload given up on at the timeout.
	ObserveReloadAbandoned()
}

// Options tune a Reloader.
type Options struct {
	// Timeout abandons a reload that runs longer (a read blocked on a
	// hung network file system): its waiters get ErrTimeout, the previous
	// snapshot stays published, and the next request starts a new
	// reload. 0 never abandons one.
	Timeout time.Duration
	// MaxAbandoned is how many abandoned reloads may still be blocked,
	// each holding a thread in a system call and a snapshot, before no
	// new reload starts (ErrTooManyAbandoned); 0 means no bound.
	MaxAbandoned int
	// Observer, if set, is told about reloads in progress and abandoned.
	Observer Observer
}

// ErrTimeout is the error of a reload abandoned after Options.Timeout.
var ErrTimeout = errors.New("reload timed out and was abandoned")

// ErrTooManyAbandoned is the error of a reload not started because
// Options.MaxAbandoned abandoned reloads are still blocked.
var ErrTooManyAbandoned = errors.New("reload not started: too many abandoned reloads are still blocked")

// Reloader serializes and coalesces reload requests: requests that arrive
// while a reload runs become exactly one more reload.
type Reloader struct {
	target Target
	log    *slog.Logger
	opts   Options
	wake   chan struct{}

	mu         sync.Mutex
	requested  uint64 // tickets handed out
	taken      uint64 // tickets up to this one are covered by the running or last reload
	completed  uint64 // every ticket up to this one is covered by a finished reload
	scope      scope  // what the pending requests want rescanned
	changes    scan.Changes
	lastSnap   *catalog.Snapshot
	lastErr    error
	done       chan struct{} // closed when a reload finishes, then replaced
	inProgress int           // reloads started and not returned, abandoned ones included
	succeeded  uint64        // reloads that returned no error, ever
}

// New returns a Reloader for target; call Run to start it.
func New(target Target, log *slog.Logger, opts Options) *Reloader {
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	return &Reloader{target: target, log: log, opts: opts, wake: make(chan struct{}, 1), done: make(chan struct{}),
		changes: emptyChanges()}
}

type nopObserver struct{}

func (nopObserver) ObserveReloadsInProgress(int) {}
func (nopObserver) ObserveReloadAbandoned()      {}

func emptyChanges() scan.Changes {
	return scan.Changes{Skills: map[string]bool{}, Agents: map[string]bool{}}
}

// Ticket identifies a request; Wait on it.
type Ticket uint64

// Request asks for a reload. changes names what changed; nil asks for a
// full rescan. It never blocks.
func (r *Reloader) Request(changes *scan.Changes) Ticket {
	if changes == nil {
		return r.request(scopeFull, nil)
	}
	return r.request(scopeChanges, changes)
}

// Verify asks for a rescan of everything that publishes only what
// differs from the published snapshot: after a file watch was set up
// behind the first scan, it catches what changed in between without
// publishing an unchanged tree again. It never blocks.
func (r *Reloader) Verify() Ticket { return r.request(scopeVerify, nil) }

func (r *Reloader) request(sc scope, changes *scan.Changes) Ticket {
	r.mu.Lock()
	r.requested++
	t := Ticket(r.requested)
	r.scope = max(r.scope, sc)
	if changes != nil {
		maps.Copy(r.changes.Skills, changes.Skills)
		maps.Copy(r.changes.Agents, changes.Agents)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is already pending; it will see this request
	}
	return t
}

// Wait blocks until a reload that started after ticket t was requested has
// finished, and returns its result.
func (r *Reloader) Wait(ctx context.Context, t Ticket) (*catalog.Snapshot, error) {
	for {
		r.mu.Lock()
		if r.completed >= uint64(t) {
			snap, err := r.lastSnap, r.lastErr
			r.mu.Unlock()
			return snap, err
		}
		done := r.done
		r.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ReloadNow requests a full rescan and waits for it.
func (r *Reloader) ReloadNow(ctx context.Context) (*catalog.Snapshot, error) {
	return r.Wait(ctx, r.Request(nil))
}

// Run performs requested reloads until ctx is done.
func (r *Reloader) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		upTo := r.requested
		r.taken = upTo
		sc, changes := r.scope, r.changes
		r.scope, r.changes = scopeChanges, emptyChanges()
		r.mu.Unlock()
		if upTo == r.completedTicket() {
			continue
		}
		snap, err := r.attempt(ctx, sc, changes)
		r.mu.Lock()
		if err != nil {
			// The changes this reload carried are not live; whatever runs
			// next rescans everything so none is lost.
			r.scope = scopeFull
		} else {
			r.succeeded++
		}
		r.completed = upTo
		r.lastSnap, r.lastErr = snap, err
		close(r.done)
		r.done = make(chan struct{})
		r.mu.Unlock()
	}
}

func (r *Reloader) completedTicket() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.completed
}

type outcome struct {
	snap *catalog.Snapshot
	err  error
}

// attempt runs one reload, and gives up waiting for it after the timeout.
// The target keeps running an abandoned reload on its own goroutine (a
// system call cannot be interrupted) until it returns.
func (r *Reloader) attempt(ctx context.Context, sc scope, changes scan.Changes) (*catalog.Snapshot, error) {
	r.mu.Lock()
	blocked := r.inProgress // no reload is awaited now, so every one in progress was abandoned
	r.mu.Unlock()
	if r.opts.MaxAbandoned > 0 && blocked >= r.opts.MaxAbandoned {
		err := fmt.Errorf("%w (%d)", ErrTooManyAbandoned, blocked)
		r.log.Error("reload not started; the previous snapshot stays published", "error", err, "abandoned", blocked)
		return nil, err
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if r.opts.Timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, r.opts.Timeout)
	}
	defer cancel()
	out := make(chan outcome, 1)
	// Under r.mu: whether the reload returned, whether it was abandoned,
	// and how many had succeeded then.
	var returned, abandoned bool
	var succeeded uint64
	r.addInProgress(1)
	go func() {
		var o outcome
		switch sc {
		case scopeFull:
			o.snap, o.err = r.target.Reload(rctx)
		case scopeVerify:
			o.snap, o.err = r.target.Verify(rctx)
		default:
			o.snap, o.err = r.target.Update(rctx, changes)
		}
		r.addInProgress(-1)
		r.mu.Lock()
		returned = true
		// What it carried is not live unless a later reload succeeded,
		// and a blocked reload returning may be the only sign that the
		// tree can be read again: with the file watch alone, no other
		// trigger may come. A request not yet taken rescans everything
		// anyway (a failure left r.scope full).
		rescan := abandoned && r.succeeded == succeeded && r.requested == r.taken
		r.mu.Unlock()
		out <- o
		if rescan {
			r.log.Info("an abandoned reload returned and none has succeeded since; rescanning everything", "error", o.err)
			r.Request(nil)
		}
	}()
	select {
	case o := <-out:
		return o.snap, o.err
	case <-rctx.Done():
	}
	r.mu.Lock()
	if returned { // as the time ran out
		r.mu.Unlock()
		o := <-out
		return o.snap, o.err
	}
	if ctx.Err() != nil {
		r.mu.Unlock()
		return nil, ctx.Err() // shutting down
	}
	abandoned, succeeded = true, r.succeeded
	r.mu.Unlock()
	r.opts.Observer.ObserveReloadAbandoned()
	r.log.Error("reload abandoned after reload_timeout; the previous snapshot stays published", "timeout", r.opts.Timeout, "full", sc != scopeChanges)
	return nil, fmt.Errorf("%w after %s", ErrTimeout, r.opts.Timeout)
}

func (r *Reloader) addInProgress(d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inProgress += d
	r.opts.Observer.ObserveReloadsInProgress(r.inProgress)
}

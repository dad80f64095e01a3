// Package reload decides when the catalogue rescans. It coalesces
// triggers (signals, file-system events, a periodic timer, admin requests)
// into reloads that run one at a time, merges the changes they name, and
// tells a waiter when a reload that started after its request is live.
//
// It imports internal/catalog for its types only, and must not import
// HTTP or configuration packages.
package reload

import (
	"context"
	"log/slog"
	"maps"
	"sync"

	"github.com/skillserver/skillserver/internal/catalog"
)

// Target is what gets reloaded (catalog.Catalog).
type Target interface {
	Reload(ctx context.Context) (*catalog.Snapshot, error)
	Update(ctx context.Context, changes catalog.Changes) (*catalog.Snapshot, error)
}

// Reloader serializes and coalesces reload requests: requests that arrive
// while a reload runs become exactly one more reload.
type Reloader struct {
	target Target
	log    *slog.Logger
	wake   chan struct{}

	mu        sync.Mutex
	requested uint64 // tickets handed out
	completed uint64 // every ticket up to this one is covered by a finished reload
	full      bool   // a pending request wants everything rescanned
	changes   catalog.Changes
	lastSnap  *catalog.Snapshot
	lastErr   error
	done      chan struct{} // closed when a reload finishes, then replaced
}

// New returns a Reloader for target; call Run to start it.
func New(target Target, log *slog.Logger) *Reloader {
	return &Reloader{target: target, log: log, wake: make(chan struct{}, 1), done: make(chan struct{}),
		changes: emptyChanges()}
}

func emptyChanges() catalog.Changes {
	return catalog.Changes{Skills: map[string]bool{}, Agents: map[string]bool{}}
}

// Ticket identifies a request; Wait on it.
type Ticket uint64

// Request asks for a reload. changes names what changed; nil asks for a
// full rescan. It never blocks.
func (r *Reloader) Request(changes *catalog.Changes) Ticket {
	r.mu.Lock()
	r.requested++
	t := Ticket(r.requested)
	if changes == nil {
		r.full = true
	} else {
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
		full, changes := r.full, r.changes
		r.full, r.changes = false, emptyChanges()
		r.mu.Unlock()
		if upTo == r.completedTicket() {
			continue
		}
		var snap *catalog.Snapshot
		var err error
		if full {
			snap, err = r.target.Reload(ctx)
		} else {
			snap, err = r.target.Update(ctx, changes)
		}
		r.mu.Lock()
		if err != nil {
			// The changes this reload carried are not live; whatever runs
			// next rescans everything so none is lost.
			r.full = true
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

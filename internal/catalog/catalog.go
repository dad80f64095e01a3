// Package catalog builds immutable Snapshots from scans (internal/scan):
// ordered lists, lookups, the content store, derived counts and problems,
// and the snapshot's documents (an internal/feed Feed). It publishes the
// current snapshot through an atomic pointer, runs reloads one at a time,
// and retains what reloads replace (pinned artifacts by ArtifactKey,
// retired snapshots).
//
// It must not import internal/httpapi or any router, configuration,
// metrics or internal/reload; those depend on it.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/scan"
)

// Options tune a Catalog beyond what to scan. A zero field is off, as 0
// is in the configuration: no retention, no bound, no cache.
type Options struct {
	// Retention is how long a pinned URL keeps serving its bytes after a
	// reload replaced them (0: not at all).
	Retention time.Duration
	// RetentionMaxBytes bounds the bytes kept only for retention (0: no
	// bound).
	RetentionMaxBytes int64
	// DocumentCacheBytes bounds the documents kept for base URLs nobody
	// configured, across snapshots (0: none are kept).
	DocumentCacheBytes int64
	// OnReload, if set, is called after every reload attempt.
	OnReload func(ReloadResult)
	// OnRetention, if set, is told what retention holds when its window
	// ends for something, between reloads (ReloadResult carries it at a
	// reload). Calls and OnReload's are made one at a time, in order.
	OnRetention func(RetentionStats)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Blobs, if set, is the state directory's blob folder: snapshots
	// keep their blobs there, and what no snapshot or retention names any
	// more is swept from it after each reload that built a flat store.
	Blobs *content.Dir
	// Cache, if set, is the scan cache to start from (scan.OpenCache,
	// kept in the state directory and saved after each reload); nil
	// starts an empty one in memory.
	Cache *scan.Cache
}

// ReloadResult describes one reload attempt, for logs and metrics.
type ReloadResult struct {
	Snapshot  *Snapshot // nil when the scan failed
	Err       error
	Duration  time.Duration
	Full      bool // every entry rescanned, rather than only changed ones
	Retention RetentionStats
}

// Catalog owns the current snapshot and replaces it on reload.
type Catalog struct {
	src  Source
	log  *slog.Logger
	opts Options

	// mu guards the start and the end of a reload, never its scan, so a
	// scan stuck in a system call (a hung network file system) holds
	// nothing a later reload needs once its context is done.
	mu      sync.Mutex
	running *attempt    // the one reload that may publish; nil when none runs
	gen     uint64      // generation of the published snapshot
	cache   *scan.Cache // lent to the running reload
	cur     atomic.Pointer[Snapshot]
	retain  *retention
	docs    *feed.SharedCache
}

// attempt is one reload in progress. Reloads run one at a time; one whose
// context is done (cancelled, or given up on by internal/reload's
// watchdog) is abandoned as soon as another starts: that one takes over
// and the abandoned one, should it ever return, publishes nothing.
type attempt struct {
	ctx   context.Context
	done  chan struct{} // closed when the reload has returned
	prev  *Snapshot     // published when it started
	gen   uint64        // prev's generation, 0 before the first
	cache *scan.Cache
}

// ErrSuperseded is returned by a reload that was abandoned and replaced by
// a later one before it returned; it published nothing.
var ErrSuperseded = errors.New("reload abandoned and superseded by a later one")

// New returns a Catalog for src with no snapshot yet; call Reload.
func New(src Source, log *slog.Logger, opts ...Options) *Catalog {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cache := o.Cache
	if cache == nil {
		cache = scan.NewCache()
	}
	c := &Catalog{src: src, log: log, opts: o, cache: cache, retain: newRetention(o.Retention, o.RetentionMaxBytes, o.Now),
		docs: feed.NewSharedCache(o.DocumentCacheBytes)}
	c.retain.expired = c.reportRetention
	return c
}

// reportRetention tells OnRetention what retention holds, under mu, so
// it is never told older stats after a reload reported newer ones.
func (c *Catalog) reportRetention() {
	if c.opts.OnRetention == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts.OnRetention(c.retain.stats())
}

// Current returns the published snapshot, or nil before the first Reload
// succeeded. Handlers call it once per request and use only that value.
func (c *Catalog) Current() *Snapshot { return c.cur.Load() }

// Reload rescans everything (unchanged files come from the cache) and,
// when the scan completes, publishes the new snapshot. When it fails the
// previous snapshot stays published and the error is returned. It waits
// for a running reload to return, or to be abandoned: to have its context
// done, as internal/reload does to a reload that overran its timeout.
func (c *Catalog) Reload(ctx context.Context) (*Snapshot, error) {
	return c.reload(ctx, nil, false)
}

// Verify rescans everything, as Reload does, but publishes the result
// only when it publishes something other than the current snapshot
// (Snapshot.publishesSameAs); else it returns the current snapshot, and
// nothing is logged or reported. It is the check that follows a file
// watch set up after the first scan: a change made while the watch was
// being set up is published, and a tree that did not change is not
// published again as a new generation.
func (c *Catalog) Verify(ctx context.Context) (*Snapshot, error) {
	return c.reload(ctx, nil, true)
}

// Update rescans only the entries named in changes, reusing the rest of
// the current snapshot, and publishes the result. Entries that are or
// hold a symlink are rescanned too, whatever changed: a link can reach
// into another entry, whose change the file watch attributes to that
// entry alone. With nothing to rescan it returns the current snapshot
// and publishes nothing.
func (c *Catalog) Update(ctx context.Context, changes scan.Changes) (*Snapshot, error) {
	return c.reload(ctx, &changes, false)
}

// withLinked returns changes plus the entries of prev that are or hold a
// symlink, without modifying changes.
func withLinked(changes scan.Changes, prev *Snapshot) scan.Changes {
	add := func(named, linked map[string]bool) map[string]bool {
		if len(linked) == 0 {
			return named
		}
		out := maps.Clone(named)
		if out == nil {
			out = make(map[string]bool, len(linked))
		}
		maps.Copy(out, linked)
		return out
	}
	return scan.Changes{Skills: add(changes.Skills, prev.derived.skills.linked), Agents: add(changes.Agents, prev.derived.agents.linked)}
}

func (c *Catalog) reload(ctx context.Context, changes *scan.Changes, verify bool) (*Snapshot, error) {
	a, err := c.claim(ctx)
	if err != nil {
		return nil, err
	}
	defer close(a.done)
	start := time.Now()
	prev := a.prev
	switch {
	case prev == nil:
		changes = nil
	case changes != nil:
		ch := withLinked(*changes, prev)
		if len(ch.Skills) == 0 && len(ch.Agents) == 0 {
			// Nothing to rescan: publishing would only bump the generation.
			return c.finish(a, ReloadResult{Snapshot: prev}, start, false)
		}
		changes = &ch
	}
	mark := a.cache.Mark()
	progress := &scan.Progress{}
	stop := c.logProgress(progress, start)
	snap, err := build(ctx, buildInput{src: c.src, generation: a.gen + 1, prev: prev, changes: changes, cache: a.cache, blobs: c.opts.Blobs, docs: c.docs, log: c.log, progress: progress})
	stop()
	if verify && err == nil && snap.publishesSameAs(prev) {
		// Dropped with its scan's cache tables, which say what the
		// published ones do: nothing of it outlives it, so its memory
		// is given back whole rather than left in holes among what
		// stays.
		a.cache.Restore(mark)
		snap.release()
		return c.finish(a, ReloadResult{Snapshot: prev}, start, false)
	}
	return c.finish(a, ReloadResult{Snapshot: snap, Err: err, Full: changes == nil}, start, true)
}

// progressEvery is how often a running scan logs how far it has got; a
// scan that is done sooner logs nothing but its reload line.
const progressEvery = 2 * time.Second

// logProgress logs p at INFO every progressEvery until stop is called
// (stop returns once the logging has ended): the entries scanned, of the
// total listed so far, and the rate since start, so the operator of a
// large tree sees a cold start at work.
func (c *Catalog) logProgress(p *scan.Progress, start time.Time) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				n, total := p.Counts()
				elapsed := time.Since(start)
				c.log.Info("scan progress", "entries_scanned", n, "entries_total", total,
					"entries_per_second", math.Round(float64(n)/elapsed.Seconds()), "elapsed", elapsed.Round(time.Millisecond))
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// claim waits until no reload runs, or the running one is abandoned (its
// context is done), and makes a new attempt the running one. An abandoned
// scan may still be writing its scan cache, so the new attempt starts from
// an empty one.
func (c *Catalog) claim(ctx context.Context) (*attempt, error) {
	for {
		c.mu.Lock()
		r := c.running
		if r == nil {
			a := &attempt{ctx: ctx, done: make(chan struct{}), prev: c.cur.Load(), gen: c.gen, cache: c.cache}
			c.running = a
			c.mu.Unlock()
			return a, nil
		}
		c.mu.Unlock()
		select {
		case <-r.done:
		case <-r.ctx.Done():
			c.mu.Lock()
			if c.running == r {
				c.running, c.cache = nil, c.cache.Fresh()
			}
			c.mu.Unlock()
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: waiting for the running reload: %w", scan.ErrScanFailed, ctx.Err())
		}
	}
}

// finish ends attempt a: unless a later reload took over, it publishes
// res.Snapshot (when publish is set and the scan succeeded), logs and
// reports. Holding mu keeps publications, logs and reports in order.
func (c *Catalog) finish(a *attempt, res ReloadResult, start time.Time, publish bool) (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res.Duration = time.Since(start)
	if c.running != a {
		c.log.Warn("an abandoned reload returned after a later one took over; its result is dropped", "error", res.Err, "duration", res.Duration)
		return nil, ErrSuperseded
	}
	c.running = nil
	if !publish {
		return res.Snapshot, nil
	}
	if res.Err != nil {
		res.Snapshot = nil
		res.Retention = c.retain.stats()
		c.log.Error("reload failed; the previous snapshot stays published", "generation", c.gen, "error", res.Err, "duration", res.Duration)
		c.report(res)
		return nil, res.Err
	}
	snap := res.Snapshot
	c.gen = snap.Generation
	c.cur.Store(snap)
	c.retain.retire(a.prev, snap, c.opts.Now())
	if err := a.cache.Save(); err != nil {
		c.log.Warn("cannot save the scan cache; the next start scans the files it could not save again", "error", err)
	}
	if snap.Store.Flat() {
		c.sweep(snap)
	}
	res.Retention = c.retain.stats()
	c.logReload(a.prev, res)
	c.report(res)
	return snap, nil
}

// sweep removes from the state directory the blobs that neither snap nor
// anything retention keeps names. It runs with mu held, when no reload
// is writing blobs (an abandoned one's result is dropped whatever it
// wrote).
func (c *Catalog) sweep(snap *Snapshot) {
	dir := c.opts.Blobs
	if dir == nil {
		return
	}
	c.retain.mu.Lock()
	n, err := dir.Sweep(func(d content.Digest) bool { return snap.Store.Has(d) || c.retain.holds(d) })
	c.retain.mu.Unlock()
	if err != nil {
		c.log.Warn("cannot remove some unused blobs from the state directory", "path", dir.Path(), "error", err)
	}
	if n > 0 {
		c.log.Debug("swept unused blobs from the state directory", "removed", n, "kept", dir.Len())
	}
}

func (c *Catalog) report(res ReloadResult) {
	if c.opts.OnReload != nil {
		c.opts.OnReload(res)
	}
}

// Retained returns the bytes with digest d that the artifact key served in
// a snapshot retired within the retention window.
func (c *Catalog) Retained(key ArtifactKey, d content.Digest) ([]byte, bool) {
	b, ok := c.retain.artifact(key, d, c.opts.Now())
	if !ok {
		return nil, false
	}
	data, err := b.Bytes()
	return data, err == nil
}

// A View is how one reader sees a snapshot's feed: the scope, path
// prefix and allow of its read token (feed.Feed.View). The zero View
// sees the whole tree.
type View struct {
	Scope, Prefix string
	Allow         func(item string) bool
}

// Of is f as v sees it.
func (v View) Of(f *feed.Feed) *feed.Feed { return f.View(v.Scope, v.Prefix, v.Allow) }

// Asks is what a Lookup names.
type Asks uint8

const (
	AsksBlob     Asks = iota // Digest, by digest alone
	AsksFile                 // Digest published as the file Name (feed.ArtifactPath)
	AsksPinned               // Digest where Key points (a ?digest= URL), which snap serves as Served
	AsksDocument             // the document Doc at Base
)

// A Lookup is what a request asks Locate for, as View sees the tree.
type Lookup struct {
	Asks   Asks
	View   View
	Digest content.Digest
	Name   string
	// Key is the artifact a pinned URL names (zero for one retention
	// does not key, such as a latest-version path); Served is the digest
	// snap serves there ("" for none).
	Key    ArtifactKey
	Served content.Digest
	Doc    feed.DocKey
	Base   feed.Base
}

// Found is what Locate found: the blob, or the document of AsksDocument,
// and for AsksFile the item a download of the file installs ("" for none).
type Found struct {
	Blob    content.Blob
	Doc     *feed.Document
	Install string
}

// Locate answers where what q asks for is now: in snap, the snapshot the
// request began on (nil: Current), else in a snapshot retired within the
// retention window, newest first, else in retention. A document of a
// Retainable kind is looked for in the retired snapshots (a client
// walking the tree across a reload finishes the walk it began); retention
// keeps none. A file is looked for in each snapshot whose view publishes
// it, then in retention where an item of the view published it. Pinned
// bytes come from snap when it serves them there, else from retention by
// key; by digest alone, from snap when the view holds a file of them, else,
// for a view of the whole tree, from retention (a scoped view has no items
// left to check them against). The retired snapshots are not asked for
// either: what one holds that snap does not, retention keeps as long.
func (c *Catalog) Locate(snap *Snapshot, q Lookup) (Found, bool) {
	if snap == nil {
		if snap = c.Current(); snap == nil {
			return Found{}, false
		}
	}
	switch q.Asks {
	case AsksDocument:
		if doc, ok := q.View.Of(snap.Feed()).Document(q.Base, q.Doc); ok || !q.Doc.Kind.Retainable() {
			return Found{Doc: doc}, ok
		}
		for _, old := range c.Retired() {
			if doc, ok := q.View.Of(old.Feed()).Document(q.Base, q.Doc); ok {
				return Found{Doc: doc}, true
			}
		}
	case AsksFile:
		f := q.View.Of(snap.Feed())
		if found, ok := publishedFile(f, snap, q); ok {
			return found, true
		}
		for _, old := range c.Retired() {
			if found, ok := publishedFile(q.View.Of(old.Feed()), old, q); ok {
				return found, true
			}
		}
		var allow func(string) bool
		if f.Scoped() {
			allow = f.Allows
		}
		if b, install, ok := c.retain.file(q.Digest, q.Name, allow, c.opts.Now()); ok {
			return Found{Blob: b, Install: install}, true
		}
	case AsksPinned:
		if q.Digest == q.Served {
			b, ok := snap.Store.Blob(q.Digest)
			return Found{Blob: b}, ok
		}
		if q.Key != (ArtifactKey{}) {
			b, ok := c.retain.artifact(q.Key, q.Digest, c.opts.Now())
			return Found{Blob: b}, ok
		}
	case AsksBlob:
		f := q.View.Of(snap.Feed())
		if b, ok := snap.Store.Blob(q.Digest); ok {
			return Found{Blob: b}, f.HasBlob(q.Digest)
		}
		if !f.Scoped() {
			b, ok := c.retain.blob(q.Digest, c.opts.Now())
			return Found{Blob: b}, ok
		}
	}
	return Found{}, false
}

// publishedFile is q's file where the view f of s publishes it.
func publishedFile(f *feed.Feed, s *Snapshot, q Lookup) (Found, bool) {
	file, ok := f.ArtifactFile(q.Digest, q.Name)
	if !ok {
		return Found{}, false
	}
	b, ok := s.Store.Blob(q.Digest)
	return Found{Blob: b, Install: file.Install}, ok
}

// Retired returns snapshots retired within the retention window, newest
// first, so a client that started walking one can finish.
func (c *Catalog) Retired() []*Snapshot { return c.retain.retired(c.opts.Now()) }

// Retention reports what retention holds.
func (c *Catalog) Retention() RetentionStats { return c.retain.stats() }

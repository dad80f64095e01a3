// Package catalog scans the skills and sub-agents trees into immutable
// Snapshots (ordered lists, indexes, the content store and lazily encoded
// documents) and publishes the current one through an atomic pointer.
//
// It must not import net/http routing (internal/httpapi), configuration or
// metrics packages; those depend on it.
package catalog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Catalog owns the current snapshot and replaces it on reload.
type Catalog struct {
	src Source
	log *slog.Logger

	reloadMu sync.Mutex // one scan at a time
	gen      uint64     // guarded by reloadMu
	cur      atomic.Pointer[Snapshot]
}

// New returns a Catalog for src with no snapshot yet; call Reload.
func New(src Source, log *slog.Logger) *Catalog {
	return &Catalog{src: src, log: log}
}

// Current returns the published snapshot, or nil before the first Reload
// succeeded. Handlers call it once per request and use only that value.
func (c *Catalog) Current() *Snapshot { return c.cur.Load() }

// Reload scans the tree and, when the scan completes, publishes the new
// snapshot. When it fails the previous snapshot stays published and the
// error is returned.
func (c *Catalog) Reload(ctx context.Context) (*Snapshot, error) {
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	start := time.Now()
	snap, err := Build(ctx, c.src, c.gen+1)
	if err != nil {
		c.log.Error("reload failed", "generation", c.gen, "error", err, "duration", time.Since(start))
		return nil, err
	}
	c.gen = snap.Generation
	c.cur.Store(snap)
	for _, p := range snap.Problems {
		c.log.Warn("scan problem", "path", p.Path, "rule", p.Rule, "severity", string(p.Severity), "message", p.Message)
	}
	c.log.Info("reload",
		"generation", snap.Generation,
		"skills", len(snap.Skills),
		"skill_versions", snap.VersionCount(),
		"agents", len(snap.Agents),
		"agent_versions", snap.AgentVersionCount(),
		"problems", len(snap.Problems),
		"errors", snap.ErrorCount(),
		"blobs", snap.Store.Len(),
		"bytes", snap.Store.Bytes(),
		"duration", time.Since(start),
	)
	return snap, nil
}

package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/reload"
)

// lateWatch is the file watch of the roots, set up once the first scan
// has been published: setting one up lists every folder of the tree and
// adds each to the kernel's watch list, which at 100,000 skills takes
// longer than a restart's whole scan, and readiness need not wait for
// it. A change made between the scan's read of a folder and the watch of
// it raises no event, so once the watch is in place the reloader
// verifies the tree (a full rescan that publishes only what differs); a
// change made after that raises its event.
type lateWatch struct {
	mu      sync.Mutex
	w       *reload.Watcher // nil until set up, and when unavailable
	rewatch bool            // a full rescan trigger came during the set-up
}

// start sets up the watch and runs it until ctx is done; on failure it
// logs that the watch is unavailable. Either way it then calls settled,
// which collects the garbage of the first scan (and of the verify), gives
// its pages back and puts the collector's configured target back.
func (l *lateWatch) start(ctx context.Context, cfg *config.Config, src catalog.Source, reloader *reload.Reloader, log *slog.Logger, settled func()) {
	begin := time.Now()
	w, err := reload.NewWatcher(reload.Roots{Skills: src.SkillsDir, Agents: src.AgentsDir}, reload.WatchTiming{Debounce: cfg.WatchDebounce, MaxWait: cfg.WatchMaxWait}, reloader, log)
	if err != nil {
		settled()
		log.Warn("file watch unavailable; reloads need SIGHUP, rescan_interval or POST /-/reload", "error", err, "duration", time.Since(begin))
		return
	}
	setUp := time.Since(begin)
	go w.Run(ctx)
	l.mu.Lock()
	l.w = w
	again := l.rewatch
	l.mu.Unlock()
	if again {
		// The set-up may have resolved the roots before the trigger's
		// change (a root deleted and created again).
		w.Rewatch(ctx)
	}
	snap, err := reloader.Wait(ctx, reloader.Verify())
	settled()
	if err != nil {
		return // logged by the reload, or shutting down
	}
	log.Info("file watch ready", "setup_duration", setUp, "duration", time.Since(begin), "generation", snap.Generation)
}

// Rewatch resolves the roots of the watch again, as a full rescan
// trigger (SIGHUP) should: a root that was gone and is back is watched
// again. During the set-up, the set-up does it once it is done.
func (l *lateWatch) Rewatch(ctx context.Context) {
	l.mu.Lock()
	w := l.w
	if w == nil {
		l.rewatch = true
	}
	l.mu.Unlock()
	if w != nil {
		w.Rewatch(ctx)
	}
}

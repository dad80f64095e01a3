package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skillserver/skillserver/internal/scan"
)

// oneSkillCatalog returns a catalog that has published a tree of one
// skill, a, and the tree's root.
func oneSkillCatalog(t *testing.T) (*Catalog, string) {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
	return newTestCatalog(t, Source{SkillsDir: root}, Options{}), root
}

// TestAbandonedReloadNeitherBlocksNorPublishes: a reload stuck in a
// system call (a hung NFS read) never returns, so it holds the claim on
// the catalog. A later reload waits for it only until its context is done;
// then it takes over, and the stuck one, if it ever returns, publishes
// nothing, so reloads never publish out of order.
func TestAbandonedReloadNeitherBlocksNorPublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, root := oneSkillCatalog(t)

		// The stuck reload: claimed, its scan never ends.
		stuckCtx, abandon := context.WithCancel(t.Context())
		stuck, err := c.claim(stuckCtx)
		if err != nil {
			t.Fatal(err)
		}
		defer close(stuck.done)

		writeFile(t, filepath.Join(root, "b", "SKILL.md"), skillMD("b"), 0o644)
		type result struct {
			snap *Snapshot
			err  error
		}
		later := make(chan result, 1)
		go func() {
			snap, err := c.Reload(t.Context())
			later <- result{snap, err}
		}()
		synctest.Wait()
		select {
		case r := <-later:
			t.Fatalf("a reload ran while another one was running and not abandoned: %v %v", r.snap, r.err)
		default:
		}

		abandon() // what internal/reload's watchdog does at reload_timeout
		r := <-later
		if r.err != nil {
			t.Fatalf("reload after the stuck one was abandoned: %v", r.err)
		}
		if _, ok := r.snap.Skill("b"); !ok || r.snap.Generation != 2 || c.Current() != r.snap {
			t.Fatalf("reload after the stuck one was abandoned published generation %d (skill b: %v), want 2 with b", r.snap.Generation, ok)
		}
		if stuck.cache == c.cache {
			t.Error("the abandoned reload still shares the scan cache, which it may write")
		}

		// The stuck scan returns at last, with what it read long ago.
		stale := &Snapshot{Generation: stuck.gen + 1}
		if snap, err := c.finish(stuck, ReloadResult{Snapshot: stale}, time.Now(), true); !errors.Is(err, ErrSuperseded) || snap != nil {
			t.Errorf("the abandoned reload's late result: %v, %v; want ErrSuperseded", snap, err)
		}
		if c.Current() != r.snap {
			t.Errorf("the abandoned reload's late result was published (generation %d) over generation 2", c.Current().Generation)
		}
		// The catalog stays usable.
		if snap, err := c.Reload(t.Context()); err != nil || snap.Generation != 3 {
			t.Errorf("next reload: generation %v, %v; want 3", snap, err)
		}
	})
}

// TestReloadWaitingForARunningOneCanBeCancelled: a reload queued behind a
// running one gives up when its own context is done.
func TestReloadWaitingForARunningOneCanBeCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := oneSkillCatalog(t)
		running, err := c.claim(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer close(running.done)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, err := c.Reload(ctx); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, scan.ErrScanFailed) {
			t.Errorf("queued reload whose context expired: %v, want a failed scan with context.DeadlineExceeded", err)
		}
		if c.Current().Generation != 1 {
			t.Errorf("generation %d, want 1", c.Current().Generation)
		}
	})
}

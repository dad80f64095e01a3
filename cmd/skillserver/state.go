package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/metrics"
	"github.com/skillserver/skillserver/internal/scan"
)

// scanCacheName is the state directory's folder of the persisted scan
// cache, beside content's blobs/.
const scanCacheName = "scan-cache"

// state is what serve keeps in state_dir: the blob folder and the scan
// cache (both nil when the bytes are held in memory).
type state struct {
	blobs *content.Dir
	cache *scan.Cache
}

func (s state) close() {
	if s.blobs != nil {
		_ = s.blobs.Close()
	}
}

// openState opens state_dir for src. An explicit folder that cannot be
// used is an error; "auto" falls back to memory, logged once.
func openState(cfg *config.Config, src catalog.Source, log *slog.Logger, m *metrics.Metrics) (state, error) {
	path, auto := cfg.StateDir, cfg.StateDir == config.StateDirAuto
	if auto {
		var err error
		if path, err = autoStateDir(src); err != nil {
			log.Warn("state_dir auto: no folder for it; the published bytes are held in memory", "error", err)
			return state{}, nil
		}
	}
	if path == "" {
		log.Info("state_dir is off: the published bytes are held in memory")
		return state{}, nil
	}
	report := func(f content.Fault) {
		m.ObserveBlobFault(f.Kind.String())
		switch f.Kind {
		case content.FaultWrite:
			log.Error("state_dir: cannot write blobs; holding them in memory until writes succeed again", "path", f.Path, "error", f.Err)
		default:
			log.Error("state_dir: a blob is not served: it does not match its digest or cannot be read; the next reload writes it again", "path", f.Path, "digest", f.Digest, "kind", f.Kind.String(), "error", f.Err)
		}
	}
	start := time.Now()
	// The scan cache is read while the blob folder is listed: neither
	// needs the other, and at 100,000 skills each takes a good part of a
	// restart. The cache read only reads, so it is harmless when the
	// folder turns out to be another process's (locked).
	type opened struct {
		cache *scan.Cache
		errs  []error
	}
	cached := make(chan opened, 1)
	stamp, err := scan.CacheStamp(src.Limits)
	if err != nil {
		log.Warn("state_dir: the scan cache is kept in memory only: the program cannot be read to stamp it", "error", err)
		cached <- opened{}
	} else {
		go func() {
			c, errs := scan.OpenCache(filepath.Join(path, scanCacheName), stamp)
			cached <- opened{c, errs}
		}()
	}
	dir, err := content.OpenDir(path, report)
	listed := time.Since(start)
	c := <-cached
	if err != nil {
		if auto {
			log.Warn("state_dir auto: the folder cannot be used; the published bytes are held in memory", "path", path, "error", err)
			return state{}, nil
		}
		return state{}, fmt.Errorf("state_dir %s: %w (make it writable, give each process its own, or set state_dir to \"\" to hold the bytes in memory)", path, err)
	}
	dir.SetHotBytes(cfg.BlobCacheBytes)
	for _, e := range c.errs {
		log.Warn("state_dir: part of the scan cache is not used", "error", e)
	}
	log.Info("state directory", "path", path, "blobs", dir.Len(), "cached_entries", c.cache.Len(),
		"list_duration", listed, "duration", time.Since(start))
	return state{blobs: dir, cache: c.cache}, nil
}

// settleGCPercent is the collector's target while the server settles:
// from a cold start until its first scan's garbage is collected (after
// the file watch's verify, see lateWatch), and from a restart's readiness
// until then. A scan's garbage (every file read, every archive deflated,
// the YAML parser's nodes, a verify's snapshot that is not published) is
// allocated among the records the snapshot keeps, in the same size
// classes. What a collection frees is filled again, but what the last
// one frees stays as holes in spans the snapshot still uses, which the
// runtime can neither move nor give back: the more garbage piles up
// between two collections, the more such holes (the YAML parser's nodes
// and reads, in the 160- and 32-byte classes, leave most of them). On
// 10,000 small skills, for a snapshot of 25 MB, the resident set once
// settled was 57,000 KiB at 10 and 15, 59,000-60,500 at 25; and the
// cold scan's peak is lower. The collector's work grows as the target
// falls: a cold start of 100,000 skills took about 70 s at 25 instead of
// 40-50 at 100 (docs/benchmarks.md, "With state_dir"). A GOGC set in the environment
// is the operator's choice, and is kept while the server settles.
//
// A restart collects at the configured target until it is ready: it
// reads no file, but decodes the scan cache's entries, which are garbage
// once scanned. It used to run at 400 there, which left a third more
// resident memory at 10,000 skills and was no faster at 100,000
// (docs/benchmarks.md).
const settleGCPercent = 15

// collectMoreWhileSettling lowers the collector's target to
// settleGCPercent, unless GOGC is set in the environment, and returns
// what puts the configured one back (safe to call more than once).
func collectMoreWhileSettling() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	prev := debug.SetGCPercent(settleGCPercent)
	return sync.OnceFunc(func() { debug.SetGCPercent(prev) })
}

// autoStateDir is state_dir "auto" for src: a folder per pair of roots
// under $XDG_STATE_HOME/skillserver, else ~/.local/state/skillserver.
func autoStateDir(src catalog.Source) (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		if home == "" || home == "/" {
			return "", errors.New("no home folder")
		}
		base = filepath.Join(home, ".local", "state")
	}
	var roots []string
	for _, r := range []string{src.SkillsDir, src.AgentsDir} {
		abs, err := filepath.Abs(r)
		if r == "" || err != nil {
			abs = r
		}
		roots = append(roots, abs)
	}
	sum := sha256.Sum256([]byte(roots[0] + "\x00" + roots[1]))
	return filepath.Join(base, "skillserver", hex.EncodeToString(sum[:8])), nil
}

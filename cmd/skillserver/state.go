package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
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
	dir, err := content.OpenDir(path, report)
	if err != nil {
		if auto {
			log.Warn("state_dir auto: the folder cannot be used; the published bytes are held in memory", "path", path, "error", err)
			return state{}, nil
		}
		return state{}, fmt.Errorf("state_dir %s: %w (make it writable, give each process its own, or set state_dir to \"\" to hold the bytes in memory)", path, err)
	}
	dir.SetHotBytes(cfg.BlobCacheBytes)
	st := state{blobs: dir}
	listed := time.Since(start)
	stamp, err := scan.CacheStamp(src.Limits)
	stamped := time.Since(start)
	if err != nil {
		log.Warn("state_dir: the scan cache is kept in memory only: the program cannot be read to stamp it", "error", err)
	} else {
		var errs []error
		st.cache, errs = scan.OpenCache(filepath.Join(path, scanCacheName), stamp)
		for _, e := range errs {
			log.Warn("state_dir: part of the scan cache is not used", "error", e)
		}
	}
	log.Info("state directory", "path", path, "blobs", dir.Len(), "cached_entries", st.cache.Len(),
		"list_duration", listed, "stamp_duration", stamped-listed, "duration", time.Since(start))
	return st, nil
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

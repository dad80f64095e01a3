//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The soak's flags, read once, and its log.

// config is the soak's flags.
type config struct {
	duration    time.Duration
	skills      int
	agents      int
	clients     int
	workers     int
	coldEvery   int
	conns       int
	loadRate    float64
	editEvery   time.Duration
	bigBytes    int
	sighupEvery time.Duration
	reloadEvery time.Duration
	sampleEvery time.Duration
	retention   time.Duration
	warmup      time.Duration
	maxSlope    float64
	maxGrowth   float64
	out         string
	csv         string
	keep        bool
	seed        uint64
	bin         string
}

var errUsage = errors.New("usage")

func parseConfig(args []string) (cfg config, help bool, err error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.DurationVar(&cfg.duration, "duration", 3*time.Minute, "how long the clients, load, editor and reloads run (30m for the long soak)")
	fs.IntVar(&cfg.skills, "skills", 2000, "skills in the generated tree (30% with resources, 10% versioned)")
	fs.IntVar(&cfg.agents, "agents", 0, "sub-agents in the generated tree (0: a tenth of --skills)")
	fs.IntVar(&cfg.clients, "clients", 4, "verifying sync clients, each syncing the RFC feed and the native tree in turn")
	fs.IntVar(&cfg.workers, "client-workers", 2, "requests each sync client has in flight at once")
	fs.IntVar(&cfg.coldEvery, "cold-every", 3, "every Nth pass of a sync client starts cold (no cached documents, every artifact downloaded again); the others revalidate")
	fs.IntVar(&cfg.conns, "connections", 16, "load generator connections (0: no load)")
	fs.Float64Var(&cfg.loadRate, "load-rate", 0, "most load generator requests per second, all connections together (0: as fast as they are answered)")
	fs.DurationVar(&cfg.editEvery, "edit-every", 2*time.Second, "time between two tree edits (0: no edits)")
	fs.IntVar(&cfg.bigBytes, "big-resource-bytes", 5<<20, "size of the large resource the editor adds (at most two live at once)")
	fs.DurationVar(&cfg.sighupEvery, "sighup-every", 15*time.Second, "time between two SIGHUPs to the server (0: none)")
	fs.DurationVar(&cfg.reloadEvery, "reload-every", 20*time.Second, "time between two POST /-/reload with the admin token (0: none)")
	fs.DurationVar(&cfg.sampleEvery, "sample-every", 5*time.Second, "time between two memory samples (RSS, heap) written to --csv")
	fs.DurationVar(&cfg.retention, "retention", 2*time.Minute, "the server's retention window (its retention key); a 404 for something a document advertised less than this ago is a broken promise")
	fs.DurationVar(&cfg.warmup, "warmup", 0, "the memory trend is judged from the later of this and half of --duration, but at least over the last quarter of the run (0: --retention plus 30s, when what retention holds has levelled off)")
	fs.Float64Var(&cfg.maxSlope, "max-rss-slope", 2, "fail when RSS rises faster than this many MiB per minute over the judged window (least-squares slope; judged when the window spans 5 minutes or more)")
	fs.Float64Var(&cfg.maxGrowth, "max-rss-growth", 1.5, "fail when RSS at the end of the judged window is more than this times RSS at its start (medians of its last and first quarter)")
	fs.StringVar(&cfg.out, "out", "", "folder for server.log, memory.csv, failures.log and summary.txt (default: a new folder under $TMPDIR)")
	fs.StringVar(&cfg.csv, "csv", "", "the memory samples' CSV file (default: memory.csv in --out)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the generated tree and the server binary (in a work-* folder of --out)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the editor's choices")
	fs.StringVar(&cfg.bin, "bin", "", "soak this skillserver binary instead of building ./cmd/skillserver of the checkout")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: soak [flags]\n\n"+
			"Serves a generated tree with skillserver on 127.0.0.1 for --duration under verifying sync\n"+
			"clients, load, tree edits and reloads; samples its memory; prints a summary and exits 1 on\n"+
			"any failure (docs/benchmarks.md, \"Soak\").\n\nflags:\n")
		fs.PrintDefaults()
	}
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return cfg, true, nil
	case err != nil:
		return cfg, false, errUsage
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if cfg.agents == 0 {
		cfg.agents = max(cfg.skills/10, 1)
	}
	switch {
	case cfg.duration <= 0:
		return cfg, false, fmt.Errorf("%w: --duration must be positive", errUsage)
	case cfg.skills < 20:
		return cfg, false, fmt.Errorf("%w: --skills must be at least 20", errUsage)
	case cfg.clients < 0 || cfg.conns < 0 || cfg.workers < 1 || cfg.coldEvery < 1:
		return cfg, false, fmt.Errorf("%w: --clients and --connections must be at least 0, --client-workers and --cold-every at least 1", errUsage)
	case cfg.retention <= 0:
		return cfg, false, fmt.Errorf("%w: --retention must be positive: the soak checks its promise", errUsage)
	case cfg.sampleEvery <= 0:
		return cfg, false, fmt.Errorf("%w: --sample-every must be positive", errUsage)
	case cfg.bigBytes < 1:
		return cfg, false, fmt.Errorf("%w: --big-resource-bytes must be positive", errUsage)
	case cfg.maxSlope <= 0 || cfg.maxGrowth <= 1:
		return cfg, false, fmt.Errorf("%w: --max-rss-slope must be positive and --max-rss-growth above 1", errUsage)
	}
	if cfg.warmup == 0 {
		cfg.warmup = cfg.retention + 30*time.Second
	}
	return cfg, false, nil
}

// outDir makes the output folder: --out, or a new one under $TMPDIR.
func outDir(cfg config) (string, error) {
	if cfg.out == "" {
		return os.MkdirTemp("", "skillserver-soak-")
	}
	dir, err := filepath.Abs(cfg.out)
	if err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
}

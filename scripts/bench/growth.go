//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/skill"
	"github.com/skillserver/skillserver/scripts/internal/product"
)

// growthRow is one tree size's figures.
type growthRow struct {
	tree                 *benchtree.Tree
	ready, scan, sha     time.Duration
	watch                time.Duration // from the start until the watch is ready or unavailable
	watched              bool          // the watch is ready (not over the kernel's limit)
	rss, peakRSS         int64         // once the watch is settled; the most during the cold scan
	index, indexGzip     int
	ours, nginx          float64
	update, updateReload time.Duration
	rescan, rescanReload time.Duration
	// stat is find's time to print every file's size, time and inode:
	// the floor of a restart, which must stat every file.
	stat             time.Duration
	restart          time.Duration
	restartWatch     time.Duration
	restartRSS       int64
	restartFilesRead int
	restartZipsBuilt int
}

func runGrowth(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("growth", flag.ContinueOnError)
	sizes := fs.String("sizes", "100,1000,10000,100000", "comma-separated skill counts (agents: a tenth of each)")
	duration := fs.Duration("duration", 5*time.Second, "length of each wrk run of the RFC index (whole seconds; 0 skips the rate)")
	conns := fs.Int("connections", 32, "wrk connections (-c)")
	trees := fs.String("trees", filepath.Join(os.TempDir(), "skillserver-bench-growth"), "folder of the generated trees, reused across runs")
	resKiB := fs.String("resource-kib", "", "min,max size of each resource file in KiB (default 1,32)")
	maxReady := fs.Duration("max-ready", 20*time.Minute, "longest a cold start may take before the size is given up")
	keep := fs.Bool("keep", false, "keep the work directory (logs, mirror, nginx prefix, state directories)")
	bigMiB := fs.Int("big-file-mib", 0, "also serve one skill holding a resource of this many MiB to 8 clients at once and report how much RSS grows (0: skip)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: bench growth [flags]\n\n"+
			"For each tree size: cold start to ready, RSS, RFC index size and its 200 rate against nginx,\n"+
			"one skill's update through the file watch, a full rescan (SIGHUP), and sha256sum -P$(nproc)\n"+
			"over the same files.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	var spec benchtree.Spec
	if *resKiB != "" {
		lo, hi, ok := strings.Cut(*resKiB, ",")
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("%w: --resource-kib %q: want min,max", errUsage, *resKiB)
		}
		spec.MinResource, spec.MaxResource = a<<10, b<<10
	}
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			return fmt.Errorf("%w: --sizes %q: want skill counts of at least 10", errUsage, *sizes)
		}
		ns = append(ns, n)
	}
	work, cleanup, err := workDir("skillserver-bench-growth-", *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	bin, err := product.Build(ctx, work)
	if err != nil {
		return err
	}
	if *bigMiB > 0 {
		if err := bigFile(ctx, bin, *trees, work, *bigMiB, *maxReady); err != nil {
			return err
		}
	}
	var rows []growthRow
	loads := []string{loadavg()}
	for _, n := range ns {
		spec.Skills, spec.Agents = n, max(n/10, 1)
		name := strconv.Itoa(n)
		if spec.MinResource != 0 {
			name += fmt.Sprintf("-res%d-%d", spec.MinResource>>10, spec.MaxResource>>10)
		}
		start := time.Now()
		t, generated, err := benchtree.OpenOrGenerateSpec(filepath.Join(*trees, name), spec)
		if err != nil {
			return err
		}
		if generated {
			logf("generated %s in %v: %d files, %d bytes", t.Dir, time.Since(start).Round(time.Millisecond), t.Files, t.Bytes)
		}
		dir := filepath.Join(work, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		row, err := growthOf(ctx, bin, t, dir, *duration, *conns, *maxReady)
		if err != nil {
			return fmt.Errorf("%d skills: %w", n, err)
		}
		rows = append(rows, row)
		loads = append(loads, loadavg())
		printGrowth(rows, loads, *duration, *conns)
	}
	return nil
}

func printGrowth(rows []growthRow, loads []string, d time.Duration, conns int) {
	fmt.Printf("\nhow cost grows; RFC index rate: wrk -t1 -c%d -d%ds; update: one SKILL.md rewritten, until served (watch, watch_debounce included); rescan: SIGHUP until the new generation; restart: SIGTERM, then a new process over the same tree and state_dir until /readyz; watch: from the start until the file watch is set up and has verified the tree (RSS is taken then); stat: find -printf '%%s %%T@ %%i' over the tree\n", conns, int(d.Seconds()))
	fmt.Printf("load average (1, 5, 15 min) before the first size and after each: %s\n\n", strings.Join(loads, " | "))
	fmt.Println("| skills | agents | files | tree bytes | sha256sum -P s | scan s | scan/sha | ready s | watch s | RSS bytes | peak RSS (scan) | RSS/tree | index bytes | index gzip | ours req/s | nginx req/s | ratio | update ms (reload) | rescan ms (reload) | stat s | restart s | restart/stat | restart watch s | restart RSS | restart files read, archives built |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio := "-"
		if r.nginx > 0 {
			ratio = fmt.Sprintf("%.2f", r.ours/r.nginx)
		}
		fmt.Printf("| %d | %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %s | %d | %d | %.2f | %d | %d | %.0f | %.0f | %s | %s | %.0f (%.1f) | %.2f | %.2f | %.2f | %s | %d | %d, %d |\n",
			r.tree.Skills, r.tree.Agents, r.tree.Files, r.tree.Bytes, r.sha.Seconds(), r.scan.Seconds(), r.scan.Seconds()/r.sha.Seconds(),
			r.ready.Seconds(), watchS(r.watch, r.watched), r.rss, r.peakRSS, float64(r.rss)/float64(r.tree.Bytes), r.index, r.indexGzip, r.ours, r.nginx, ratio,
			updateMS(r), ms(r.rescan), ms(r.rescanReload),
			r.stat.Seconds(), r.restart.Seconds(), r.restart.Seconds()/r.stat.Seconds(), watchS(r.restartWatch, r.watched), r.restartRSS, r.restartFilesRead, r.restartZipsBuilt)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// watchS is the watch column: seconds, marked when the watch was
// unavailable (its set-up ended at the kernel's watch limit).
func watchS(d time.Duration, watched bool) string {
	if !watched {
		return fmt.Sprintf("%.2f (no watch)", d.Seconds())
	}
	return fmt.Sprintf("%.2f", d.Seconds())
}

func updateMS(r growthRow) string {
	if r.update < 0 {
		return "no watch"
	}
	return fmt.Sprintf("%.0f (%.1f)", ms(r.update), ms(r.updateReload))
}

func growthOf(ctx context.Context, bin string, t *benchtree.Tree, dir string, d time.Duration, conns int, maxReady time.Duration) (growthRow, error) {
	row := growthRow{tree: t}
	var err error
	// sha256sum first, so the files are in the page cache for both.
	if row.sha, err = sha256All(ctx, t); err != nil {
		return row, err
	}
	if row.sha, err = sha256All(ctx, t); err != nil {
		return row, err
	}
	readyCtx, cancel := context.WithTimeout(ctx, maxReady)
	// base_url, as in production: without it (or allowed_hosts) documents
	// are kept for a host only within document_cache_max_bytes (32 MiB),
	// and the RFC index of 100,000 skills alone is larger.
	// Each size starts from an empty state directory of its own.
	args := func(base string) []string {
		return []string{"--watch=true", "--base-url", base, "--state-dir", filepath.Join(dir, "state")}
	}
	srv, ready, err := startServer(readyCtx, bin, t, dir, args)
	cancel()
	if err != nil {
		return row, err
	}
	defer func() { srv.stop(syscall.SIGTERM) }()
	row.ready = ready
	if row.watch, row.watched, err = srv.watchSettled(ctx, maxReady); err != nil {
		return row, err
	}
	if row.rss, err = rssBytes(srv.pid()); err != nil {
		return row, err
	}
	if row.peakRSS, err = peakRSSBytes(srv.pid()); err != nil {
		return row, err
	}
	if _, row.scan, err = reloads(srv.logPath, true); err != nil {
		return row, err
	}
	index := feed.DocKey{Kind: feed.DocRFCIndex}.Path()
	plain, err := get(srv.base + index)
	if err != nil || plain.status != 200 {
		return row, fmt.Errorf("GET %s: %d %v", index, plain.status, err)
	}
	gz, err := get(srv.base+index, "Accept-Encoding: gzip")
	if err != nil || gz.encoding != "gzip" {
		return row, fmt.Errorf("GET %s with gzip: %q %v", index, gz.encoding, err)
	}
	row.index, row.indexGzip = len(plain.body), len(gz.body)
	logf("%d skills: ready in %v, scan %v, RSS %d, index %d bytes", t.Skills, ready.Round(time.Millisecond), row.scan.Round(time.Millisecond), row.rss, row.index)

	if d > 0 {
		mirror := filepath.Join(dir, "mirror", filepath.FromSlash(strings.TrimPrefix(index, "/")))
		if err := os.MkdirAll(filepath.Dir(mirror), 0o755); err != nil {
			return row, err
		}
		if err := os.WriteFile(mirror, plain.body, 0o644); err != nil {
			return row, err
		}
		ng, ngBase, err := startNginx(ctx, filepath.Join(dir, "mirror"), dir)
		if err != nil {
			return row, err
		}
		if row.ours, _, err = wrk(ctx, srv.base+index, conns, d, nil); err == nil {
			row.nginx, _, err = wrk(ctx, ngBase+index, conns, d, nil)
		}
		ng.stop(syscall.SIGQUIT)
		if err != nil {
			return row, err
		}
	}

	// One skill rewritten: the file watch reloads that entry alone. A
	// watch that could not be set up (the inotify limit) has no latency.
	restart := func(row growthRow, err error) (growthRow, error) {
		if err != nil {
			return row, err
		}
		return restartOf(ctx, bin, t, dir, &srv, row, args, maxReady)
	}
	if !row.watched {
		logf("%d skills: no file watch (see %s), no update latency", t.Skills, srv.logPath)
		row.update, row.updateReload = -1, -1
		return restart(rescan(ctx, srv, row, maxReady))
	}
	md := filepath.Join(t.Dir, "skills", t.TouchPlain, skill.FileName)
	orig, err := os.ReadFile(md)
	if err != nil {
		return row, err
	}
	defer os.WriteFile(md, orig, 0o644)
	latest := srv.base + "/.well-known/agent-skills/" + t.TouchPlain + "/" + skill.FileName
	changed := append(append([]byte(nil), orig...), fmt.Sprintf("\nrevision %d\n", time.Now().UnixNano())...)
	partials, _, _ := reloads(srv.logPath, false)
	begin := time.Now()
	if err := os.WriteFile(md, changed, 0o644); err != nil {
		return row, err
	}
	if err := waitUntil(ctx, 2*time.Minute, func() bool {
		f, err := get(latest)
		return err == nil && f.status == 200 && string(f.body) == string(changed)
	}); err != nil {
		return row, fmt.Errorf("the rewritten %s was not served: %w", md, err)
	}
	row.update = time.Since(begin)
	if row.updateReload, err = nextReload(ctx, srv.logPath, false, partials); err != nil {
		return row, err
	}

	return restart(rescan(ctx, srv, row, maxReady))
}

// restartOf stops the server and starts a new one over the same tree
// and state directory, and measures it against the stat floor: find
// printing every file's size, modification time and inode, run just
// before on the same page cache.
func restartOf(ctx context.Context, bin string, t *benchtree.Tree, dir string, srv **server, row growthRow, args func(string) []string, maxReady time.Duration) (growthRow, error) {
	(*srv).stop(syscall.SIGTERM)
	// The cold start wrote the state directory moments ago and nothing in
	// it is fsynced: the kernel may still be writing it back. A real
	// restart comes long after that, so flush it first, outside the time.
	if err := exec.CommandContext(ctx, "sync").Run(); err != nil {
		return row, fmt.Errorf("sync: %w", err)
	}
	var err error
	for range 2 { // the second run is the one kept: the files are in the page cache
		if row.stat, err = statAll(ctx, t); err != nil {
			return row, err
		}
	}
	readyCtx, cancel := context.WithTimeout(ctx, maxReady)
	defer cancel()
	again, ready, err := startServer(readyCtx, bin, t, dir, args)
	if err != nil {
		return row, err
	}
	*srv = again
	row.restart = ready
	if row.restartWatch, _, err = again.watchSettled(ctx, maxReady); err != nil {
		return row, err
	}
	if row.restartRSS, err = rssBytes(again.pid()); err != nil {
		return row, err
	}
	read, built, err := firstReload(again.logPath)
	if err != nil {
		return row, err
	}
	row.restartFilesRead, row.restartZipsBuilt = read, built
	logf("%d skills: restart ready in %v (stat floor %v), RSS %d, %d files read, %d archives built", t.Skills,
		ready.Round(time.Millisecond), row.stat.Round(time.Millisecond), row.restartRSS, read, built)
	return row, nil
}

// firstReload returns the files read and archives built by the first
// reload the log at logPath records.
func firstReload(logPath string) (read, built int, err error) {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Read  int    `json:"files_read"`
			Built int    `json:"archives_built"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "reload" {
			return rec.Read, rec.Built, nil
		}
	}
	return 0, 0, fmt.Errorf("%s has no reload line", logPath)
}

// statAll is the wall time of find printing the size, modification time
// and inode of every file of the tree: what a restart cannot do without.
func statAll(ctx context.Context, t *benchtree.Tree) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, "find", filepath.Join(t.Dir, "skills"), filepath.Join(t.Dir, "agents"), "-printf", "%s %T@ %i\n")
	cmd.Stderr = os.Stderr
	begin := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("find: %w", err)
	}
	return time.Since(begin), nil
}

// rescan measures a full rescan: SIGHUP until the next generation.
func rescan(ctx context.Context, srv *server, row growthRow, maxReady time.Duration) (growthRow, error) {
	gen, err := readyGeneration(srv.base)
	if err != nil {
		return row, err
	}
	fulls, _, _ := reloads(srv.logPath, true)
	begin := time.Now()
	if err := syscall.Kill(srv.pid(), syscall.SIGHUP); err != nil {
		return row, err
	}
	if err := waitUntil(ctx, maxReady, func() bool {
		g, err := readyGeneration(srv.base)
		return err == nil && g > gen
	}); err != nil {
		return row, fmt.Errorf("SIGHUP published no new generation: %w", err)
	}
	row.rescan = time.Since(begin)
	if row.rescanReload, err = nextReload(ctx, srv.logPath, true, fulls); err != nil {
		return row, err
	}
	return row, nil
}

// waitUntil polls cond every millisecond until it holds or limit passes.
func waitUntil(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// reloads counts the server's reload log lines of the kind asked for
// (full or partial) and returns the last one's duration.
func reloads(logPath string, full bool) (n int, last time.Duration, err error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Msg      string `json:"msg"`
			Full     bool   `json:"full"`
			Duration int64  `json:"duration"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "reload" && rec.Full == full {
			n, last = n+1, time.Duration(rec.Duration)
		}
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("%s has no reload line (full %v)", logPath, full)
	}
	return n, last, sc.Err()
}

// nextReload waits for a reload line after the first seen ones (the log
// is written in the background, a little after the snapshot is
// published) and returns its duration.
func nextReload(ctx context.Context, logPath string, full bool, seen int) (time.Duration, error) {
	var last time.Duration
	err := waitUntil(ctx, time.Minute, func() bool {
		n, d, err := reloads(logPath, full)
		last = d
		return err == nil && n > seen
	})
	if err != nil {
		return 0, fmt.Errorf("no new reload line (full %v) in %s: %w", full, logPath, err)
	}
	return last, nil
}

// sha256All is the wall time of sha256sum over the tree's files on every
// core: find -print0 | xargs -0 -P$(nproc) sha256sum.
func sha256All(ctx context.Context, t *benchtree.Tree) (time.Duration, error) {
	script := fmt.Sprintf("find %q %q -type f -print0 | xargs -0 -P%d sha256sum > /dev/null",
		filepath.Join(t.Dir, "skills"), filepath.Join(t.Dir, "agents"), runtime.NumCPU())
	begin := time.Now()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("sha256sum: %w", err)
	}
	return time.Since(begin), nil
}

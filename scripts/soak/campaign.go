//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/scripts/internal/product"
)

// defaultRetentionMaxBytes is the server's retention_max_bytes, which
// the soak leaves at its default.
const defaultRetentionMaxBytes = 256 << 20

func runCampaign(ctx context.Context, cfg config) error {
	out, err := outDir(cfg)
	if err != nil {
		return err
	}
	csvPath := filepath.Join(out, "memory.csv")
	if cfg.csv != "" {
		if csvPath, err = filepath.Abs(cfg.csv); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp(out, "work-")
	if err != nil {
		return err
	}
	if cfg.keep {
		logf("work folder (tree and binary) kept: %s", work)
	} else {
		defer os.RemoveAll(work)
	}

	start := time.Now()
	t, _, err := benchtree.OpenOrGenerateSpec(filepath.Join(work, "tree"), benchtree.Spec{Skills: cfg.skills, Agents: cfg.agents})
	if err != nil {
		return err
	}
	logf("generated the tree in %v: %d skills (%d with resources, %d versioned), %d sub-agents, %d files, %d bytes",
		time.Since(start).Round(time.Millisecond), t.Skills, t.SkillsWithResources, t.VersionedSkills, t.Agents, t.Files, t.Bytes)
	bin := cfg.bin
	if bin == "" {
		if bin, err = product.Build(ctx, work); err != nil {
			return err
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	token, err := adminToken()
	if err != nil {
		return err
	}
	logPath := filepath.Join(out, "server.log")
	started := time.Now()
	srv, err := startServer(bin, t.Dir, logPath, token, cfg.retention)
	if err != nil {
		return err
	}
	stopped := false
	var stopErr error
	stopServer := func() {
		if !stopped {
			stopped = true
			stopErr = srv.stop()
		}
	}
	defer stopServer()
	logf("started skillserver (pid %d) at %s; its log: %s", srv.pid(), srv.base, logPath)
	if err := srv.waitReady(ctx, 10*time.Minute); err != nil {
		return err
	}
	ready := time.Now()
	logf("ready in %v", ready.Sub(started).Round(time.Millisecond))

	fails, err := newFailures(filepath.Join(out, "failures.log"))
	if err != nil {
		return err
	}
	defer fails.close()
	runCtx, endRun := context.WithTimeout(ctx, cfg.duration)
	defer endRun()
	s := &soak{base: srv.base, window: cfg.retention, run: runCtx, hard: ctx,
		gens: newGenTracker(srv.base), edits: newEditLog(), fails: fails}

	// Watchers run until everything else has stopped.
	watchCtx, endWatch := context.WithCancel(context.Background())
	defer endWatch()
	var watchers sync.WaitGroup
	watchers.Go(func() { s.gens.poll(watchCtx, 50*time.Millisecond) })
	genReady, err := s.gens.observe(ctx)
	if err != nil {
		return err
	}
	watchers.Go(func() {
		select {
		case <-srv.done:
			if runCtx.Err() == nil {
				fails.report("server", classServer, srv.base, fmt.Sprintf("skillserver exited during the soak: %v (log: %s)", srv.err, logPath))
				endRun()
			}
		case <-watchCtx.Done():
		}
	})

	targets, err := initialTargets(s, srv.base)
	if err != nil {
		return err
	}
	ed, err := newEditor(s.edits, t.Dir, []string{targets.archiveName, targets.skillMDName}, cfg.bigBytes, cfg.seed)
	if err != nil {
		return err
	}

	csvFile, err := os.Create(csvPath)
	if err != nil {
		return err
	}
	defer csvFile.Close()
	if _, err := csvFile.WriteString(csvHeader); err != nil {
		return err
	}
	var samplesMu sync.Mutex
	var samples []sample
	metricsClient := &http.Client{Timeout: 30 * time.Second}
	takeOne := func() metrics {
		samplesMu.Lock()
		defer samplesMu.Unlock()
		// Not ctx: the last sample is taken after a Ctrl-C too.
		smp, m := takeSample(context.Background(), metricsClient, srv, ready, s.requests())
		if smp.retained >= defaultRetentionMaxBytes*8/10 {
			s.boundNear.Store(true)
		}
		samples = append(samples, smp)
		if _, err := csvFile.WriteString(smp.csv()); err != nil {
			fails.report("sampler", classHarness, csvPath, err.Error())
		}
		return m
	}
	atReady := takeOne()
	watchers.Go(func() {
		tick := time.NewTicker(cfg.sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
				takeOne()
			}
		}
	})

	logf("soaking for %v: %d sync clients, %d load connections, an edit every %v, SIGHUP every %v, POST /-/reload every %v; memory samples: %s",
		cfg.duration, cfg.clients, cfg.conns, cfg.editEvery, cfg.sighupEvery, cfg.reloadEvery, csvPath)
	var workers sync.WaitGroup
	for range cfg.clients {
		c := newSyncer(s, cfg.workers)
		workers.Go(func() { c.loop(cfg.coldEvery) })
	}
	if cfg.conns > 0 {
		workers.Go(func() { runLoad(s, targets, cfg.conns, cfg.loadRate) })
	}
	if cfg.editEvery > 0 {
		workers.Go(func() { ed.loop(s, cfg.editEvery) })
	}
	var reloads reloadStats
	workers.Go(func() { reloads = runReloads(s, srv, cfg) })
	watchers.Go(func() { progress(runCtx, s, cfg.duration) })

	<-runCtx.Done()
	ran := time.Since(ready)
	logf("time is up; waiting for requests in flight")
	workers.Wait()
	final := takeOne()
	endWatch()
	watchers.Wait()
	stopServer()
	interrupted := ctx.Err() != nil
	if stopErr != nil {
		fails.report("server", classServer, srv.base, "on SIGTERM: "+stopErr.Error())
	}
	if n := final.sum("skillserver_http_requests_total", `code="5`) - atReady.sum("skillserver_http_requests_total", `code="5`); n > 0 {
		fails.report("server", classServer, srv.base, fmt.Sprintf("%d 5xx answers since ready (skillserver_http_requests_total)", n))
	}
	if p := final.int("skillserver_http_panics_total"); p > 0 {
		fails.report("server", classServer, srv.base, fmt.Sprintf("%d handler panics (skillserver_http_panics_total)", p))
	}
	if f := final.int(`skillserver_reload_total{result="failure"}`); f > 0 {
		fails.report("server", classServer, srv.base, fmt.Sprintf("%d failed reloads (skillserver_reload_total)", f))
	}
	slines, err := scanLog(logPath)
	if err != nil {
		fails.report("server", classServer, logPath, err.Error())
	}
	for msg, n := range slines.errors {
		fails.report("server", classServer, logPath, fmt.Sprintf("%d ERROR lines %q", n, msg))
	}
	if slines.notJSON > 0 {
		fails.report("server", classServer, logPath, fmt.Sprintf("%d lines that are not JSON log records, the first: %s", slines.notJSON, slines.firstBad))
	}
	from, cut := judgedFrom(cfg)
	mem := judgeMemory(samples, from, cfg.maxSlope, cfg.maxGrowth)
	if cut {
		mem.note = strings.TrimSpace(fmt.Sprintf("The warm-up (%v) is not over before the last quarter of the run: only that quarter is judged, while what retention holds may still be growing. %s", cfg.warmup, mem.note))
	}
	for _, p := range mem.problems {
		fails.report("memory", classMemory, csvPath, p)
	}
	r := &result{cfg: cfg, tree: t, out: out, csv: csvPath, base: srv.base, pid: srv.pid(), ready: ready, ran: ran, interrupted: interrupted,
		targets: targets, s: s, reloads: reloads, genReady: int64(genReady), atReady: atReady, final: final, stopErr: stopErr, log: slines,
		mem: mem, samples: len(samples)}
	var b strings.Builder
	printSummary(&b, r)
	fmt.Print("\n" + b.String())
	if err := os.WriteFile(filepath.Join(out, "summary.txt"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	switch {
	case interrupted:
		return errors.New("interrupted")
	case fails.all() > 0:
		return fmt.Errorf("%d failures (%s)", fails.all(), filepath.Join(out, "failures.log"))
	}
	return nil
}

// judgedFrom is where the memory trend's window starts: the later of
// the warm-up and half the run, but no later than the last quarter of
// the run (cut is then true).
func judgedFrom(cfg config) (from time.Duration, cut bool) {
	from = max(cfg.warmup, cfg.duration/2)
	if last := cfg.duration * 3 / 4; from > last {
		return last, true
	}
	return from, false
}

// initialTargets reads the RFC index once to choose the load
// generator's stable skills.
func initialTargets(s *soak, base string) (loadTargets, error) {
	hc := newHTTPClient(1)
	a, ok := s.get(hc, kindLoad, base+"/.well-known/agent-skills/index.json")
	if !ok || a.status != http.StatusOK {
		return loadTargets{}, fmt.Errorf("the RFC index answered %d", a.status)
	}
	var idx struct {
		Skills []check.RFCEntry `json:"skills"`
	}
	if err := json.Unmarshal(a.body, &idx); err != nil {
		return loadTargets{}, fmt.Errorf("the RFC index: %w", err)
	}
	return pickTargets(base, idx.Skills)
}

// runReloads sends SIGHUP to the server's pid and POSTs /-/reload with
// the admin token, each on its own period, until the soak's time is up.
func runReloads(s *soak, srv *server, cfg config) reloadStats {
	var r reloadStats
	var hup, post <-chan time.Time
	if cfg.sighupEvery > 0 {
		t := time.NewTicker(cfg.sighupEvery)
		defer t.Stop()
		hup = t.C
	}
	if cfg.reloadEvery > 0 {
		t := time.NewTicker(cfg.reloadEvery)
		defer t.Stop()
		post = t.C
	}
	hc := &http.Client{Timeout: 3 * time.Minute}
	for {
		select {
		case <-s.run.Done():
			return r
		case <-hup:
			if err := syscall.Kill(srv.pid(), syscall.SIGHUP); err != nil {
				s.fails.report("reloader", classServer, srv.base, "SIGHUP: "+err.Error())
				continue
			}
			r.sighups++
		case <-post:
			r.posts++
			if err := postReload(s, hc, srv); err != nil {
				if s.hard.Err() == nil {
					s.fails.report("reloader", classAdmin, srv.base+"/-/reload", err.Error())
				}
				continue
			}
			r.postsOK++
		}
	}
}

func postReload(s *soak, hc *http.Client, srv *server) error {
	req, err := http.NewRequestWithContext(s.hard, http.MethodPost, srv.base+"/-/reload", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+srv.token)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Generation uint64 `json:"generation"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("answered %d", resp.StatusCode)
	case err != nil || body.Generation == 0:
		return fmt.Errorf("answered 200 without a generation: %v", err)
	}
	return nil
}

// progress logs a line a minute while the soak runs.
func progress(ctx context.Context, s *soak, d time.Duration) {
	start := time.Now()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			logf("%v of %v: %d requests, %d edits, %d failures", time.Since(start).Round(time.Second), d,
				s.requests(), s.edits.total(), s.fails.all())
		}
	}
}

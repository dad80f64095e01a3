package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/httpapi"
	"github.com/skillserver/skillserver/internal/mcpapi"
	"github.com/skillserver/skillserver/internal/metrics"
	"github.com/skillserver/skillserver/internal/reload"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
	"github.com/skillserver/skillserver/internal/throttle"
	"github.com/skillserver/skillserver/internal/transport"
)

// source turns the configured directories into a catalog.Source: a missing
// default directory means none of that kind, a missing configured one is an
// error.
func source(cfg *config.Config) (catalog.Source, error) {
	src := catalog.Source{PageSize: cfg.PageSize, Provenance: cfg.Provenance, Server: feed.ServerInfo{
		Name: cfg.ServerName, Description: cfg.ServerDesc, Version: build().Version, Publisher: cfg.CatalogPub,
	}, Limits: scan.Limits{
		MaxFileBytes: cfg.MaxFileBytes, MaxFiles: cfg.MaxFiles, MaxTotalBytes: cfg.MaxTotalBytes, MaxFolderDepth: cfg.MaxFolderDepth,
		Frontmatter: skill.Limits{
			MaxFrontmatterBytes: cfg.MaxFrontmatterBytes, MaxKeys: cfg.MaxFrontmatterKeys,
			MaxListItems: cfg.MaxListItems, MaxValueChars: cfg.MaxValueChars, MaxTagChars: cfg.MaxTagChars,
			MaxDepth: cfg.MaxFrontmatterDepth, MaxValueProblems: cfg.MaxValueProblems,
		},
	}}
	if cfg.ServerLogo != "" {
		logo, typ, err := readLogo(cfg.ServerLogo)
		if err != nil {
			return src, err
		}
		src.Server.Logo, src.Server.LogoType = logo, typ
	}
	resolve := func(key, dir string, explicit bool) (string, error) {
		ok, err := scan.DirExists(dir)
		switch {
		case err != nil:
			return "", fmt.Errorf("%s: %w", key, err)
		case ok:
			return dir, nil
		case explicit:
			return "", fmt.Errorf("%w: %s directory %q does not exist", config.ErrUsage, key, dir)
		}
		return "", nil
	}
	var err error
	if src.SkillsDir, err = resolve("skills", cfg.Skills, cfg.SkillsExplicit); err != nil {
		return src, err
	}
	if src.AgentsDir, err = resolve("agents", cfg.Agents, cfg.AgentsExplicit); err != nil {
		return src, err
	}
	return src, nil
}

// newLogger returns the logger of cfg writing to w, through a logWriter
// unless log_buffer_bytes is 0, and the request log's encoder of the same
// lines on the same output; close writes out what it holds.
func newLogger(cfg *config.Config, w io.Writer) (log *slog.Logger, requests *transport.RequestLog, close func()) {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	format := cfg.LogFormat
	if format == "auto" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	close = func() {}
	if cfg.LogBufferBytes > 0 {
		lw := newLogWriter(w, cfg.LogBufferBytes)
		w, close = lw, func() { _ = lw.Close() }
	}
	requests = &transport.RequestLog{Out: w, Text: format == "text"}
	if requests.Text {
		return slog.New(slog.NewTextHandler(w, opts)), requests, close
	}
	return slog.New(slog.NewJSONHandler(w, opts)), requests, close
}

// readyKey carries, in serve's context, a function told the listener's
// address once /readyz answers 200: how an in-process caller (the tests)
// learns what serve otherwise only logs.
type readyKey struct{}

// serve runs the HTTP server until ctx is cancelled or SIGINT/SIGTERM.
func serve(ctx context.Context, cfg *config.Config, stderr io.Writer) error {
	log, requestLog, closeLog := newLogger(cfg, stderr)
	if cfg.MetricsPprof {
		profileAllocations()
	}
	defer closeLog()
	src, err := source(cfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// runCtx outlives the signal: the reloader, the watch and requests run
	// until serve returns, after the drain.
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()

	bi := build()
	m := metrics.New(metrics.Build{Version: build().Version, Commit: commit, GoVersion: runtime.Version(), KernelBytes: transport.KernelBytes})
	st, err := openState(cfg, src, log, m)
	if err != nil {
		return err
	}
	// A cold start settles from here; a restart, which reads no file,
	// gets ready at the configured collector target first.
	restoreGC := func() {}
	restarting := st.cache.Len() > 0
	if !restarting {
		restoreGC = collectMoreWhileSettling()
	}
	defer func() { restoreGC() }()
	defer st.close()
	cat := catalog.New(src, log, catalog.Options{Retention: cfg.Retention, RetentionMaxBytes: cfg.RetentionBytes, Blobs: st.blobs, Cache: st.cache,
		DocumentCacheBytes: cfg.DocCacheBytes, OnReload: func(res catalog.ReloadResult) { m.ObserveReload(reloadFigures(res)) },
		OnRetention: func(st catalog.RetentionStats) { m.ObserveRetention(retainedFigures(st)) }})
	reloader := reload.New(cat, log, reload.Options{Timeout: cfg.ReloadTimeout, MaxAbandoned: cfg.ReloadAbandoned, Observer: m})
	apiOpts := httpapi.Options{
		BaseURL:               cfg.BaseURL,
		TrustProxy:            cfg.TrustProxy,
		AllowedHosts:          cfg.AllowedHosts,
		CORSAllowOrigin:       cfg.CORSAllowOrigin,
		Build:                 bi,
		AdminToken:            cfg.AdminToken,
		Reloader:              reloader,
		Observer:              m,
		ReadBodyTimeout:       cfg.ReadBodyTO,
		WriteStallTimeout:     cfg.WriteStallTO,
		MaxRanges:             cfg.MaxRanges,
		CataloguePageSize:     cfg.CataloguePage,
		CatalogueViewMaxBytes: cfg.CatalogueView,
		MaxSearchResults:      cfg.MaxSearchResults,
		MaxUpdateChecks:       cfg.MaxUpdateChecks,
		MaxBodyBytes:          cfg.MaxBodyBytes,
		MaxQueryBytes:         cfg.MaxQueryBytes,
		RequestLog:            requestLog,
		MCP: mcpapi.Options{Name: cfg.ServerName, Version: bi.Version, PageSize: cfg.MCPPageSize,
			MaxRequestBytes: cfg.MCPMaxRequest, MaxBatch: cfg.MCPMaxBatch, MaxFileBytes: cfg.MCPMaxFileBytes,
			TTL: feed.ShortLifetime, Observer: m, Log: log},
	}
	if cfg.MetricsListen == "" {
		apiOpts.Metrics = m.Handler()
	}
	if cfg.AuthFailures > 0 {
		apiOpts.AuthFailures = throttle.New(cfg.AuthFailures, throttle.MaxKeys)
	}
	var tokens *access.File
	if cfg.ReadTokensFile != "" {
		if tokens, err = access.Open(cfg.ReadTokensFile); err != nil {
			return fmt.Errorf("read_tokens_file: %w", err)
		}
		apiOpts.ReadTokens = tokens
		log.Info("read tokens", "file", tokens.Path(), "tokens", tokens.Tokens().Names())
	}
	api := httpapi.NewServer(cat, apiOpts, log)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	limits := transport.ConnLimits{
		MaxConns:          maxConnections(cfg.MaxConnections, fdHeadroom(cfg)),
		ReadHeaderTimeout: cfg.ReadHeaderTO,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		Evicted:           m.ObserveEviction,
		TransferEncoded:   m.ObserveTransferEncoded,
	}
	httpServer, ln := transport.NewHTTPServer(api, ln, limits, slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	// Requests must not see the shutdown signal: they keep working
	// through shutdown_delay and the drain.
	httpServer.BaseContext = func(net.Listener) context.Context { return runCtx }
	serveErr := make(chan error, 2)
	go func() { serveErr <- httpServer.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "catalogue", catalogueURL(cfg.BaseURL, ln.Addr()), "skills", src.SkillsDir, "agents", src.AgentsDir, "version", bi.Version)
	if cfg.MetricsListen != "" {
		mln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			shutdown(httpServer, cfg.ShutdownTimeout, log)
			return fmt.Errorf("listen for metrics: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		if cfg.MetricsPprof {
			mountProfiles(mux)
		}
		// Scrapers are few: a small cap of its own, within the headroom
		// maxConnections leaves.
		metricsLimits := limits
		metricsLimits.MaxConns = min(cfg.MetricsMaxConns, limits.MaxConns)
		metricsServer, mln := transport.NewHTTPServer(mux, mln, metricsLimits, slog.NewLogLogger(log.Handler(), slog.LevelWarn))
		go func() { serveErr <- metricsServer.Serve(mln) }()
		defer metricsServer.Close()
		log.Info("metrics listening", "addr", mln.Addr().String())
	}

	// Take SIGHUP from here on: its default action would end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	// The token file is re-read on SIGHUP and when it changes; a bad
	// reading keeps the tokens in force. A file that reads as it did the
	// time before is not logged again but on SIGHUP, where the operator
	// asked: the log says once per change what is in force.
	reloadTokens := func(bool) {}
	if tokens != nil {
		reloadTokens = func(asked bool) {
			r := tokens.Reload()
			switch {
			case r.Err != nil && r.Same && !asked:
			case r.Missing:
				log.Error("read token file missing; the tokens read before stay in force: write the file to change them, or restart to revoke them all (a restart without the file fails)",
					"file", tokens.Path(), "tokens", r.Tokens.Names(), "read_at", r.Since)
			case r.Err != nil:
				log.Error("read tokens not reloaded; the previous tokens stay in force", "error", r.Err, "tokens", r.Tokens.Names(), "read_at", r.Since)
			case r.Changed:
				log.Info("read tokens reloaded", "file", tokens.Path(), "tokens", r.Tokens.Names())
			}
		}
		if cfg.Watch {
			timing := reload.WatchTiming{Debounce: cfg.WatchDebounce, MaxWait: cfg.WatchMaxWait}
			if err := reload.WatchFile(runCtx, tokens.Path(), timing, func() { reloadTokens(false) }); err != nil {
				log.Warn("read token file watch unavailable; send SIGHUP after editing it", "error", err)
			}
		}
	}
	// A full rescan trigger also resumes the watch of a root that was gone.
	var watch lateWatch
	fullRescan := func() {
		watch.Rewatch(ctx)
		reloader.Request(nil)
	}
	// The first scan is not abandoned at reload_timeout (there is no
	// snapshot to keep serving, and a first scan reads every file), but
	// it says when it overruns.
	var overrun *time.Timer
	if cfg.ReloadTimeout > 0 {
		overrun = time.AfterFunc(cfg.ReloadTimeout, func() {
			log.Warn("the first scan is still running after reload_timeout; /readyz answers 503 until it finishes", "timeout", cfg.ReloadTimeout)
		})
	}
	_, err = cat.Reload(ctx)
	if overrun != nil {
		overrun.Stop()
	}
	if err != nil {
		shutdown(httpServer, cfg.ShutdownTimeout, log)
		return fmt.Errorf("initial scan: %w", err)
	}
	// Most of what the first scan allocated is garbage now: every file it
	// read and archive it built, or, on a restart, the scan cache's
	// entries it decoded. It is collected and its pages given
	// back once the server is ready, so that readiness does not wait for a
	// whole collection of the heap (half a second at 100,000 skills), and
	// the resident set settles at what the snapshot holds
	// (docs/benchmarks.md, "Memory"): by the file watch, after the verify
	// that follows its set-up, or here without one. Until then the
	// collector runs at settleGCPercent; the configured target is back
	// once settled.
	if restarting {
		restoreGC = collectMoreWhileSettling()
	}
	var readyAt time.Time
	settled := func() {
		debug.FreeOSMemory()
		restoreGC()
		log.Info("memory settled", "since_ready", time.Since(readyAt))
	}
	go reloader.Run(runCtx)
	readyAt = time.Now()
	api.SetReady(true)
	if cfg.Watch && (src.SkillsDir != "" || src.AgentsDir != "") {
		go watch.start(runCtx, cfg, src, reloader, log, settled)
	} else {
		go settled()
	}
	if ready, ok := ctx.Value(readyKey{}).(func(addr string)); ok {
		ready(ln.Addr().String())
	}

	var rescan <-chan time.Time
	if cfg.RescanInterval > 0 {
		t := time.NewTicker(cfg.RescanInterval)
		defer t.Stop()
		rescan = t.C
	}
	for {
		select {
		case <-hup:
			reloadTokens(true)
			fullRescan()
		case <-rescan:
			fullRescan()
		case err := <-serveErr:
			return fmt.Errorf("serve: %w", err)
		case <-ctx.Done():
			log.Info("shutting down", "delay", cfg.ShutdownDelay, "timeout", cfg.ShutdownTimeout)
			api.SetReady(false)
			if cfg.ShutdownDelay > 0 {
				// Keep answering while load balancers notice /readyz is 503.
				time.Sleep(cfg.ShutdownDelay)
			}
			shutdown(httpServer, cfg.ShutdownTimeout, log)
			return nil
		}
	}
}

// Connection caps: what max_connections 0 keeps of the open-file limit
// for the process itself, and the most it picks.
const (
	fdBase       = 32 // stdio, epoll, the listeners, the log file, the watch, provenance reads
	scanFDs      = 4  // a scan worker's besides the folders below a version: root, skill and version folders, one file
	autoMaxConns = 4096
)

// fdHeadroom is what max_connections 0 leaves of the open-file limit for
// everything but clients: fdBase, the metrics listener's cap when it
// listens, and the scan's, whose GOMAXPROCS workers each hold a folder
// open at every level they are in, down to max_folder_depth, and one
// file. With the defaults on two cores: 32 + 2 × (64 + 4) = 168.
func fdHeadroom(cfg *config.Config) int {
	n := fdBase + runtime.GOMAXPROCS(0)*(cfg.MaxFolderDepth+scanFDs)
	if cfg.MetricsListen != "" {
		n += cfg.MetricsMaxConns
	}
	return n
}

// maxConnections is the configured cap, or for 0 one that keeps accept
// from ever running out of descriptors, headroom left for the process.
func maxConnections(configured, headroom int) int {
	if configured > 0 {
		return configured
	}
	limit, ok := openFileLimit()
	if !ok {
		return autoMaxConns
	}
	return autoMaxConnections(limit, headroom)
}

// autoMaxConnections is the cap for an open-file limit of nofile: the
// limit less headroom, at most autoMaxConns, and under a limit so small
// that this leaves less than a quarter of it, a quarter. The process
// holds about a dozen descriptors before any client: a floor of 16 under
// `ulimit -n 24` let accept run out of them, and
// then no client was answered.
func autoMaxConnections(nofile uint64, headroom int) int {
	if nofile > uint64(autoMaxConns+headroom) {
		return autoMaxConns
	}
	n := int(nofile)
	return max(n-headroom, n/4, 1)
}

// shutdown drains in-flight requests for at most timeout, then closes what
// is left.
func shutdown(srv *http.Server, timeout time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("shutdown deadline passed; closing connections", "error", err)
		_ = srv.Close()
	}
}

// errInvalidTree is validate's answer for a tree with errors, once it has
// printed them.
var errInvalidTree = fmt.Errorf("the tree has errors: %w", errReported)

// validate scans exactly what serve would and reports every problem.
func validate(ctx context.Context, cfg *config.Config, format string, stdout, stderr io.Writer) error {
	src, err := source(cfg)
	if err != nil {
		return err
	}
	snap, err := catalog.Build(ctx, src, 1)
	if err != nil {
		return err
	}
	problems := snap.Problems
	if problems == nil {
		problems = []skill.Problem{}
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(problems)
	} else {
		for _, p := range problems {
			fmt.Fprintln(stdout, p.String())
		}
	}
	errs := snap.ErrorCount()
	fmt.Fprintf(stderr, "%d skills (%d versions) and %d sub-agents (%d versions) valid; %d errors, %d warnings\n",
		len(snap.Skills), snap.VersionCount(), len(snap.Agents), snap.AgentVersionCount(), errs, len(problems)-errs)
	if errs > 0 {
		return errInvalidTree
	}
	return nil
}

// healthcheck exits 0 when /readyz answers 200; it is the container
// image's HEALTHCHECK, since a scratch image has no curl.
func healthcheck(ctx context.Context, cfg *config.Config, target string) error {
	if target == "" {
		_, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return fmt.Errorf("%w: listen %q: %w", config.ErrUsage, cfg.Listen, err)
		}
		target = "http://127.0.0.1:" + port + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("%w: --url: %w", config.ErrUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", target, strings.TrimSpace(resp.Status))
	}
	return nil
}

// reloadFigures is what the metrics record of a reload: they take plain
// values, not the catalogue's types.
func reloadFigures(res catalog.ReloadResult) metrics.Reload {
	r := metrics.Reload{Duration: res.Duration, Retained: retainedFigures(res.Retention)}
	if res.Err == nil && res.Snapshot != nil {
		c := res.Snapshot.Counts()
		r.Published = &metrics.Published{Generation: c.Generation, Skills: c.Skills, Agents: c.Agents,
			SkillVersions: c.SkillVersions, AgentVersions: c.AgentVersions, Errors: c.Errors, Warnings: c.Warnings,
			Bytes: c.Bytes, Fingerprint: c.Fingerprint}
	}
	return r
}

// retainedFigures is what the metrics record of retention.
func retainedFigures(st catalog.RetentionStats) metrics.Retained {
	return metrics.Retained{Artifacts: st.Artifacts, Bytes: st.Bytes, Evicted: st.Evicted}
}

//go:build linux

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/scripts/internal/product"
)

// serveRow is one line of the comparison: a request both sides answer with
// the same status, encoding and body.
type serveRow struct {
	name     string
	target   string // path and query
	status   int
	encoding string
	// headers of the request to side ("ours" or "nginx"); the 304 row
	// sends each side its own ETag.
	headers func(side string) []string
}

func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	skills := fs.Int("skills", 300, "skills in the generated tree (agents: a tenth of it)")
	duration := fs.Duration("duration", 5*time.Second, "length of each wrk run (whole seconds)")
	rounds := fs.Int("rounds", 3, "runs of every row on each side; the table has medians")
	conns := fs.Int("connections", 32, "wrk connections (-c)")
	treeDir := fs.String("tree", "", "tree directory, reused when generated with the same counts (default: a temporary one)")
	keep := fs.Bool("keep", false, "keep the work directory (logs, mirror, nginx prefix)")
	require := fs.Float64("require", 0, "exit non-zero when a row's median ratio is below this (0: report only)")
	bare := fs.Bool("bare", true, "also run a bare net/http server on the mirror (no log, no middleware): how near nginx Go itself gets here")
	bareHeaders := fs.Bool("bare-headers", true, "also run the bare net/http server sending the header fields skillserver sent for each file: what net/http costs for the same response bytes, the rest of the gap to bare is the transport's and the handlers'")
	bareFast := fs.Bool("fasthttp", true, "also run the bare server on fasthttp: how near nginx another Go HTTP engine gets here")
	profile := fs.String("profile", "", "write a CPU profile of skillserver per row into this directory, taken during the row's first run (serves metrics_pprof on a metrics listener)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: bench serve [flags]\n\n"+
			"Generates a tree, starts skillserver on it, mirrors its responses into a folder served by\n"+
			"nginx, and runs wrk -t1 -c<connections> on both for each row; prints req/s and ratios.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *duration < time.Second || *rounds < 1 || *skills < 2 || *conns < 1 {
		return fmt.Errorf("%w: --duration must be at least 1s, --rounds and --connections at least 1, --skills at least 2", errUsage)
	}
	work, cleanup, err := workDir("skillserver-bench-serve-", *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	dir := *treeDir
	if dir == "" {
		dir = filepath.Join(work, "tree")
	}
	t, err := tree(dir, *skills)
	if err != nil {
		return err
	}
	bin, err := product.Build(ctx, work)
	if err != nil {
		return err
	}
	var extra func(string) []string
	metricsBase := ""
	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			return err
		}
		port, err := freePort()
		if err != nil {
			return err
		}
		metricsBase = "http://127.0.0.1:" + strconv.Itoa(port)
		extra = func(string) []string {
			return []string{"--metrics-listen", "127.0.0.1:" + strconv.Itoa(port), "--metrics-pprof"}
		}
	}
	// The blobs are served from a state directory of the run's own, as
	// state_dir "auto" serves them from one under the user's home.
	withState := func(base string) []string {
		args := []string{"--state-dir", filepath.Join(work, "state")}
		if extra != nil {
			args = append(args, extra(base)...)
		}
		return args
	}
	srv, ready, err := startServer(ctx, bin, t, work, withState)
	if err != nil {
		return err
	}
	defer srv.stop(syscall.SIGTERM)
	logf("skillserver pid %d at %s, ready in %v", srv.pid(), srv.base, ready.Round(time.Millisecond))

	mirror := filepath.Join(work, "mirror")
	rows, heads, err := mirrorRows(srv.base, mirror)
	if err != nil {
		return err
	}
	ng, ngBase, err := startNginx(ctx, mirror, work)
	if err != nil {
		return err
	}
	defer ng.stop(syscall.SIGQUIT)
	logf("nginx pid %d at %s serving %s", ng.pid(), ngBase, mirror)
	bases := map[string]string{"ours": srv.base, "nginx": ngBase}
	sides := []string{"ours", "nginx"}
	for _, b := range []struct {
		side  string
		on    bool
		start func(string) (string, func(), error)
	}{{"bare", *bare, startBare}, {"bare-headers", *bareHeaders, func(dir string) (string, func(), error) { return startBareHeaders(dir, heads) }},
		{"fasthttp", *bareFast, startBareFast}} {
		if !b.on {
			continue
		}
		base, stop, err := b.start(mirror)
		if err != nil {
			return err
		}
		defer stop()
		bases[b.side] = base
		sides = append(sides, b.side)
	}
	calibration := sides[2:] // the bare servers, each against nginx
	if err := checkRows(rows, bases, sides); err != nil {
		return err
	}

	rates := map[string]map[string][]float64{} // row -> side -> per round
	cpu := map[string]map[string][]float64{}   // row -> side -> CPU µs per request, per round
	// Whose CPU time each side's requests cost: the server; nginx's
	// master and workers; the bare servers run in this process.
	pids := map[string][]int{"ours": {srv.pid()}, "nginx": withChildren(ng.pid())}
	for _, side := range calibration {
		pids[side] = []int{os.Getpid()}
	}
	ratios := map[string][]float64{}
	bareRatios := map[string][]float64{}            // row -> ours over the bare net/http server, per round
	sameRatios := map[string][]float64{}            // row -> ours over the bare server with our headers, per round
	sideRatios := map[string]map[string][]float64{} // bare side -> row -> its ratio to nginx per round
	for _, side := range calibration {
		sideRatios[side] = map[string][]float64{}
	}
	loads := []string{loadavg()}
	for r := 0; r < *rounds; r++ {
		sides := slices.Clone(sides)
		if r%2 == 1 {
			slices.Reverse(sides) // alternate who goes first
		}
		for _, rw := range rows {
			if rates[rw.name] == nil {
				rates[rw.name] = map[string][]float64{}
				cpu[rw.name] = map[string][]float64{}
			}
			got := map[string]float64{}
			for _, side := range sides {
				var prof chan error
				if side == "ours" && r == 0 && metricsBase != "" {
					prof = make(chan error, 1)
					go func() { prof <- cpuProfile(metricsBase, *duration, filepath.Join(*profile, slug(rw.name)+".pprof")) }()
				}
				before, cerr := cpuSeconds(pids[side])
				rate, n, err := wrk(ctx, bases[side]+rw.target, *conns, *duration, rw.headers(side))
				after, cerr2 := cpuSeconds(pids[side])
				if err == nil && cerr == nil && cerr2 == nil && n > 0 {
					cpu[rw.name][side] = append(cpu[rw.name][side], (after-before)/float64(n)*1e6)
				}
				if prof != nil {
					if perr := <-prof; perr != nil {
						return fmt.Errorf("%s: CPU profile: %w", rw.name, perr)
					}
				}
				if err != nil {
					return fmt.Errorf("%s, %s: %w", rw.name, side, err)
				}
				got[side] = rate
				rates[rw.name][side] = append(rates[rw.name][side], rate)
			}
			ratios[rw.name] = append(ratios[rw.name], got["ours"]/got["nginx"])
			if got["bare"] > 0 {
				bareRatios[rw.name] = append(bareRatios[rw.name], got["ours"]/got["bare"])
			}
			if got["bare-headers"] > 0 {
				sameRatios[rw.name] = append(sameRatios[rw.name], got["ours"]/got["bare-headers"])
			}
			for _, side := range calibration {
				sideRatios[side][rw.name] = append(sideRatios[side][rw.name], got[side]/got["nginx"])
			}
			logf("round %d %-30s ours %9.0f  nginx %9.0f  bare %9.0f  fasthttp %9.0f  ratio %.2f", r+1, rw.name, got["ours"], got["nginx"], got["bare"], got["fasthttp"], got["ours"]/got["nginx"])
		}
		loads = append(loads, loadavg())
	}
	if srv.exited() || ng.exited() {
		return fmt.Errorf("a server exited during the runs (skillserver: %v, nginx: %v)", srv.err, ng.err)
	}

	fmt.Printf("\nskillserver vs nginx, %d skills / %d agents (%d files, %d bytes), wrk -t1 -c%d -d%ds, %d round(s), medians\n",
		t.Skills, t.Agents, t.Files, t.Bytes, *conns, int(duration.Seconds()), *rounds)
	fmt.Printf("load average (1, 5, 15 min) before each round and at the end: %s\n\n", strings.Join(loads, " | "))
	head := fmt.Sprintf("| %-34s | %10s | %11s | %6s | %-16s | %12s | %13s |", "endpoint", "ours req/s", "nginx req/s", "ratio", "ratios per round", "ours CPU µs", "nginx CPU µs")
	rule := fmt.Sprintf("|%s|%s|%s|%s|%s|%s|%s|", strings.Repeat("-", 36), strings.Repeat("-", 12), strings.Repeat("-", 13), strings.Repeat("-", 8), strings.Repeat("-", 18), strings.Repeat("-", 14), strings.Repeat("-", 15))
	if *bare {
		head += fmt.Sprintf(" %9s | %-16s |", "ours/bare", "per round")
		rule += strings.Repeat("-", 11) + "|" + strings.Repeat("-", 18) + "|"
	}
	if *bareHeaders {
		head += fmt.Sprintf(" %17s | %-16s |", "ours/bare-headers", "per round")
		rule += strings.Repeat("-", 19) + "|" + strings.Repeat("-", 18) + "|"
	}
	for _, side := range calibration {
		head += fmt.Sprintf(" %14s | %14s | %13s |", side+" req/s", side+"/nginx", side+" CPU µs")
		rule += strings.Repeat("-", 16) + "|" + strings.Repeat("-", 16) + "|" + strings.Repeat("-", 15) + "|"
	}
	fmt.Println(head)
	fmt.Println(rule)
	failed := false
	for _, rw := range rows {
		ratio := median(ratios[rw.name])
		var per []string
		for _, x := range ratios[rw.name] {
			per = append(per, fmt.Sprintf("%.2f", x))
		}
		line := fmt.Sprintf("| %-34s | %10.0f | %11.0f | %6.2f | %-16s | %12s | %13s |", rw.name, median(rates[rw.name]["ours"]), median(rates[rw.name]["nginx"]), ratio, strings.Join(per, " "), cpuCell(cpu[rw.name]["ours"]), cpuCell(cpu[rw.name]["nginx"]))
		if *bare {
			var per []string
			for _, x := range bareRatios[rw.name] {
				per = append(per, fmt.Sprintf("%.2f", x))
			}
			line += fmt.Sprintf(" %9.2f | %-16s |", median(bareRatios[rw.name]), strings.Join(per, " "))
		}
		if *bareHeaders {
			var per []string
			for _, x := range sameRatios[rw.name] {
				per = append(per, fmt.Sprintf("%.2f", x))
			}
			line += fmt.Sprintf(" %17.2f | %-16s |", median(sameRatios[rw.name]), strings.Join(per, " "))
		}
		for _, side := range calibration {
			line += fmt.Sprintf(" %14.0f | %14.2f | %13s |", median(rates[rw.name][side]), median(sideRatios[side][rw.name]), cpuCell(cpu[rw.name][side]))
		}
		fmt.Println(line)
		if ratio < *require {
			failed = true
		}
	}
	fmt.Printf("\nCPU µs: CPU time (user and system, from /proc/<pid>/stat) per request answered, median of the rounds; nginx's counts its master and workers, the bare servers' this process's.\n")
	if *profile != "" {
		fmt.Printf("\nCPU profiles of skillserver, one per row: %s/*.pprof (go tool pprof -top FILE)\n", *profile)
	}
	if failed {
		return fmt.Errorf("a ratio is below --require %.2f", *require)
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mirrorRows writes the responses the rows ask for into dir, at their
// paths (the gzip body of the RFC index beside it as index.json.gz, for
// nginx's gzip_static), and returns the rows and the header fields of
// each response, by path (".gz" added for the gzip one).
func mirrorRows(base, dir string) ([]serveRow, map[string]http.Header, error) {
	heads := map[string]http.Header{}
	index := feed.DocKey{Kind: feed.DocRFCIndex}.Path()
	manifest := feed.DocKey{Kind: feed.DocManifest}.Path()
	idx, err := get(base + index)
	if err != nil || idx.status != 200 {
		return nil, nil, fmt.Errorf("GET %s: status %d, %v", index, idx.status, err)
	}
	var doc struct {
		Skills []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(idx.body, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", index, err)
	}
	var archive, skillMD string
	for _, s := range doc.Skills {
		u, err := url.Parse(s.URL)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: url %q: %w", index, s.URL, err)
		}
		switch {
		case s.Type == "archive" && archive == "":
			archive = u.RequestURI()
		case s.Type == "skill-md" && skillMD == "":
			skillMD = u.RequestURI()
		}
	}
	if archive == "" || skillMD == "" {
		return nil, nil, fmt.Errorf("%s lists no archive or no lone SKILL.md skill", index)
	}
	plain := func(string) []string { return nil }
	gz := func(string) []string { return []string{"Accept-Encoding: gzip"} }
	rows := []serveRow{
		{name: "RFC index 200", target: index, status: 200, headers: plain},
		{name: "RFC index 200, gzip", target: index, status: 200, encoding: "gzip", headers: gz},
		{name: "RFC index 304 (If-None-Match)", target: index, status: 304},
		{name: "/manifest.json 200", target: manifest, status: 200, headers: plain},
		{name: "one archive 200", target: archive, status: 200, headers: plain},
		{name: "one SKILL.md 200", target: skillMD, status: 200, headers: plain},
	}
	write := func(target string, suffix string, headers ...string) error {
		f, err := get(base+target, headers...)
		if err != nil || f.status != 200 {
			return fmt.Errorf("GET %s: status %d, %v", target, f.status, err)
		}
		u, err := url.Parse(target)
		if err != nil {
			return err
		}
		heads[u.Path+suffix] = f.header
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(u.Path, "/"))) + suffix
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, f.body, 0o644)
	}
	for _, target := range []string{index, manifest, archive, skillMD} {
		if err := write(target, ""); err != nil {
			return nil, nil, err
		}
	}
	if err := write(index, ".gz", "Accept-Encoding: gzip"); err != nil {
		return nil, nil, err
	}
	return rows, heads, nil
}

// checkRows fetches every row from every side once: the same status,
// encoding and body, and fills in the 304 row's ETags.
func checkRows(rows []serveRow, bases map[string]string, sides []string) error {
	etags := map[string]string{}
	for side, base := range bases {
		f, err := get(base + rows[0].target)
		if err != nil {
			return err
		}
		if f.etag == "" {
			return fmt.Errorf("%s sends no ETag for %s", side, rows[0].target)
		}
		etags[side] = f.etag
	}
	for i := range rows {
		rw := &rows[i]
		if rw.headers == nil {
			rw.headers = func(side string) []string { return []string{"If-None-Match: " + etags[side]} }
		}
		var sums []string
		for _, side := range sides {
			f, err := get(bases[side]+rw.target, rw.headers(side)...)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", rw.name, side, err)
			}
			if f.status != rw.status || f.encoding != rw.encoding {
				return fmt.Errorf("%s, %s: status %d, Content-Encoding %q; want %d, %q", rw.name, side, f.status, f.encoding, rw.status, rw.encoding)
			}
			sums = append(sums, f.sum())
		}
		for i := range sums {
			if sums[i] != sums[0] {
				return fmt.Errorf("%s: the bodies of %s and %s differ (sha256 %s vs %s)", rw.name, sides[0], sides[i], sums[0], sums[i])
			}
		}
	}
	return nil
}

// cpuCell is the median of a side's CPU µs per request, or "-" when no
// round could measure it.
func cpuCell(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", median(xs))
}

// cpuProfile takes a CPU profile of the server through its metrics
// listener for about the length of one wrk run, into file.
func cpuProfile(metricsBase string, d time.Duration, file string) error {
	secs := max(1, int(d.Seconds())-1)
	resp, err := http.Get(metricsBase + "/debug/pprof/profile?seconds=" + strconv.Itoa(secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /debug/pprof/profile: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// slug is a row's name as a file name.
func slug(name string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '-'
	}, name), "-")
}

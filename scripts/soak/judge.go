//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
)

const mib = 1 << 20

// memoryVerdict is the memoryVerdict judgement of a run.
type memoryVerdict struct {
	from     time.Duration // the judged window starts here (since ready)
	judged   int           // samples in the judged window
	rss, hep rssTrend
	// slopeJudged is false when the window is shorter than minSlopeSpan.
	slopeJudged bool
	problems    []string // each fails the soak
	note        string   // why nothing was judged
}

// rssTrend is one series' figures: bytes, and MiB a minute.
type rssTrend struct {
	ready, base, peak, end int64
	slope                  float64 // least-squares slope over the judged window, MiB/min
	growth                 float64 // end / base
}

// judgeMemory judges the RSS samples from from on (the later of the
// warm-up and half the run). It fails when RSS at the end of that window
// is over maxGrowth times RSS at its start (the medians of its last and
// first quarter, at least 3 samples each), or, when the window spans at
// least minSlopeSpan, when the least-squares slope of its samples is over
// maxSlope MiB a minute. A shorter window's slope follows the GC's
// sawtooth, not a trend, so it is reported and not judged. The Go heap in
// use gets the same figures, reported but not judged: it swings with
// every GC cycle, and what leaks shows in RSS.
func judgeMemory(ss []sample, from time.Duration, maxSlope, maxGrowth float64) memoryVerdict {
	m := memoryVerdict{from: from}
	var window []sample
	for _, s := range ss {
		if s.rss > 0 && s.at >= from {
			window = append(window, s)
		}
	}
	m.judged = len(window)
	m.rss = trendOf(ss, window, func(s sample) int64 { return s.rss })
	m.hep = trendOf(ss, window, func(s sample) int64 { return s.heapInuse })
	if len(window) < 6 {
		m.note = fmt.Sprintf("Only %d samples from %v on: too few to judge a trend (run longer, or sample more often).", len(window), from)
		return m
	}
	span := window[len(window)-1].at - window[0].at
	if m.slopeJudged = span >= minSlopeSpan; !m.slopeJudged {
		m.note = fmt.Sprintf("The judged window spans %v: its slope is not judged under %v (run longer), its growth is.", span.Round(time.Second), minSlopeSpan)
	}
	if m.slopeJudged && m.rss.slope > maxSlope {
		m.problems = append(m.problems, fmt.Sprintf("RSS rose %.2f MiB/min from %v to the end (least-squares slope of %d samples; --max-rss-slope %g)",
			m.rss.slope, from, len(window), maxSlope))
	}
	if m.rss.growth > maxGrowth {
		m.problems = append(m.problems, fmt.Sprintf("RSS ended at %.2f× its value at %v (%.1f MiB against %.1f MiB, medians of the window's last and first quarter; --max-rss-growth %g)",
			m.rss.growth, from, float64(m.rss.end)/mib, float64(m.rss.base)/mib, maxGrowth))
	}
	return m
}

// minSlopeSpan is the shortest judged window whose RSS slope is judged.
const minSlopeSpan = 5 * time.Minute

func trendOf(all, window []sample, v func(sample) int64) rssTrend {
	var t rssTrend
	var xs, ys []float64
	for _, s := range all {
		if v(s) <= 0 {
			continue
		}
		if t.ready == 0 {
			t.ready = v(s)
		}
		t.peak = max(t.peak, v(s))
	}
	var vals []int64
	for _, s := range window {
		if v(s) > 0 {
			xs, ys = append(xs, s.at.Minutes()), append(ys, float64(v(s))/mib)
			vals = append(vals, v(s))
		}
	}
	if len(vals) == 0 {
		return t
	}
	q := min(max(3, len(vals)/4), len(vals))
	t.base, t.end = median(vals[:q]), median(vals[len(vals)-q:])
	t.slope = slope(xs, ys)
	if t.base > 0 {
		t.growth = float64(t.end) / float64(t.base)
	}
	return t
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// slope is the least-squares slope of ys over xs (0 for fewer than 2
// distinct xs).
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// serverLog counts the server's log lines.
type serverLog struct {
	lines    int
	requests int
	byClass  [6]int // request lines by status/100
	levels   map[string]int
	errors   map[string]int // ERROR lines by msg
	notJSON  int            // lines that are no JSON log record (a panic's trace, say)
	firstBad string
}

func scanLog(path string) (serverLog, error) {
	l := serverLog{levels: map[string]int{}, errors: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return l, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			l.parseLine(line)
		}
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return l, err
		}
	}
}

func (l *serverLog) parseLine(line []byte) {
	l.lines++
	var rec struct {
		Level  string `json:"level"`
		Msg    string `json:"msg"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(line, &rec); err != nil || rec.Level == "" {
		l.notJSON++
		if l.firstBad == "" {
			l.firstBad = snippet(line)
		}
		return
	}
	l.levels[rec.Level]++
	if rec.Level == "ERROR" {
		l.errors[rec.Msg]++
	}
	if rec.Msg == "request" {
		l.requests++
		if c := rec.Status / 100; c >= 1 && c <= 5 {
			l.byClass[c]++
		}
	}
}

// reloadStats are the reloads the soak asked for.
type reloadStats struct {
	sighups, posts, postsOK int
}

// result is everything the summary reports.
type result struct {
	cfg         config
	tree        *benchtree.Tree
	out, csv    string
	base        string
	pid         int
	ready       time.Time // the server answered /readyz; the soak began
	ran         time.Duration
	interrupted bool
	targets     loadTargets
	s           *soak
	reloads     reloadStats
	genReady    int64
	atReady     metrics // scraped when the server was ready
	final       metrics
	stopErr     error
	log         serverLog
	mem         memoryVerdict
	samples     int
}

func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

func mibs(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(b)/mib)
}

// printSummary writes the printSummary tables.
func printSummary(w io.Writer, r *result) {
	verdict := "PASS"
	switch {
	case r.interrupted && r.s.fails.all() > 0:
		verdict = "FAIL (interrupted)"
	case r.interrupted:
		verdict = "INTERRUPTED (no failure until then)"
	case r.s.fails.all() > 0:
		verdict = "FAIL"
	}
	cfg := r.cfg
	fmt.Fprintf(w, "## skillserver soak: %s\n\n", verdict)
	fmt.Fprintf(w, "%v of %v against skillserver (pid %d) at %s; retention %v; started %s\n",
		r.ran.Round(time.Second), cfg.duration, r.pid, r.base, cfg.retention, r.ready.UTC().Format(time.RFC3339))
	t := r.tree
	fmt.Fprintf(w, "tree: %s skills (%s versioned, %s with resources, %s versions), %s sub-agents, %s files, %s MiB\n",
		num(int64(t.Skills)), num(int64(t.VersionedSkills)), num(int64(t.SkillsWithResources)), num(int64(t.SkillVersions)),
		num(int64(t.Agents)), num(int64(t.Files)), mibs(t.Bytes))
	pace := "unpaced"
	if cfg.loadRate > 0 {
		pace = fmt.Sprintf("at most %g req/s", cfg.loadRate)
	}
	fmt.Fprintf(w, "clients: %d sync clients × %d requests in flight (every %s pass cold); load: %d connections, %s, on the archive of %s and the SKILL.md of %s (never edited)\n",
		cfg.clients, cfg.workers, ordinal(cfg.coldEvery), cfg.conns, pace, r.targets.archiveName, r.targets.skillMDName)
	fmt.Fprintf(w, "edits every %v (large resource %s MiB); SIGHUP every %v; POST /-/reload every %v\n",
		cfg.editEvery, mibs(int64(cfg.bigBytes)), cfg.sighupEvery, cfg.reloadEvery)
	fmt.Fprintf(w, "output: %s (server.log, failures.log, summary.txt); memory samples: %s\n\n", r.out, r.csv)

	fmt.Fprintln(w, "| client kind | passes (cold) | longest pass | requests | 200 | 304 | artifact digests verified | document ETags verified | MiB read | explained 404 | failures |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var tot counters
	for k := range nKinds {
		c := &r.s.stats[k]
		passes, longest := "-", "-"
		if k != kindLoad {
			passes = fmt.Sprintf("%s (%s)", num(c.passes.Load()), num(c.cold.Load()))
			if l := c.longest.Load(); l > 0 {
				longest = time.Duration(l).Round(100 * time.Millisecond).String()
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kindNames[k], passes, longest,
			num(c.requests.Load()), num(c.ok.Load()), num(c.notModified.Load()), num(c.artifacts.Load()), num(c.documents.Load()),
			mibs(c.bytes.Load()), num(c.explained.Load()), num(c.failures.Load()))
		tot.requests.Add(c.requests.Load())
		tot.ok.Add(c.ok.Load())
		tot.notModified.Add(c.notModified.Load())
		tot.artifacts.Add(c.artifacts.Load())
		tot.documents.Add(c.documents.Load())
		tot.bytes.Add(c.bytes.Load())
		tot.explained.Add(c.explained.Load())
		tot.failures.Add(c.failures.Load())
	}
	fmt.Fprintf(w, "| total | | | %s | %s | %s | %s | %s | %s | %s | %s |\n\n", num(tot.requests.Load()), num(tot.ok.Load()),
		num(tot.notModified.Load()), num(tot.artifacts.Load()), num(tot.documents.Load()), mibs(tot.bytes.Load()),
		num(tot.explained.Load()), num(tot.failures.Load()))
	fmt.Fprintf(w, "retention exercised: %s RFC and %s native-tree answers were 200 for an item the editor changed after the document that led to them was requested\n\n",
		num(r.s.stats[kindRFC].afterEdit.Load()), num(r.s.stats[kindTree].afterEdit.Load()))

	fmt.Fprintln(w, "| edit | count |")
	fmt.Fprintln(w, "|---|---:|")
	for _, k := range editKinds {
		fmt.Fprintf(w, "| %s | %d |\n", k, r.s.edits.count(k))
	}
	fmt.Fprintf(w, "| total | %d |\n\n", r.s.edits.total())

	fm := r.final
	fmt.Fprintln(w, "| reloads | count |")
	fmt.Fprintln(w, "|---|---:|")
	fmt.Fprintf(w, "| SIGHUP sent | %d |\n", r.reloads.sighups)
	fmt.Fprintf(w, "| POST /-/reload answered 200 (sent) | %d (%d) |\n", r.reloads.postsOK, r.reloads.posts)
	fmt.Fprintf(w, "| reloads published (server: watch, SIGHUP, POST) | %s |\n", num(fm.int(`skillserver_reload_total{result="success"}`)))
	fmt.Fprintf(w, "| reloads failed (server) | %s |\n", num(fm.int(`skillserver_reload_total{result="failure"}`)))
	fmt.Fprintf(w, "| snapshot generation at ready → at end | %d → %d |\n", r.genReady, fm.int("skillserver_snapshot_generation"))
	fmt.Fprintf(w, "| retained artifacts evicted early (retention_max_bytes) | %s |\n\n", num(fm.int("skillserver_retained_evicted_total")))

	fmt.Fprintln(w, "| failures by class | count |")
	fmt.Fprintln(w, "|---|---:|")
	for _, c := range classes {
		fmt.Fprintf(w, "| %s | %d |\n", c, r.s.fails.inClass(c))
	}
	fmt.Fprintf(w, "| total | %d |\n\n", r.s.fails.all())

	m := r.mem
	fmt.Fprintf(w, "| memory: %d samples every %v, judged from %v (%d samples) | RSS MiB | Go heap in use MiB |\n", r.samples, cfg.sampleEvery, m.from, m.judged)
	fmt.Fprintln(w, "|---|---:|---:|")
	fmt.Fprintf(w, "| at ready | %s | %s |\n", mibs(m.rss.ready), mibs(m.hep.ready))
	limit := fmt.Sprintf("limit %g", cfg.maxSlope)
	if !m.slopeJudged {
		limit = fmt.Sprintf("not judged under %v", minSlopeSpan)
	}
	fmt.Fprintf(w, "| start of the judged window (median of its first quarter) | %s | %s |\n", mibs(m.rss.base), mibs(m.hep.base))
	fmt.Fprintf(w, "| end (median of its last quarter) | %s | %s |\n", mibs(m.rss.end), mibs(m.hep.end))
	fmt.Fprintf(w, "| peak | %s | %s |\n", mibs(m.rss.peak), mibs(m.hep.peak))
	fmt.Fprintf(w, "| end / start of the judged window | %.2f (limit %g) | %.2f |\n", m.rss.growth, cfg.maxGrowth, m.hep.growth)
	fmt.Fprintf(w, "| least-squares slope over the judged window, MiB/min | %+.2f (%s) | %+.2f |\n\n", m.rss.slope, limit, m.hep.slope)
	if m.note != "" {
		fmt.Fprintf(w, "memory: %s\n", m.note)
	}
	for _, p := range m.problems {
		fmt.Fprintf(w, "memory: FAIL: %s\n", p)
	}

	l := r.log
	fmt.Fprintf(w, "server log: %s lines, %s requests (2xx %s, 3xx %s, 4xx %s, 5xx %s); WARN %d, ERROR %d, not JSON %d\n",
		num(int64(l.lines)), num(int64(l.requests)), num(int64(l.byClass[2])), num(int64(l.byClass[3])), num(int64(l.byClass[4])),
		num(int64(l.byClass[5])), l.levels["WARN"], l.levels["ERROR"], l.notJSON)
	for _, msg := range slices.Sorted(maps.Keys(l.errors)) {
		fmt.Fprintf(w, "server log: ERROR %q × %d\n", msg, l.errors[msg])
	}
	if l.firstBad != "" {
		fmt.Fprintf(w, "server log: first line that is not a JSON record: %s\n", l.firstBad)
	}
	exit := "exit status 0"
	if r.stopErr != nil {
		exit = r.stopErr.Error()
	}
	fivexx := fm.sum("skillserver_http_requests_total", `code="5`) - r.atReady.sum("skillserver_http_requests_total", `code="5`)
	fmt.Fprintf(w, "server: 5xx answers since ready %s, handler panics %s (metrics); after SIGTERM: %s\n",
		num(fivexx), num(fm.int("skillserver_http_panics_total")), exit)
	fmt.Fprintf(w, "\nverdict: %s\n", verdict)
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return strconv.Itoa(n) + "th"
}

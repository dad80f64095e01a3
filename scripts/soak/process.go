//go:build linux

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// freePort returns a loopback port nothing listens on right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// adminToken is a new random admin token: 64 hex digits.
func adminToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// server is the skillserver process the soak started; it is stopped by
// its pid.
type server struct {
	cmd     *exec.Cmd
	base    string
	token   string
	logPath string
	done    chan struct{}
	err     error // cmd.Wait's, once done is closed
}

func (p *server) pid() int { return p.cmd.Process.Pid }

func (p *server) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startServer runs bin serve on the tree's roots on an ephemeral
// loopback port, with the file watch on, the admin token in its
// environment (it has no flag) and its log (JSON, request lines at info)
// in logPath. SKILLSERVER_* variables of the soak's own environment are
// not passed on, so they cannot change what is measured.
func startServer(bin, tree, logPath, token string, retention time.Duration) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve", "--listen", addr,
		"--skills", filepath.Join(tree, "skills"), "--agents", filepath.Join(tree, "agents"),
		"--watch=true", "--log-format", "json", "--log-level", "info",
		"--retention", retention.String())
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKILLSERVER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SKILLSERVER_ADMIN_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a Ctrl-C at the terminal reaches the soak
	// only, which stops the server by its pid. Should the soak die
	// without stopping it, the kernel sends it SIGTERM.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start skillserver: %w", err)
	}
	p := &server{cmd: cmd, base: "http://" + addr, token: token, logPath: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady polls /readyz until it answers 200, the server exits, or
// limit passes.
func (p *server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if p.exited() {
			return fmt.Errorf("skillserver exited before it was ready: %v (log: %s)", p.err, p.logPath)
		}
		if resp, err := http.Get(p.base + "/readyz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("skillserver was not ready within %v (log: %s)", limit, p.logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM to the server's pid and waits for it to drain and
// exit, killing it (SIGKILL, by pid) after 30 s. It returns how it ended.
func (p *server) stop() error {
	if p.exited() {
		return fmt.Errorf("it had exited already: %v", p.err)
	}
	_ = syscall.Kill(p.pid(), syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(p.pid(), syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("it did not exit within 30s of SIGTERM and was killed")
	}
}

// rssBytes is the process's resident set (VmRSS of /proc/<pid>/status).
func rssBytes(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/<pid>/status")
}

// metrics is one scrape of /metrics: series (name with its labels, as
// exposed) to value.
type metrics map[string]float64

func scrape(ctx context.Context, hc *http.Client, base string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics answered %d", resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads the Prometheus text format: "name{labels} value".
func parseMetrics(r io.Reader) (metrics, error) {
	m := metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

func (m metrics) int(series string) int64 { return int64(m[series]) }

// sum adds every series of the metric name whose labels contain all of
// the label pairs (such as `code="5`, a prefix of the value).
func (m metrics) sum(name string, labels ...string) int64 {
	var total float64
	for series, v := range m {
		rest, ok := strings.CutPrefix(series, name)
		if !ok || (rest != "" && rest[0] != '{') {
			continue
		}
		all := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				all = false
				break
			}
		}
		if all {
			total += v
		}
	}
	return int64(total)
}

// genTracker polls /readyz and remembers when each snapshot generation
// was first seen, to bound the generation a document was served from.
type genTracker struct {
	base string
	hc   *http.Client
	mu   sync.Mutex
	seen []genSeen // increasing generations
}

type genSeen struct {
	gen  uint64
	recv time.Time // when the answer naming it arrived
}

func newGenTracker(base string) *genTracker {
	return &genTracker{base: base, hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2}}}
}

// observe asks /readyz for the published generation.
func (g *genTracker) observe(ctx context.Context) (uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+"/readyz", nil)
	if err != nil {
		return 0, err
	}
	resp, err := g.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Generation uint64 `json:"generation"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/readyz answered %d: %v", resp.StatusCode, err)
	}
	g.mu.Lock()
	if n := len(g.seen); n == 0 || body.Generation > g.seen[n-1].gen {
		g.seen = append(g.seen, genSeen{gen: body.Generation, recv: time.Now()})
	}
	g.mu.Unlock()
	return body.Generation, nil
}

// poll observes every interval until ctx ends.
func (g *genTracker) poll(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, _ = g.observe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// atMost returns a generation no newer than the one published at t: the
// newest seen in an answer that arrived by then (0 if none).
func (g *genTracker) atMost(t time.Time) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var gen uint64
	for _, s := range g.seen {
		if s.recv.After(t) {
			break
		}
		gen = s.gen
	}
	return gen
}

// sample is one row of the memory CSV.
type sample struct {
	at            time.Duration // since the server was ready
	wall          time.Time
	rss           int64
	heapInuse     int64
	heapAlloc     int64
	goroutines    int64
	openFDs       int64
	generation    int64
	reloadsOK     int64
	reloadsFailed int64
	retained      int64
	evicted       int64
	requests      int64 // the soak's requests so far, every kind
}

const csvHeader = "elapsed_s,time,rss_bytes,heap_inuse_bytes,heap_alloc_bytes,goroutines,open_fds,generation,reloads_ok,reloads_failed,retained_bytes,retained_evicted,soak_requests\n"

func (s sample) csv() string {
	return fmt.Sprintf("%.1f,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", s.at.Seconds(), s.wall.UTC().Format(time.RFC3339),
		s.rss, s.heapInuse, s.heapAlloc, s.goroutines, s.openFDs, s.generation, s.reloadsOK, s.reloadsFailed,
		s.retained, s.evicted, s.requests)
}

// takeSample reads the server's RSS and scrapes its metrics; a field it
// could not read is -1.
func takeSample(ctx context.Context, hc *http.Client, p *server, ready time.Time, requests int64) (sample, metrics) {
	now := time.Now()
	s := sample{at: now.Sub(ready), wall: now, requests: requests}
	var err error
	if s.rss, err = rssBytes(p.pid()); err != nil {
		s.rss = -1
	}
	m, err := scrape(ctx, hc, p.base)
	if err != nil {
		m = metrics{}
	}
	get := func(series string) int64 {
		v, ok := m[series]
		if !ok {
			return -1
		}
		return int64(v)
	}
	s.heapInuse = get("go_memstats_heap_inuse_bytes")
	s.heapAlloc = get("go_memstats_heap_alloc_bytes")
	s.goroutines = get("go_goroutines")
	s.openFDs = get("process_open_fds")
	s.generation = get("skillserver_snapshot_generation")
	s.reloadsOK = get(`skillserver_reload_total{result="success"}`)
	s.reloadsFailed = get(`skillserver_reload_total{result="failure"}`)
	s.retained = get("skillserver_retained_bytes")
	s.evicted = get("skillserver_retained_evicted_total")
	return s, m
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "soak: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

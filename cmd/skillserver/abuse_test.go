package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillserver/skillserver/internal/config"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestServeChild is not a test: it is the server process that
// TestSlowClientsDoNotStarveOthers starts, under a lower open-file limit
// than the test binary's own.
func TestServeChild(t *testing.T) {
	if os.Getenv("SKILLSERVER_TEST_CHILD") != "1" {
		t.Skip("helper process of TestSlowClientsDoNotStarveOthers")
	}
	os.Exit(run(context.Background(), flag.Args(), os.Getenv, os.Stdout, os.Stderr))
}

// startChild runs `skillserver serve args...` as a separate process with
// at most nofile open files, and returns its base URL once it is ready.
func startChild(t *testing.T, nofile string, args ...string) string {
	t.Helper()
	skills, agents := exampleTree(t)
	full := append([]string{`ulimit -n ` + nofile + ` && exec "$0" "$@"`, os.Args[0], "-test.run=^TestServeChild$", "--",
		"serve", "--listen", "127.0.0.1:0", "--log-format", "json", "--watch=false", "--shutdown-timeout", "2s",
		"--skills", skills, "--agents", agents}, args...)
	cmd := exec.Command("sh", append([]string{"-c"}, full...)...)
	cmd.Env = append(os.Environ(), "SKILLSERVER_TEST_CHILD=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// The listening line comes before the first scan; wait for readiness
	// on it, then keep draining the log so the child never blocks on it.
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec.Msg == "listening" {
			url = "http://" + rec.Addr
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if url == "" {
		t.Fatal("the server process ended before it listened")
	}
	fixture.Eventually(t, 30*time.Second, "the server process is ready", func() error { return fixture.Readyz(url) })
	return url
}

// attack holds n connections to addr open, each sending prefix and then
// nothing more, redialling each one the server closes, at most rounds
// times. It returns once every connection has been opened once; stop ends
// it and waits for every connection to close.
func attack(t *testing.T, addr string, n, rounds int, prefix string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var opened, running sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	for range n {
		opened.Add(1)
		running.Add(1)
		go func() {
			defer running.Done()
			first := true
			for range rounds {
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err == nil {
					mu.Lock()
					conns[c] = true
					mu.Unlock()
					_, err = io.WriteString(c, prefix)
				}
				if first {
					opened.Done()
					first = false
				}
				if err != nil {
					return
				}
				// Blocks until the server closes the connection (or
				// answers it), or stop closes it.
				_, _ = io.Copy(io.Discard, c)
				c.Close()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	opened.Wait()
	return func() {
		cancel()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		running.Wait()
	}
}

// TestSlowClientsDoNotStarveOthers is issue 10's item 2 on a small scale:
// more connections than the server has descriptors, trickling a request
// body or never finishing their headers, must not keep /healthz and the
// index from answering. Before the connection cap, accept failed for want
// of descriptors and every new client waited until the attack ended.
func TestSlowClientsDoNotStarveOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	url := startChild(t, "256")
	addr := strings.TrimPrefix(url, "http://")
	slowBody := "POST /api/v1/skills/check-updates HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[{\"name\":"
	halfOpen := "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	stopBody := attack(t, addr, 150, 10, slowBody)
	defer stopBody()
	stopHeaders := attack(t, addr, 150, 10, halfOpen)
	defer stopHeaders()

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	for i := range 8 {
		path := "/healthz"
		if i%2 == 1 {
			path = "/.well-known/agent-skills/index.json"
		}
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatalf("request %d, GET %s during the attack: %v", i, path, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d, GET %s during the attack: status %d, body: %v", i, path, resp.StatusCode, err)
		}
	}
}

// max_connections 0 leaves room under any open-file limit for the
// dozen descriptors the process holds before its first client, and for
// the metrics listener's cap: under `ulimit -n 24` the old floor of 16
// connections made accept fail with EMFILE and /healthz time out.
func TestAutoMaxConnections(t *testing.T) {
	var metricsCap int // metrics_max_connections' default
	for _, k := range config.Keys {
		if k.Name == "metrics_max_connections" {
			metricsCap = k.Default.(int)
		}
	}
	if metricsCap == 0 {
		t.Fatal("no metrics_max_connections key with a default")
	}
	const headroom = 168 // the defaults' on two cores (fdHeadroom)
	for _, tt := range []struct {
		nofile uint64
		want   int
	}{
		{1 << 20, autoMaxConns},
		{^uint64(0), autoMaxConns}, // RLIM_INFINITY
		{autoMaxConns + headroom, autoMaxConns},
		{1024, 1024 - headroom},
		{64, 16},
		{24, 6},
		{8, 2},
		{1, 1},
	} {
		got := autoMaxConnections(tt.nofile, headroom)
		if got != tt.want {
			t.Errorf("open-file limit %d: %d connections, want %d", tt.nofile, got, tt.want)
		}
		if metrics := min(metricsCap, got); tt.nofile >= 2*baseFDsOfProcess && uint64(got+metrics+baseFDsOfProcess) > tt.nofile {
			t.Errorf("open-file limit %d: %d connections and %d for metrics leave no room for the process", tt.nofile, got, metrics)
		}
	}
}

// What max_connections 0 leaves free grows with what the process can
// hold open besides clients: the metrics listener's connections when it
// listens, and a folder per level of max_folder_depth on each scan
// worker. With a fixed 64, a scan of a deeply nested tree on a server at
// its connection cap ran out of descriptors.
func TestFDHeadroomCoversTheScan(t *testing.T) {
	cfg, err := config.Load(pflag.NewFlagSet("test", pflag.ContinueOnError), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	base := fdHeadroom(cfg)
	if scan := procs * (cfg.MaxFolderDepth + 1); base < scan+baseFDsOfProcess {
		t.Errorf("headroom %d: less than the scan's %d folders and the process's %d", base, scan, baseFDsOfProcess)
	}
	deeper := *cfg
	deeper.MaxFolderDepth += 10
	if got := fdHeadroom(&deeper); got != base+10*procs {
		t.Errorf("max_folder_depth +10: headroom %d, want %d", got, base+10*procs)
	}
	withMetrics := *cfg
	withMetrics.MetricsListen = "127.0.0.1:0"
	if got := fdHeadroom(&withMetrics); got != base+cfg.MetricsMaxConns {
		t.Errorf("with metrics_listen: headroom %d, want %d", got, base+cfg.MetricsMaxConns)
	}
}

// baseFDsOfProcess is about what the server holds open before its first
// client and scan: stdio, epoll and its event fd, the listeners, the log,
// the watch.
const baseFDsOfProcess = 12

// TestRequestLimitsAreConfigured: max_header_bytes and max_ranges reach
// the listener and the artifact handlers.
func TestRequestLimitsAreConfigured(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents, "--max-header-bytes", "2048", "--max-ranges", "2")
	const path = "/api/v1/skills/code-review/1.0.0/SKILL.md"
	do := func(header, value string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(header, value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := do("X-Padding", strings.Repeat("a", 16<<10)); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB of headers with max_header_bytes 2048 (net/http allows 4 KiB of slack): status %d, want 431", resp.StatusCode)
	}
	if resp := do("Range", "bytes=0-0,2-2"); resp.StatusCode != http.StatusPartialContent {
		t.Errorf("two ranges with max_ranges 2: status %d, want 206", resp.StatusCode)
	}
	if resp := do("Range", "bytes=0-0,2-2,4-4"); resp.StatusCode != http.StatusOK {
		t.Errorf("three ranges with max_ranges 2: status %d, want 200 with the whole body", resp.StatusCode)
	}
}

// TestTransferEncodedRequestClosesConnection: a request framed by both
// Content-Length and Transfer-Encoding: chunked is answered once and its
// connection closed, so the bytes after the chunked body are never read
// as a second request (RFC 9112 §6.1), and the metric counts it. Before,
// the smuggled GET was answered on the same connection.
func TestTransferEncodedRequestClosesConnection(t *testing.T) {
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	for _, tt := range []struct {
		name, framing string
	}{
		{"content-length and chunked", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"},
		{"chunked alone", "Transfer-Encoding: chunked\r\n"},
		{"chunked, obs-fold", "Transfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := "POST /api/v1/skills/check-updates HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + tt.framing + "\r\n" +
				"2\r\n[]\r\n0\r\n\r\n" +
				"GET /api/v1/skills/code-review HTTP/1.1\r\nHost: x\r\n\r\n"
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("first answer: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !resp.Close {
				t.Errorf("first answer: status %d, close %v (%s); want 200 and Connection: close", resp.StatusCode, resp.Close, body)
			}
			// The server closes: the reader sees EOF, never a second
			// answer (a deadline error would mean the connection stayed
			// open).
			if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 {
				t.Errorf("after the first answer: %q, %v; want EOF and nothing more (the smuggled GET was answered)", rest, err)
			}
		})
	}
	_, body := ts.Get(t, "/metrics")
	if !strings.Contains(string(body), "skillserver_http_transfer_encoded_requests_total 3\n") {
		t.Errorf("metrics do not count 3 transfer-encoded requests:\n%s", grepLines(string(body), "transfer_encoded"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// startChild runs `skillserver serve args...` as a separate process with
// at most nofile open files, and returns its base URL once it is ready.
func startChild(t *testing.T, nofile string, args ...string) string {
	t.Helper()
	skills, agents := exampleTree(t)
	full := append([]string{`ulimit -n ` + nofile + ` && exec "$0" "$@"`, skillserverBin(),
		"serve", "--listen", "127.0.0.1:0", "--log-format", "json", "--watch=false", "--shutdown-timeout", "2s",
		"--skills", skills, "--agents", agents}, args...)
	cmd := exec.Command("sh", append([]string{"-c"}, full...)...)
	cmd.Env = processEnv(nil)
	return startServerCmd(t, cmd).URL
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

//go:build e2e

package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestWriteStallTimeoutEndToEnd: a client on a real socket that asks for
// a file bigger than its send buffer can hold, reads a little and then stops reading has its
// connection closed by the server once write_stall_timeout passes with
// no progress; meanwhile and afterwards other clients are answered, and
// the request log line of the stalled download says it was cut.
func TestWriteStallTimeoutEndToEnd(t *testing.T) {
	const stall = 2 * time.Second
	// The file must outgrow what the server's send buffer can hold, or
	// the whole body is written before the client stops reading: twice
	// the most the kernel lets it grow to (tcp_wmem's maximum; 4 MiB on
	// Debian's defaults), and at least 8 MiB.
	size := 8 << 20
	if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 3 {
			if wmemMax, err := strconv.Atoi(f[2]); err == nil {
				size = max(size, 2*wmemMax)
			}
		}
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "big", "SKILL.md"), []byte("---\nname: big\ndescription: A skill with a large resource.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, size)
	_, _ = rand.Read(data) // incompressible: the file is served as it is
	if err := os.WriteFile(filepath.Join(root, "big", "data.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	limit := strconv.Itoa(size + 1<<20)
	ts := startServer(t, "--skills", root, "--write-stall-timeout", stall.String(), "--watch=false", "--max-file-bytes", limit, "--max-total-bytes", limit)
	addr := strings.TrimPrefix(ts.URL, "http://")
	const path = "/.well-known/skills/big/data.bin"

	// A small receive buffer, set before the connection is made so the
	// window it advertises is small too: the server's writes block once
	// its own send buffer is full.
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A bound on a hang of the test, never reached when the server
	// behaves: not a timed assertion.
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nX-Request-Id: stalled-download\r\n\r\n", path, addr); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(size) {
		t.Fatalf("status %d, Content-Length %d; want 200 and %d", resp.StatusCode, resp.ContentLength, size)
	}
	head := make([]byte, 4096)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatalf("reading the first bytes: %v", err)
	}
	// From here on the client reads nothing.

	served := func(when string) {
		t.Helper()
		for _, p := range []string{"/healthz", "/.well-known/agent-skills/index.json", "/.well-known/skills/big/SKILL.md"} {
			resp, _ := ts.Get(t, p)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: GET %s answered %d", when, p, resp.StatusCode)
			}
		}
	}
	served("while a download is stalled")

	// The server gives up on the download: its request line is written
	// when the handler returns, after the write that timed out.
	var line map[string]any
	fixture.Eventually(t, time.Minute, "the request log line of the stalled download", func() error {
		for l := range strings.SplitSeq(ts.Stderr.String(), "\n") {
			if strings.Contains(l, `"request_id":"stalled-download"`) {
				return json.Unmarshal([]byte(l), &line)
			}
		}
		return errors.New("not logged yet")
	})
	t.Logf("request log line: %v", line)
	if line["path"] != path || line["status"] != float64(http.StatusOK) {
		t.Errorf("log line %v: want path %s, status 200 (the headers had gone out)", line, path)
	}
	if got, _ := line["bytes"].(float64); got >= float64(size) || got < float64(len(head)) {
		t.Errorf("log line %v: bytes %v, want what the client got before it stopped reading (fewer than %d)", line, line["bytes"], size)
	}
	if e, _ := line["error"].(string); !strings.Contains(e, "write_stall_timeout") {
		t.Errorf("log line %v: error %q, want it to say the response made no progress for write_stall_timeout", line, e)
	}
	if got, _ := line["duration"].(float64); time.Duration(got) < stall {
		t.Errorf("log line %v: duration %v, want at least write_stall_timeout %v", line, time.Duration(got), stall)
	}

	// The connection is closed: reading on, the client gets what the
	// server's kernel still held, then the end of the stream, well short
	// of the body.
	rest, err := io.Copy(io.Discard, resp.Body)
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("reading on after the stall: %d more bytes, error %v; want the connection closed", rest, err)
	}
	if got := int64(len(head)) + rest; got >= int64(size) {
		t.Errorf("the client got all %d bytes", got)
	}
	t.Logf("the client got %d of %d bytes, then: %v", int64(len(head))+rest, size, err)

	served("after the stalled download was closed")
	if resp, body := ts.Get(t, path); resp.StatusCode != http.StatusOK || len(body) != size {
		t.Errorf("a client that reads: status %d, %d of %d bytes", resp.StatusCode, len(body), size)
	}
}

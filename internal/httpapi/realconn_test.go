package httpapi

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/transport"
)

// serveReal serves s on 127.0.0.1:0 the way the program does, and returns
// its address.
func serveReal(t testing.TB, s *Server, l transport.ConnLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, ln := transport.NewHTTPServer(s, ln, l, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// rawExchange sends req on a new connection to addr and reads until the
// server closes it, for at most 10s (then err is os.ErrDeadlineExceeded).
func rawExchange(t *testing.T, addr, req string) (string, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, req)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	return string(got), err
}

// A body that stops arriving is answered and its connection closed after
// ReadBodyTimeout; before, it held the connection for as long as the
// client liked.
func TestSlowBodyTimesOut(t *testing.T) {
	s, _ := newTestServer(t, Options{ReadBodyTimeout: 100 * time.Millisecond})
	addr := serveReal(t, s, transport.ConnLimits{ReadHeaderTimeout: time.Second})
	got, err := rawExchange(t, addr, "POST /api/v1/skills/check-updates HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n[")
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the connection is still open 10s after the body stopped; read_body_timeout is 100ms")
	}
	if !strings.HasPrefix(got, "HTTP/1.1 400 ") {
		t.Errorf("answer %q, want a 400", got)
	}
}

// HTTP/1.0 needs no Host header; documents name the address reached
// instead of answering 400.
func TestHTTP10WithoutHost(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	addr := serveReal(t, s, transport.ConnLimits{ReadHeaderTimeout: time.Second})
	got, _ := rawExchange(t, addr, "GET /.well-known/agent-skills/index.json HTTP/1.0\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.0 200 ") || !strings.Contains(got, `"http://`+addr+`/api/v1/`) {
		t.Errorf("answer %.300q, want a 200 with URLs on http://%s", got, addr)
	}
}

package transport

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// At the cap, a newcomer evicts the connection that has been idle the
// longest, never one whose request is being answered, and is answered.
// That holds for a download whose request came with a body too (here an
// empty chunked one, which some clients send with every request): its
// body went unread until the answer's headers, so it counted as still
// sending its request, and as the oldest it was evicted.
func TestConnCapEvictsIdleNotServing(t *testing.T) {
	for name, request := range map[string]string{
		"no body":            "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n",
		"empty chunked body": "GET /slow HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) { testConnCapEvictsIdle(t, request) })
	}
}

func testConnCapEvictsIdle(t *testing.T, request string) {
	release := make(chan struct{})
	inHandler := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(inHandler)
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	evicted := make(chan struct{}, 10)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The Layer marks the request as being answered, as the server has it.
	srv, ln := NewHTTPServer(NewLayer(LayerOptions{ReadBodyTimeout: time.Minute}).Wrap(h), ln, ConnLimits{MaxConns: 2, ReadHeaderTimeout: time.Minute,
		Evicted: func() { evicted <- struct{}{} }}, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		return c
	}
	busy := dial()
	_, _ = io.WriteString(busy, request)
	<-inHandler
	idle := dial() // says nothing, and came after busy
	fresh := dial()
	_, _ = io.WriteString(fresh, "GET /fast HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	got, err := io.ReadAll(fresh)
	if err != nil || !strings.Contains(string(got), "\r\n\r\nok") {
		t.Fatalf("newcomer at the cap: %q, %v", got, err)
	}
	<-evicted
	if n, err := idle.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("idle connection: read %d, %v; want it closed", n, err)
	}
	close(release)
	buf := make([]byte, 256)
	if n, err := busy.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "\r\n\r\nok") {
		t.Errorf("connection being answered: %q, %v; want its answer", buf[:n], err)
	}
}

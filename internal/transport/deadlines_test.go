package transport

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out the server ends of net.Pipe connections, so a
// server runs inside a synctest bubble.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

// stallServer serves a handler writing body in one Write, behind
// a Layer with write_stall_timeout stall as httpapi.NewServer has it; the handler's Write error
// arrives on the returned channel.
func stallServer(t *testing.T, stall time.Duration, body []byte) (*pipeListener, <-chan error) {
	t.Helper()
	written := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := w.Write(body)
		written <- err
	})
	ln := newPipeListener()
	srv, sln := NewHTTPServer(NewLayer(LayerOptions{WriteStallTimeout: stall}).Wrap(h), ln, ConnLimits{MaxConns: 4, ReadHeaderTimeout: time.Second}, nil)
	go func() { _ = srv.Serve(sln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln, written
}

// A client that asks for a large file and reads nothing has its
// connection closed after write_stall_timeout. Before, it held its slot
// for ever: max_connections of them made the server unreachable.
func TestStalledDownloadIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln, written := stallServer(t, time.Second, make([]byte, 1<<20))
		c := ln.dial()
		defer c.Close()
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		time.Sleep(time.Hour) // the client reads nothing
		synctest.Wait()
		select {
		case err := <-written:
			if err == nil {
				t.Fatal("the handler wrote 1 MiB to a client that read nothing")
			}
		default:
			t.Fatal("an hour after its client stopped reading, the response is still being written; write_stall_timeout is 1s")
		}
	})
}

// A download that keeps reading is never cut, however long it takes
// in all: here 16 pauses of nearly the stall timeout.
func TestSlowDownloadIsNotCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := bytes.Repeat([]byte("0123456789abcdef"), sendChunk) // 16 chunks
		ln, written := stallServer(t, time.Second, body)
		c := ln.dial()
		defer c.Close()
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		br := bufio.NewReaderSize(c, sendChunk)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		for {
			time.Sleep(900 * time.Millisecond)
			n, err := io.CopyN(&got, resp.Body, sendChunk)
			if err == io.EOF || n < sendChunk {
				break
			}
			if err != nil {
				t.Fatalf("after %d bytes: %v", got.Len(), err)
			}
		}
		if !bytes.Equal(got.Bytes(), body) {
			t.Errorf("got %d bytes, want the whole %d", got.Len(), len(body))
		}
		if err := <-written; err != nil {
			t.Errorf("handler: %v", err)
		}
	})
}

// A corked response (trackedConn.cork) whose last bytes stall past the
// timeout closes its connection. Before, net/http had been told those
// bytes were written, kept the connection, and answered the next
// pipelined request on it after a cut response.
func TestStalledCorkedResponseCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Etag"] = []string{`"x"`}
			writeBytes(w, r, make([]byte, 5000)) // kept back whole until uncork
		})
		ln := newPipeListener()
		srv, sln := NewHTTPServer(NewLayer(LayerOptions{WriteStallTimeout: time.Second}).Wrap(h), ln, ConnLimits{MaxConns: 4, ReadHeaderTimeout: time.Minute}, nil)
		go func() { _ = srv.Serve(sln) }()
		defer srv.Close()
		c := ln.dial()
		defer c.Close()
		_, _ = io.WriteString(c, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
		time.Sleep(time.Hour) // the client reads nothing
		synctest.Wait()
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		got, err := io.ReadAll(c)
		if err != nil || len(got) != 0 {
			t.Errorf("an hour after its response stalled, the connection gave %d more bytes and %v; want it closed", len(got), err)
		}
	})
}

package transport

import (
	"net"
	"net/http"
	"sync"
)

// cork makes Write keep back the small writes of one response, the header
// buffer net/http flushes before a body larger than it, and send them
// with the next large write or at uncork, in one system call: without
// it, a response of more than 4 KiB went out as two TCP segments, the
// client woken for each. Only the goroutine answering the connection's
// request writes to it, so the writes need no lock.
func (c *trackedConn) cork() {
	c.held = heldBuffers.Get().(*[]byte)
}

// uncork sends what Write kept back and makes it write through again.
// When that write fails, it closes the connection: net/http, which was
// told its bytes were written, would otherwise go on to the next request
// after a cut response, on a stream whose framing is broken.
func (c *trackedConn) uncork() error {
	held := c.held
	if held == nil {
		return nil
	}
	c.held = nil
	var err error
	if len(*held) > 0 {
		if _, err = c.writeThrough(*held); err != nil {
			_ = c.Close()
		}
	}
	*held = (*held)[:0]
	heldBuffers.Put(held)
	return err
}

// heldMax is the most a corked connection keeps back: net/http's header
// buffer, with room for the small writes that may follow it.
const heldMax = 8 << 10

var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, heldMax); return &b }}

func (c *trackedConn) Write(p []byte) (int, error) {
	held := c.held
	if held == nil || len(*held) == 0 && len(p) > heldMax {
		return c.writeThrough(p)
	}
	if len(*held)+len(p) <= heldMax {
		*held = append(*held, p...)
		return len(p), nil
	}
	// One writev of what was kept back and p. Its count includes the
	// kept bytes; the caller is told of p's only.
	kept := len(*held)
	if err := c.wd.begin(c.Conn, true); err != nil {
		return 0, err
	}
	bufs := net.Buffers{*held, p}
	n, err := bufs.WriteTo(c.Conn)
	c.wd.end()
	*held = (*held)[:0]
	return max(int(n)-kept, 0), err
}

// writeThrough writes p to the connection under the write deadline asked
// for.
func (c *trackedConn) writeThrough(p []byte) (int, error) {
	if err := c.wd.begin(c.Conn, true); err != nil {
		return 0, err
	}
	defer c.wd.end()
	return c.Conn.Write(p)
}

// writeWhole writes b, the whole body, and flushes it with the headers
// in one write system call where the connection allows
// (trackedConn.cork): a writev of both for a body larger than heldMax.
// A body over sendChunk is one write per chunk, the first with the
// headers. Corking needs a Layer's state (the connection it tracks);
// without one, or under a writer that cannot flush, b is written as is.
func writeWhole(w http.ResponseWriter, b []byte) {
	var tc *trackedConn
	var f http.Flusher
	state := requestState(w)
	if state != nil && len(b) >= corkMin && !fitsTheBuffer(w.Header(), len(b)) {
		tc = state.conn
		f, _ = beneath[http.Flusher](w)
	}
	if tc == nil || f == nil {
		_, _ = w.Write(b)
		return
	}
	tc.cork()
	// Uncorked whatever happens, a panic included: a connection left
	// corked would keep the next answer back. After the uncork below this
	// sends nothing.
	defer func() { _ = tc.uncork() }()
	if _, err := w.Write(b); err != nil {
		return // the connection failed; net/http closes it
	}
	f.Flush()
	// The last bytes kept back go out here: a client that stopped reading
	// fails this write, past write_stall_timeout.
	if err := tc.uncork(); err != nil {
		state.failed(err)
	}
}

// corkMin is the smallest body writeWhole corks the connection for: with
// less, the headers and body fit net/http's 4 KiB buffer, one write.
// Above it, fitsTheBuffer tells.
const corkMin = 2 << 10

// responseBuffer is the size of net/http's buffer of a response's
// status line, headers and first body bytes (bufio's default): what fits
// it goes out in one write when the handler returns.
const responseBuffer = 4 << 10

// statusAndDate is what net/http writes besides the headers it is given:
// the status line, Date and the blank line (an overestimate).
const statusAndDate = len("HTTP/1.1 200 OK\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n") + 16

// fitsTheBuffer reports whether a response of headers h and a body of n
// bytes fits net/http's buffer, so that corking would only copy it once
// more: a lone SKILL.md of 2 to 3.5 KiB.
func fitsTheBuffer(h http.Header, n int) bool {
	n += statusAndDate
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + len(": \r\n")
		}
	}
	return n <= responseBuffer
}

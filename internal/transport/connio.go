package transport

import (
	"io"
	"os"
	"sync/atomic"
	"time"
)

// A trackedConn's reads and deadlines: each deadline is kept until a read
// or write uses it (lazyDeadline).

func (c *trackedConn) SetReadDeadline(t time.Time) error {
	return c.rd.set(t, c.Conn, false)
}

func (c *trackedConn) SetWriteDeadline(t time.Time) error {
	return c.wd.set(t, c.Conn, true)
}

func (c *trackedConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *trackedConn) Read(p []byte) (int, error) {
	if err := c.rd.begin(c.Conn, false); err != nil {
		return 0, err
	}
	defer c.rd.end()
	return c.Conn.Read(p)
}

// ReadFrom sends r on the connection through the inner connection's
// ReadFrom, which net/http's response calls for a body copied into it:
// for a *net.TCPConn and a file (or a limited reader of one) the kernel
// sends the bytes itself, and KernelBytes counts them. What cork kept
// back goes first.
func (c *trackedConn) ReadFrom(r io.Reader) (int64, error) {
	if c.held != nil && len(*c.held) > 0 {
		kept := *c.held
		*c.held = kept[:0]
		if _, err := c.writeThrough(kept); err != nil {
			return 0, err
		}
	}
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok {
		return io.Copy(writerOnly{c}, r)
	}
	if err := c.wd.begin(c.Conn, true); err != nil {
		return 0, err
	}
	defer c.wd.end()
	n, err := rf.ReadFrom(r)
	if isFile(r) {
		kernelBytes.Add(n)
	}
	return n, err
}

// isFile reports whether r is a file, or a limited reader of one: what
// the kernel can send without the bytes passing through the process.
func isFile(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	_, ok := r.(*os.File)
	return ok
}

// kernelBytes counts the response bytes handed from a file to the
// connection's ReadFrom (sendfile on Linux).
var kernelBytes atomic.Int64

// KernelBytes is how many response bytes went from a file to a
// connection without being copied through the process, since start.
func KernelBytes() int64 { return kernelBytes.Load() }

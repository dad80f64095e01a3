package transport

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// bodyDeadline bounds the time to read r's body (timeout from the end
// of the headers; 0 does not), and tells the connection limiter when the
// request has arrived whole, so that from then on its connection is not
// evicted. http.Server.ReadTimeout is not used: it would also cancel the
// context of every response that takes longer to send.
func bodyDeadline(sw *statusWriter, r *http.Request, timeout time.Duration) {
	tc := sw.conn
	if r.Body == nil || r.Body == http.NoBody {
		if tc != nil {
			tc.l.setPhase(tc, phaseServing)
		}
		return
	}
	rc := http.NewResponseController(sw.ResponseWriter)
	if timeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(timeout)) // unsupported off a real connection
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, done: func() {
		if timeout > 0 {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if tc != nil {
			tc.l.setPhase(tc, phaseServing)
		}
	}}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		// No GET route reads a body, and net/http would read the first
		// unreadBodyBytes of it before the answer's headers anyway. Read
		// it here, under the deadline: a body nobody reads never ends,
		// and a download sent with one (an empty chunked body) counted as
		// still arriving, so it could be evicted half-way.
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, unreadBodyBytes))
	}
}

// unreadBodyBytes is how much of a body its handler left unread net/http
// reads before answering (its maxPostHandlerReadBytes); past it, it
// closes the connection after the answer.
const unreadBodyBytes = 256 << 10

// deadlineBody calls done once, when the body has been read to its end.
type deadlineBody struct {
	io.ReadCloser
	done func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.done)
	}
	return n, err
}

// sendChunk is how much of a response one write deadline covers. A
// write blocked on a full socket is woken only once about a third of the
// send buffer (up to 4 MiB on Linux) has drained, so chunks up to about
// that size set no stricter pace than the kernel does; and each chunk is
// a write system call: at 64 KiB the RFC index of 300 skills took four.
const sendChunk = 1 << 20

// sendStalls makes w close the connection of a response that makes no
// progress for stall (0: never): its client stopped reading. Without it,
// max_connections clients that asked for a large file and read nothing
// held every slot for good (a connection being answered is never
// evicted), and the server answered no one, not even /healthz. The write
// deadline moves on with every sendChunk written, so a download that
// keeps reading, however long, is never cut.
func (w *statusWriter) sendStalls(stall time.Duration) {
	if stall <= 0 {
		return
	}
	w.stall = stall
	if w.conn != nil {
		w.deadline = w.conn
	} else {
		w.deadline = writeDeadline(w.ResponseWriter)
	}
	w.extend(w.start)
}

// writeDeadline is the SetWriteDeadline of the connection under w's
// wrappers (http.ResponseController would be an allocation); off a real
// connection, one that does nothing.
func writeDeadline(w http.ResponseWriter) deadliner {
	if d, ok := beneath[deadliner](w); ok {
		return d
	}
	return noDeadline{}
}

type noDeadline struct{}

func (noDeadline) SetWriteDeadline(time.Time) error { return nil }

// extend moves the write deadline to stall after now.
func (w *statusWriter) extend(now time.Time) {
	if w.stall > 0 {
		_ = w.deadline.SetWriteDeadline(now.Add(w.stall))
	}
}

// send writes b under the stall deadline, a sendChunk at a time.
func (w *statusWriter) send(b []byte) (int, error) {
	if w.stall <= 0 {
		return w.ResponseWriter.Write(b)
	}
	var n int
	for len(b) > 0 {
		w.extend(time.Now())
		m, err := w.ResponseWriter.Write(b[:min(len(b), sendChunk)])
		n += m
		if err != nil {
			w.failed(err)
			return n, err
		}
		b = b[m:]
	}
	return n, nil
}

// failed tells the request log that the deadline cut the response, when
// err says so.
func (w *statusWriter) failed(err error) {
	if w.stall > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		w.stalled = w.stall
	}
}

// ReadFrom sends src as Write would, through the connection's ReadFrom
// (sendfile for a file) a sendChunk at a time under the stall deadline,
// counting what went out.
func (w *statusWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.head {
		return io.Copy(io.Discard, src)
	}
	if w.stall <= 0 {
		n, err := copyInto(w.ResponseWriter, src)
		w.bytes += n
		return n, err
	}
	// A limited reader is taken apart, so that each chunk is a limited
	// reader of the file itself, which the kernel can still send.
	inner, limit, lr := src, int64(-1), (*io.LimitedReader)(nil)
	if l, ok := src.(*io.LimitedReader); ok {
		inner, limit, lr = l.R, l.N, l
	}
	var total int64
	for {
		chunk := int64(sendChunk)
		if limit >= 0 {
			chunk = min(chunk, limit)
		}
		if chunk <= 0 {
			return total, nil
		}
		w.extend(time.Now())
		n, err := copyInto(w.ResponseWriter, io.LimitReader(inner, chunk))
		total += n
		w.bytes += n
		if lr != nil {
			limit -= n
			lr.N = limit
		}
		if err != nil {
			w.failed(err)
			return total, err
		}
		if n < chunk {
			return total, nil
		}
	}
}

// Write drops a HEAD answer's body (statusWriter.head) and sends the
// rest under the stall deadline (send), counting what went out.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.head {
		return len(b), nil
	}
	n, err := w.send(b)
	w.bytes += int64(n)
	return n, err
}

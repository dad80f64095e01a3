package httpapi

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// ConnLimits bound what clients can hold open. Zero values disable a bound.
type ConnLimits struct {
	// MaxConns is the most connections open at once. At the cap, a new
	// connection evicts the one that has waited longest on its client
	// (idle, or still sending its request), once that has had
	// evictGrace; connections whose request is being answered are never
	// evicted. Until one can be, newcomers wait in the listen backlog. So
	// accept never fails for want of descriptors, and slow clients can
	// only delay a new one, never shut it out.
	MaxConns int
	// ReadHeaderTimeout bounds the time to send the request headers.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers (net/http
	// answers 431 past it).
	MaxHeaderBytes int
	// Evicted, if set, is called for every connection evicted at the cap.
	Evicted func()
	// TransferEncoded, if set, is called for every request framed by
	// Transfer-Encoding, whose connection closes after its answer
	// (closeTransferEncoded).
	TransferEncoded func()
}

// NewHTTPServer returns the http.Server for h, with the limits, and the
// listener to serve it on (ln, wrapped to enforce MaxConns). errLog
// receives net/http's own complaints.
func NewHTTPServer(h http.Handler, ln net.Listener, l ConnLimits, errLog *log.Logger) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           closeTransferEncoded(h, l.TransferEncoded),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          errLog,
	}
	if l.MaxConns <= 0 {
		return srv, ln
	}
	cl := &connListener{Listener: ln, max: l.MaxConns, evicted: l.Evicted, conns: map[*trackedConn]struct{}{},
		changed: make(chan struct{}, 1), closed: make(chan struct{})}
	srv.ConnState = cl.track
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*trackedConn); ok {
			return context.WithValue(ctx, connKey{}, tc)
		}
		return ctx
	}
	return srv, cl
}

// closeTransferEncoded closes the connection of every request framed by
// Transfer-Encoding once it is answered. RFC 9112 §6.1 requires that of a
// request that also has a Content-Length, whose two framings a proxy in
// front may read differently (request smuggling): the bytes after the
// chunked body must never be read as another request. net/http removes
// the Content-Length of such a request before a handler sees it, so
// every transfer-encoded request is treated alike; clients of this
// server send bodies only to a few POST routes, and a new connection
// costs them little.
func closeTransferEncoded(h http.Handler, counted func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 && r.ProtoMajor == 1 {
			w.Header().Set("Connection", "close")
			if counted != nil {
				counted()
			}
		}
		h.ServeHTTP(w, r)
	})
}

// connPhase is where a connection is in its request cycle. Idle and
// reading connections may be evicted at the cap, serving ones never.
type connPhase int

const (
	phaseIdle    connPhase = iota // accepted or kept alive, no request yet
	phaseReading                  // request headers or body still arriving
	phaseServing                  // the request is being answered
)

type connKey struct{}

// connListener caps open connections, evicting at the cap (ConnLimits).
type connListener struct {
	net.Listener
	max       int
	evicted   func()
	changed   chan struct{} // a connection closed or changed phase
	closed    chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	conns     map[*trackedConn]struct{}
}

// trackedConn is a connection the listener counts. phase and since are
// guarded by the listener's mutex.
type trackedConn struct {
	net.Conn
	l     *connListener
	phase connPhase
	since time.Time
	once  sync.Once
	// held is what Write keeps back while the connection is corked
	// (cork); nil when it is not.
	held *[]byte
}

// evictGrace is how long a connection is safe from eviction after
// it was accepted or went idle, or its request began: time for a client
// to send its headers. At the cap, a flood of new connections can then
// only take turns, never evict each other (and legitimate newcomers)
// before they said anything.
const evictGrace = 500 * time.Millisecond

func (l *connListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	for {
		l.mu.Lock()
		var victim *trackedConn
		wait := time.Duration(-1)
		if len(l.conns) >= l.max {
			victim, wait = l.victimLocked(time.Now())
		}
		if victim == nil && wait >= 0 {
			l.mu.Unlock()
			if !l.await(wait) {
				_ = c.Close()
				return nil, net.ErrClosed
			}
			continue
		}
		if victim != nil {
			delete(l.conns, victim) // its slot is the newcomer's now
		}
		tc.since = time.Now()
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			_ = victim.Conn.Close()
			if l.evicted != nil {
				l.evicted()
			}
		}
		return tc, nil
	}
}

// victimLocked picks the connection to close for a newcomer: of those
// idle or sending their request for longer than evictGrace, the one doing
// so the longest. Without one, it says how long to wait before one might
// be (0: until a connection closes or changes phase).
func (l *connListener) victimLocked(now time.Time) (victim *trackedConn, wait time.Duration) {
	for c := range l.conns {
		if c.phase == phaseServing {
			continue
		}
		if victim == nil || c.since.Before(victim.since) {
			victim = c
		}
	}
	if victim == nil {
		return nil, 0
	}
	if left := victim.since.Add(evictGrace).Sub(now); left > 0 {
		return nil, left
	}
	return victim, 0
}

// await waits d (0: without a time limit) or until a connection closes or
// changes phase; false when the listener was closed.
func (l *connListener) await(d time.Duration) bool {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-l.changed:
	case <-timeout:
	case <-l.closed:
		return false
	}
	return true
}

// Close stops a waiting Accept too.
func (l *connListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// signal wakes a waiting Accept.
func (l *connListener) signal() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *connListener) setPhase(c *trackedConn, p connPhase) {
	l.mu.Lock()
	changed := c.phase != p
	if changed {
		c.phase, c.since = p, time.Now()
	}
	l.mu.Unlock()
	if changed && p != phaseServing {
		l.signal()
	}
}

// track follows net/http's view of each connection (http.Server.ConnState).
func (l *connListener) track(c net.Conn, state http.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	switch state {
	case http.StateActive:
		l.setPhase(tc, phaseReading)
	case http.StateIdle:
		l.setPhase(tc, phaseIdle)
	case http.StateHijacked, http.StateClosed:
		tc.release()
	}
}

func (c *trackedConn) release() {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.signal()
	})
}

func (c *trackedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

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
		if _, err = c.Conn.Write(*held); err != nil {
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
		return c.Conn.Write(p)
	}
	if len(*held)+len(p) <= heldMax {
		*held = append(*held, p...)
		return len(p), nil
	}
	// One writev of what was kept back and p. Its count includes the
	// kept bytes; the caller is told of p's only.
	kept := len(*held)
	bufs := net.Buffers{*held, p}
	n, err := bufs.WriteTo(c.Conn)
	*held = (*held)[:0]
	return max(int(n)-kept, 0), err
}

// CloseWrite lets net/http half-close a TCP connection before closing it,
// as it does on an unwrapped one, so the client reads the whole answer.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// bodyDeadline bounds the time to read a request body (readBodyTimeout
// from the end of the headers), and tells the connection limiter when the
// request has arrived whole, so that from then on its connection is not
// evicted. http.Server.ReadTimeout is not used: it would also cancel the
// context of every response that takes longer to send.
func bodyDeadline(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tc, _ := r.Context().Value(connKey{}).(*trackedConn)
			if r.Body == nil || r.Body == http.NoBody {
				if tc != nil {
					tc.l.setPhase(tc, phaseServing)
				}
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
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
				// No GET route reads a body, and net/http would read
				// the first unreadBodyBytes of it before the answer's
				// headers anyway. Read it here, under the deadline: a
				// body nobody reads never ends, and a download sent
				// with one (an empty chunked body) counted as still
				// arriving, so it could be evicted half-way.
				_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, unreadBodyBytes))
			}
			next.ServeHTTP(w, r)
		})
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

// sendDeadline closes the connection of a response that makes no progress
// for stall: its client stopped reading. Without it, max_connections
// clients that asked for a large file and read nothing held every slot
// for good (a connection being answered is never evicted), and the
// server answered no one, not even /healthz. The deadline moves on with
// every sendChunk written, so a download that keeps reading, however
// long, is never cut.
func sendDeadline(stall time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if stall <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The clock is read once per end: observe's start and end
			// times are this one's too.
			state := requestState(w)
			start := time.Now()
			if state != nil {
				start = state.start
			}
			sw := &stallWriter{ResponseWriter: w, conn: writeDeadline(w), stall: stall, state: state}
			sw.extend(start) // also replaces the previous request's deadline
			next.ServeHTTP(sw, r)
			end := time.Now()
			if state != nil {
				state.end = end
			}
			sw.extend(end) // for what net/http flushes after the handler
		})
	}
}

// deadliner is what net/http's ResponseWriter offers to
// http.ResponseController.
type deadliner interface{ SetWriteDeadline(time.Time) error }

// writeDeadline is the SetWriteDeadline of the connection under w's
// wrappers, found once per request (http.ResponseController would be an
// allocation); off a real connection, one that does nothing.
func writeDeadline(w http.ResponseWriter) deadliner {
	if d, ok := beneath[deadliner](w); ok {
		return d
	}
	return noDeadline{}
}

type noDeadline struct{}

func (noDeadline) SetWriteDeadline(time.Time) error { return nil }

// stallWriter moves the connection's write deadline on as a response is
// written (sendDeadline).
type stallWriter struct {
	http.ResponseWriter
	conn  deadliner
	stall time.Duration
	state *statusWriter // told when the deadline cut the response; nil outside observe
}

func (w *stallWriter) extend(now time.Time) {
	_ = w.conn.SetWriteDeadline(now.Add(w.stall))
}

func (w *stallWriter) Write(b []byte) (int, error) {
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
func (w *stallWriter) failed(err error) {
	if w.state != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		w.state.stalled = w.stall
	}
}

func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

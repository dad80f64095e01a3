package transport

import (
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
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
		changed: make(chan struct{}, 1), closed: make(chan struct{}), epoch: time.Now()}
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
	phaseEvicted                  // chosen to be closed at the cap: final
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
	// waiting counts Accepts at the cap: only then does a phase change
	// wake one (signal). An Accept counts itself before it reads the
	// phases and a change is made before the count is read, so one of
	// the two sees the other.
	waiting atomic.Int32
	// epoch is what since counts from.
	epoch time.Time
	mu    sync.Mutex // guards conns
	conns map[*trackedConn]struct{}
}

// trackedConn is a connection the listener counts. Its phase changes
// three times a request, without the listener's lock.
type trackedConn struct {
	net.Conn
	l     *connListener
	phase atomic.Int32 // a connPhase
	// since is when an idle or reading connection entered its phase, in
	// nanoseconds from the listener's epoch (serving ones need none).
	since atomic.Int64
	once  sync.Once
	// held is what Write keeps back while the connection is corked
	// (cork); nil when it is not.
	held *[]byte
	// rd and wd are the read and write deadlines, given to the
	// connection when a read or write uses them (lazydeadline.go).
	rd, wd lazyDeadline
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
			l.waiting.Add(1)
			victim, wait = l.victimLocked(l.now())
			if victim != nil || wait < 0 {
				l.waiting.Add(-1)
			}
		}
		if victim == nil && wait >= 0 {
			l.mu.Unlock()
			ok := l.await(wait)
			l.waiting.Add(-1)
			if !ok {
				_ = c.Close()
				return nil, net.ErrClosed
			}
			continue
		}
		if victim != nil {
			delete(l.conns, victim) // its slot is the newcomer's now
		}
		tc.since.Store(l.now())
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

// now is the time since the listener's epoch, in nanoseconds.
func (l *connListener) now() int64 { return int64(time.Since(l.epoch)) }

// victimLocked picks the connection to close for a newcomer (now from
// the listener's epoch): of those idle or sending their request for
// longer than evictGrace, the one doing so the longest, marked evicted so
// that it can no longer begin to be answered. Without one, it says how
// long to wait before one might be (0: until a connection closes or
// changes phase).
func (l *connListener) victimLocked(now int64) (victim *trackedConn, wait time.Duration) {
	for {
		victim = nil
		var oldest int64
		var phase int32
		for c := range l.conns {
			p := c.phase.Load()
			if p == int32(phaseServing) || p == int32(phaseEvicted) {
				continue
			}
			if since := c.since.Load(); victim == nil || since < oldest {
				victim, oldest, phase = c, since, p
			}
		}
		if victim == nil {
			return nil, 0
		}
		if left := time.Duration(oldest) + evictGrace - time.Duration(now); left > 0 {
			return nil, left
		}
		// It may have begun to be answered since it was read: then look
		// again.
		if victim.phase.CompareAndSwap(phase, int32(phaseEvicted)) {
			return victim, 0
		}
	}
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

// setPhase moves c to phase p, unless it was evicted.
func (l *connListener) setPhase(c *trackedConn, p connPhase) {
	for {
		old := c.phase.Load()
		if old == int32(p) || old == int32(phaseEvicted) {
			return
		}
		if p != phaseServing {
			// Before the phase: an Accept that sees the phase sees the
			// time too.
			c.since.Store(l.now())
		}
		if c.phase.CompareAndSwap(old, int32(p)) {
			break
		}
	}
	if p != phaseServing && l.waiting.Load() > 0 {
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

// CloseWrite lets net/http half-close a TCP connection before closing it,
// as it does on an unwrapped one, so the client reads the whole answer.
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

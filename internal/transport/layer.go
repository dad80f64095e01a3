package transport

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// LayerOptions says what a Layer does around each request.
type LayerOptions struct {
	// Log gets one line per request ("request"), at info level, or at
	// debug level for a Quiet route; nil logs nothing.
	Log *slog.Logger
	// Lines, if set, writes those lines without slog's generic machinery;
	// they are the same bytes (RequestLog).
	Lines *RequestLog
	// Observer, if set, is told of every request, by route pattern.
	Observer Observer
	// Quiet holds the route patterns probed often (health checks, the
	// metrics), whose requests are logged at debug level.
	Quiet map[string]bool
	// Path is the request's path as logged (with any secret in it
	// redacted); nil logs r.URL.Path.
	Path func(r *http.Request) string
	// Unmatched is the route pattern of a request no Routed handler
	// answered (the router's own 404, or a 405 for a pattern without the
	// method): "" for none, logged and counted as "unmatched". nil is
	// "" for every request.
	Unmatched func(r *http.Request) string
	// WriteStallTimeout closes the connection of a response that makes
	// no progress this long (sendStalls); 0 does not.
	WriteStallTimeout time.Duration
	// ReadBodyTimeout bounds the time to read a request body
	// (bodyDeadline); 0 does not.
	ReadBodyTimeout time.Duration
}

// A Layer is the transport's middleware, the first every request passes,
// in one wrapper of the ResponseWriter (statusWriter) and no other: it
// gives each request its state (state.go) and an ID, keeps the body and
// send deadlines (deadlines.go), drops the body of a HEAD answer, then
// writes one log line and the metrics for the request, labelled by
// route pattern, never by raw path.
type Layer struct {
	opts LayerOptions
	ids  *requestIDs
}

// NewLayer returns a Layer doing what opts says.
func NewLayer(opts LayerOptions) *Layer {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Layer{opts: opts, ids: newRequestIDs()}
}

// bind is rt's binding by l, made on first use.
func (rt *routeTag) bind(l *Layer) *routeBinding {
	if b := rt.bound.Load(); b != nil {
		return b
	}
	b := &routeBinding{level: l.level(rt.pattern)}
	if o := l.opts.Observer; o != nil {
		b.observe = o.ForRoute(rt.pattern)
	}
	rt.bound.Store(b)
	return b
}

// level is the log level of the requests of pattern.
func (l *Layer) level(pattern string) slog.Level {
	if l.opts.Quiet[pattern] {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// Routed tags the requests h answers with its route pattern, for the
// Layer: logged and counted under it, with the route's own observer.
func Routed(pattern string, h http.HandlerFunc) http.HandlerFunc {
	rt := &routeTag{pattern: pattern}
	return func(w http.ResponseWriter, r *http.Request) {
		if sw := requestState(w); sw != nil {
			sw.route = rt
		}
		h(w, r)
	}
}

// firstValueOf is h.Get(key) for a key in canonical form, without
// canonicalizing it again.
func firstValueOf(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// validRequestID reports whether an incoming X-Request-Id may be reused:
// 1 to 64 of [A-Za-z0-9._-].
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// requestIDs generates request IDs: 16 hex digits of a 64-bit counter
// that starts at a random value per process, so IDs are unique within
// a process and unlikely to repeat across processes, at the cost of an
// atomic add (crypto/rand per request cost a system call).
type requestIDs struct{ next atomic.Uint64 }

func newRequestIDs() *requestIDs {
	var b [8]byte
	_, _ = rand.Read(b[:])
	ids := &requestIDs{}
	ids.next.Store(binary.BigEndian.Uint64(b[:]))
	return ids
}

func (g *requestIDs) new() string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], g.next.Add(1))
	return hex.EncodeToString(b[:])
}

// Wrap is the Layer around next: it gives each request an ID
// (X-Request-Id, reused when the client or a proxy sent a sane one), the
// state the rest of the chain shares, and its deadlines, then writes one
// log line and the metrics for it. The clock is read once at each end;
// the log, the duration and the deadlines share the readings.
func (l *Layer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, start: time.Now(), head: r.Method == http.MethodHead}
		sw.conn, _ = r.Context().Value(connKey{}).(*trackedConn)
		sw.sendStalls(l.opts.WriteStallTimeout) // also replaces the previous request's deadline
		id := firstValueOf(r.Header, "X-Request-Id")
		if !validRequestID(id) {
			id = l.ids.new()
		}
		w.Header()["X-Request-Id"] = sw.value(slotRequestID, id)
		bodyDeadline(sw, r, l.opts.ReadBodyTimeout)
		next.ServeHTTP(sw, r)
		end := time.Now()
		sw.extend(end) // for what net/http flushes after the handler
		l.record(sw, r, id, end)
	})
}

// record writes the log line and the metrics of the request r answered
// through sw, ended at end.
func (l *Layer) record(sw *statusWriter, r *http.Request, id string, end time.Time) {
	var cause error
	if sw.status == 0 {
		sw.status = http.StatusOK
		if cause = context.Cause(r.Context()); cause != nil {
			sw.status = StatusClientClosed // nothing was sent
		}
	}
	d := end.Sub(sw.start)
	var pattern string
	var level slog.Level
	if rt := sw.route; rt != nil {
		b := rt.bind(l)
		if b.observe != nil {
			b.observe(r.Method, sw.status, d)
		}
		pattern, level = rt.pattern, b.level
	} else {
		// No route answered: a 404, or a 405 for a pattern without the
		// method.
		if l.opts.Unmatched != nil {
			pattern = l.opts.Unmatched(r)
		}
		if pattern == "" {
			pattern = "unmatched"
		}
		level = l.level(pattern)
		if o := l.opts.Observer; o != nil {
			o.ObserveRequest(pattern, r.Method, sw.status, d)
		}
	}
	ctx := r.Context()
	log := l.opts.Log
	if !log.Enabled(ctx, level) {
		return
	}
	path := r.URL.Path
	if l.opts.Path != nil {
		path = l.opts.Path(r)
	}
	line := requestLine{time: end, level: level, id: id, method: r.Method, route: pattern,
		path: path, token: sw.token, status: sw.status, bytes: sw.bytes, duration: d}
	switch {
	case cause != nil:
		line.err = cause.Error()
	case sw.stalled > 0:
		line.err = "no progress for " + sw.stalled.String() + " (write_stall_timeout): the client stopped reading or reads too slowly; the response was cut and the connection closed"
	}
	if rl := l.opts.Lines; rl == nil || !rl.write(&line) {
		_ = log.Handler().Handle(ctx, line.record())
	}
}

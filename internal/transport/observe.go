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

// Recording says what a Recorder does with each request.
type Recording struct {
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
}

// A Recorder gives each request an ID, then writes one log line and the
// metrics for it, labelled by route pattern, never by raw path.
type Recorder struct {
	rec Recording
	ids *requestIDs
}

// NewRecorder returns a Recorder doing what rec says.
func NewRecorder(rec Recording) *Recorder {
	if rec.Log == nil {
		rec.Log = slog.New(slog.DiscardHandler)
	}
	return &Recorder{rec: rec, ids: newRequestIDs()}
}

// route is a route pattern (Routed), with what the Recorder derives from
// it once: its log level and its metric observer, bound to its label.
type route struct {
	pattern string
	bound   atomic.Pointer[routeBinding]
}

// routeBinding is what a Recorder derived from a route's pattern.
type routeBinding struct {
	level   slog.Level
	observe RequestObserver // nil without an Observer
}

// bind is rt's binding by rec, made on first use.
func (rt *route) bind(rec *Recorder) *routeBinding {
	if b := rt.bound.Load(); b != nil {
		return b
	}
	b := &routeBinding{level: rec.level(rt.pattern)}
	if o := rec.rec.Observer; o != nil {
		b.observe = o.ForRoute(rt.pattern)
	}
	rt.bound.Store(b)
	return b
}

// level is the log level of the requests of pattern.
func (rec *Recorder) level(pattern string) slog.Level {
	if rec.rec.Quiet[pattern] {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// Routed tags the requests h answers with its route pattern, for the
// Recorder: logged and counted under it, with the route's own observer.
func Routed(pattern string, h http.HandlerFunc) http.HandlerFunc {
	rt := &route{pattern: pattern}
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

// Observe is the Recorder's middleware: it gives each request an ID
// (X-Request-Id, reused when the client or a proxy sent a sane one) and
// the state the rest of the chain shares (state.go), then writes one log
// line and the metrics for it.
func (rec *Recorder) Observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, start: time.Now()}
		id := firstValueOf(r.Header, "X-Request-Id")
		if !validRequestID(id) {
			id = rec.ids.new()
		}
		w.Header()["X-Request-Id"] = sw.value(slotRequestID, id)
		next.ServeHTTP(sw, r)
		var cause error
		if sw.status == 0 {
			sw.status = http.StatusOK
			if cause = context.Cause(r.Context()); cause != nil {
				sw.status = StatusClientClosed // nothing was sent
			}
		}
		end := sw.end
		if end.IsZero() {
			end = time.Now()
		}
		d := end.Sub(sw.start)
		var pattern string
		var level slog.Level
		if rt := sw.route; rt != nil {
			b := rt.bind(rec)
			if b.observe != nil {
				b.observe(r.Method, sw.status, d)
			}
			pattern, level = rt.pattern, b.level
		} else {
			// No route answered: a 404, or a 405 for a pattern without the
			// method.
			if rec.rec.Unmatched != nil {
				pattern = rec.rec.Unmatched(r)
			}
			if pattern == "" {
				pattern = "unmatched"
			}
			level = rec.level(pattern)
			if o := rec.rec.Observer; o != nil {
				o.ObserveRequest(pattern, r.Method, sw.status, d)
			}
		}
		ctx := r.Context()
		log := rec.rec.Log
		if !log.Enabled(ctx, level) {
			return
		}
		path := r.URL.Path
		if rec.rec.Path != nil {
			path = rec.rec.Path(r)
		}
		l := requestLine{time: end, level: level, id: id, method: r.Method, route: pattern,
			path: path, token: sw.token, status: sw.status, bytes: sw.bytes, duration: d}
		switch {
		case cause != nil:
			l.err = cause.Error()
		case sw.stalled > 0:
			l.err = "no progress for " + sw.stalled.String() + " (write_stall_timeout): the client stopped reading or reads too slowly; the response was cut and the connection closed"
		}
		if rl := rec.rec.Lines; rl == nil || !rl.write(&l) {
			_ = log.Handler().Handle(ctx, l.record())
		}
	})
}

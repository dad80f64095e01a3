package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
)

// statusWriter records what a handler wrote, for the request log, and
// what inner middleware and the route tell observe about the request
// (found with requestState): carried here rather than in the request's
// context, which would copy the request once more.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// token is the name (never the secret) of the request's read token.
	token string
	// route is the route that answered (routed), nil when none did.
	route *route
	// values holds header values of this response (value).
	values [slots]string
	// start is when the request began; end, when sendDeadline saw its
	// handler return (zero without it): one reading of the clock for both.
	start, end time.Time
	// query is the parsed query string (parseQuery).
	query url.Values
	// stalled is write_stall_timeout when sendDeadline cut the response,
	// which made no progress for that long.
	stalled time.Duration
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Slots of statusWriter.values.
const (
	slotRequestID = iota
	slotETag
	slotContentLength
	slots
)

// value is v as a header value held by w: one allocation, the
// statusWriter's, for the values every response gets its own of. The
// slice has no room to grow, so an append to it copies.
func (w *statusWriter) value(slot int, v string) []string {
	w.values[slot] = v
	return w.values[slot : slot+1 : slot+1]
}

// headerValue is v as a header value, held by the request's statusWriter
// when there is one.
func headerValue(w http.ResponseWriter, slot int, v string) []string {
	if sw := requestState(w); sw != nil {
		return sw.value(slot, v)
	}
	return []string{v}
}

// firstValueOf is h.Get(key) for a key in canonical form, without
// canonicalizing it again.
func firstValueOf(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Header values every response of a kind gets, shared by all of them:
// each is a slice with no room to grow, so an append to one copies it,
// and nothing writes into one.
var (
	jsonContentTypes     = []string{jsonContentType}
	markdownContentTypes = []string{markdownContentType}
	octetStream          = []string{"application/octet-stream"}
	cacheShorts          = []string{cacheShort}
	cacheImmutables      = []string{cacheImmutable}
	varyAcceptEncoding   = []string{"Accept-Encoding"}
	gzipEncoding         = []string{"gzip"}
	acceptRangesBytes    = []string{"bytes"}
	nosniff              = []string{"nosniff"}
	sandboxed            = []string{"default-src 'none'; sandbox"}
)

// requestState is the statusWriter under w's wrappers, nil outside
// observe.
func requestState(w http.ResponseWriter) *statusWriter {
	sw, _ := beneath[*statusWriter](w)
	return sw
}

// beneath is the first of w and the writers under its wrappers (Unwrap)
// that is a T.
func beneath[T any](w http.ResponseWriter) (T, bool) {
	for {
		if x, ok := w.(T); ok {
			return x, true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			var none T
			return none, false
		}
		w = u.Unwrap()
	}
}

// statusClientClosed is logged and counted for a request whose client
// went away before anything was answered (nginx's 499), so a reload the
// client gave up on is not logged as a 200.
const statusClientClosed = 499

// quietRoutes are probed often; their requests are logged at debug level.
var quietRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/health": true, "/metrics": true}

// route is a registered route pattern, with what observe derives from it
// once: its log level and its metric observer, bound to its label.
type route struct {
	pattern string
	level   slog.Level
	observe atomic.Pointer[RequestObserver]
}

func newRoute(pattern string) *route {
	rt := &route{pattern: pattern, level: slog.LevelInfo}
	if quietRoutes[pattern] {
		rt.level = slog.LevelDebug
	}
	return rt
}

// observer is rt's observer from o, bound on first use.
func (rt *route) observer(o Observer) RequestObserver {
	if f := rt.observe.Load(); f != nil {
		return *f
	}
	f := o.ForRoute(rt.pattern)
	rt.observe.Store(&f)
	return f
}

// routed tags the requests h answers with its route pattern, for observe.
func routed(pattern string, h http.HandlerFunc) http.HandlerFunc {
	rt := newRoute(pattern)
	return func(w http.ResponseWriter, r *http.Request) {
		if sw := requestState(w); sw != nil {
			sw.route = rt
		}
		h(w, r)
	}
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

// observe gives each request an ID (X-Request-Id, reused when the client
// or a proxy sent a sane one), then writes one log line and the metrics
// for it, labelled by route pattern, never by raw path.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, start: time.Now()}
		id := firstValueOf(r.Header, "X-Request-Id")
		if !validRequestID(id) {
			id = s.ids.new()
		}
		w.Header()["X-Request-Id"] = sw.value(slotRequestID, id)
		next.ServeHTTP(sw, r)
		var cause error
		if sw.status == 0 {
			sw.status = http.StatusOK
			if cause = context.Cause(r.Context()); cause != nil {
				sw.status = statusClientClosed // nothing was sent
			}
		}
		end := sw.end
		if end.IsZero() {
			end = time.Now()
		}
		d := end.Sub(sw.start)
		rt := sw.route
		switch {
		case rt != nil:
			if s.opts.Observer != nil {
				rt.observer(s.opts.Observer)(r.Method, sw.status, d)
			}
		default:
			// No route answered: a 404, or a 405 for a pattern without the
			// method.
			pattern := chi.RouteContext(r.Context()).RoutePattern()
			if pattern == "" {
				pattern = "unmatched"
			}
			rt = newRoute(pattern)
			if s.opts.Observer != nil {
				s.opts.Observer.ObserveRequest(rt.pattern, r.Method, sw.status, d)
			}
		}
		ctx := r.Context()
		if !s.log.Enabled(ctx, rt.level) {
			return
		}
		l := requestLine{time: end, level: rt.level, id: id, method: r.Method, route: rt.pattern,
			path: s.redactedPath(r), token: sw.token, status: sw.status, bytes: sw.bytes, duration: d}
		switch {
		case cause != nil:
			l.err = cause.Error()
		case sw.stalled > 0:
			l.err = "no progress for " + sw.stalled.String() + " (write_stall_timeout): the client stopped reading or reads too slowly; the response was cut and the connection closed"
		}
		if rl := s.opts.RequestLog; rl == nil || !rl.write(&l) {
			_ = s.log.Handler().Handle(ctx, l.record())
		}
	})
}

// recoverPanics turns a handler panic into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				if s.opts.Observer != nil {
					s.opts.Observer.ObservePanic()
				}
				s.fail(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// cors allows browsers on the configured origin to read responses (GET,
// HEAD, and POST for check-updates), and answers preflight requests.
// Credentials are never implied: the admin endpoint needs a bearer token
// that a browser does not attach by itself.
func (s *Server) cors(next http.Handler) http.Handler {
	origin := s.opts.CORSAllowOrigin
	if origin == "" {
		return next
	}
	origins := []string{origin}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost:
			h["Access-Control-Allow-Origin"] = origins
			h["Access-Control-Expose-Headers"] = corsExposed
		case http.MethodOptions:
			if r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-None-Match, Range")
				h.Set("Access-Control-Max-Age", "86400")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if origin != "*" {
			h.Add("Vary", "Origin")
		}
		next.ServeHTTP(w, r)
	})
}

var corsExposed = []string{"ETag, Content-Length, Content-Range, X-Total-Count, X-Request-Id"}

// headWriter drops the body of a HEAD response. net/http does this on a
// real connection; doing it here too keeps every handler, and any other
// http.Handler host, free of HEAD special cases.
type headWriter struct{ http.ResponseWriter }

func (w headWriter) Write(b []byte) (int, error) { return len(b), nil }

func (w headWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func discardHeadBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w = headWriter{w}
		}
		next.ServeHTTP(w, r)
	})
}

// parseQuery answers 400 when the query string does not parse, instead of
// letting handlers see what r.URL.Query() kept of it: past
// url.ParseQuery's parameter limit it keeps nothing, and a pinning
// ?digest= silently vanished. Handlers read the parsed values with query;
// they are kept on the request's statusWriter, as a context value would
// copy the request.
func (s *Server) parseQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			next.ServeHTTP(w, r)
			return
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: the query string does not parse: %w", errBadRequest, err))
			return
		}
		if sw := requestState(w); sw != nil {
			sw.query = q
		}
		next.ServeHTTP(w, r)
	})
}

// query is the request's parsed query string (parseQuery); nil for none.
func query(w http.ResponseWriter, r *http.Request) url.Values {
	if sw := requestState(w); sw != nil {
		return sw.query
	}
	q, _ := url.ParseQuery(r.URL.RawQuery) // outside observe: parsed again
	return q
}

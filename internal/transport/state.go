package transport

import (
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// statusWriter is the one wrapper of a request's ResponseWriter (Layer):
// it records what a handler wrote, for the request log, keeps the
// response's deadline and drops a HEAD answer's body, and holds what
// inner middleware and the route tell the Layer about the request (found
// with requestState): carried here rather than in the request's context,
// which would copy the request once more.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	// head is set for a HEAD request: Write drops the body, so handlers
	// answer HEAD as the GET (net/http does this on a real connection;
	// doing it here too keeps every handler, and any other host of them,
	// free of HEAD special cases).
	head bool
	// conn is the connection the limiter tracks, nil without one.
	conn *trackedConn
	// stall is write_stall_timeout (0: none), and deadline what moves the
	// connection's write deadline on (sendStalls).
	stall    time.Duration
	deadline deadliner
	// token is the name (never the secret) of the request's read token.
	token string
	// route is the route that answered (Routed), nil when none did.
	route *routeTag
	// values holds header values of this response (value).
	values [slots]string
	// start is when the request began.
	start time.Time
	// query is the parsed query string (SetQuery).
	query url.Values
	// stalled is write_stall_timeout when the stall deadline cut the
	// response, which made no progress for that long.
	stalled time.Duration
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
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

// ETagValue is etag as the value of the ETag header of w's response,
// held by the request's state (no allocation of its own).
func ETagValue(w http.ResponseWriter, etag string) []string {
	return headerValue(w, slotETag, etag)
}

// requestState is the statusWriter under w's wrappers, nil outside a
// Layer.
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

// Status is the status w's response was given so far (0 for none yet, or
// outside a Layer).
func Status(w http.ResponseWriter) int {
	if sw := requestState(w); sw != nil {
		return sw.status
	}
	return 0
}

// SetToken names, for the request log, the read token the request came
// with (its name, never its secret).
func SetToken(w http.ResponseWriter, name string) {
	if sw := requestState(w); sw != nil {
		sw.token = name
	}
}

// SetQuery keeps the request's parsed query string for Query: on the
// request's state, as a context value would copy the request.
func SetQuery(w http.ResponseWriter, q url.Values) {
	if sw := requestState(w); sw != nil {
		sw.query = q
	}
}

// Query is the request's parsed query string (SetQuery); nil for none.
func Query(w http.ResponseWriter, r *http.Request) url.Values {
	if sw := requestState(w); sw != nil {
		return sw.query
	}
	q, _ := url.ParseQuery(r.URL.RawQuery) // outside a Layer: parsed again
	return q
}

// routeTag is a route pattern (Routed), with what the Layer derives from
// it once: its log level and its metric observer, bound to its label.
type routeTag struct {
	pattern string
	bound   atomic.Pointer[routeBinding]
}

// routeBinding is what a Layer derived from a route's pattern.
type routeBinding struct {
	level   slog.Level
	observe RequestObserver // nil without an Observer
}

// deadliner is what net/http's ResponseWriter offers to
// http.ResponseController.
type deadliner interface{ SetWriteDeadline(time.Time) error }

package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/go-chi/chi/v5"
)

// statusWriter records what a handler wrote, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
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

// statusClientClosed is logged and counted for a request whose client
// went away before anything was answered (nginx's 499), so a reload the
// client gave up on is not logged as a 200.
const statusClientClosed = 499

// quietRoutes are probed often; their requests are logged at debug level.
var quietRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/health": true, "/metrics": true}

// requestIDRE is what an incoming X-Request-Id may hold to be reused.
var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// requestInfo is what inner middleware tells observe about a request:
// the name (never the secret) of its read token.
type requestInfo struct{ token string }

type requestInfoKey struct{}

// observe gives each request an ID (X-Request-Id, reused when the client
// or a proxy sent a sane one), then writes one log line and the metrics
// for it, labelled by route pattern, never by raw path.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRE.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		sw := &statusWriter{ResponseWriter: w}
		info := &requestInfo{}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
		route := chi.RouteContext(r.Context()).RoutePattern()
		if route == "" {
			route = "unmatched"
		}
		var cause error
		if sw.status == 0 {
			sw.status = http.StatusOK
			if cause = context.Cause(r.Context()); cause != nil {
				sw.status = statusClientClosed // nothing was sent
			}
		}
		d := time.Since(start)
		if s.opts.Observer != nil {
			s.opts.Observer.ObserveRequest(route, r.Method, sw.status, d)
		}
		level := slog.LevelInfo
		if quietRoutes[route] {
			level = slog.LevelDebug
		}
		attrs := []any{"request_id", id, "method", r.Method, "route", route, "path", s.redactedPath(r),
			"status", sw.status, "bytes", sw.bytes, "duration", d}
		if info.token != "" {
			attrs = append(attrs, "token", info.token)
		}
		if cause != nil {
			attrs = append(attrs, "error", cause.Error())
		}
		s.log.Log(r.Context(), level, "request", attrs...)
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodPost:
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", "ETag, Content-Length, Content-Range, X-Total-Count, X-Request-Id")
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

type queryKey struct{}

// parseQuery answers 400 when the query string does not parse, instead of
// letting handlers see what r.URL.Query() kept of it: past
// url.ParseQuery's parameter limit it keeps nothing, and a pinning
// ?digest= silently vanished. Handlers read the parsed values with query.
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
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), queryKey{}, q)))
	})
}

// query is the request's parsed query string (parseQuery).
func query(r *http.Request) url.Values {
	q, _ := r.Context().Value(queryKey{}).(url.Values)
	return q
}

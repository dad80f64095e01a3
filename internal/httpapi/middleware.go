package httpapi

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/skillserver/skillserver/internal/transport"
)

// quietRoutes are probed often; their requests are logged at debug level.
var quietRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/health": true, "/metrics": true}

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
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-None-Match, Range, Mcp-Protocol-Version, Mcp-Method, Mcp-Name")
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

// parseQuery answers 400 when the query string does not parse, instead of
// letting handlers see what r.URL.Query() kept of it: past
// url.ParseQuery's parameter limit it keeps nothing, and a pinning
// ?digest= silently vanished. Handlers read the parsed values with
// transport.Query; they are kept on the request's state, as a context
// value would copy the request.
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
		transport.SetQuery(w, q)
		next.ServeHTTP(w, r)
	})
}

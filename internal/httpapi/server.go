// Package httpapi serves a catalogue snapshot over HTTP: routes, handlers,
// errors, auth, the pages' routes and admin. It is the only importer of
// chi, and it never touches the filesystem: every byte comes from the
// current snapshot. Document paths, kinds and JSON encoding come from
// internal/feed; how the answers travel (connections, deadlines, the
// per-response state, the request log, metrics per route, serving the
// bytes) from internal/transport.
//
// It must not import internal/scan, internal/reload, configuration or
// metrics packages (metrics come in through the Observer interface).
package httpapi

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/page"
	"github.com/skillserver/skillserver/internal/transport"
)

const (
	jsonContentType     = feed.JSONContentType
	markdownContentType = feed.MarkdownContentType
	cacheImmutable      = feed.CacheImmutable
	cacheShort          = feed.CacheShort
)

// Snapshots is what handlers need from the catalogue: the current
// snapshot, and where the bytes or document a request asks for are now
// (catalog.Catalog).
type Snapshots interface {
	Current() *catalog.Snapshot
	// Locate looks in snap, then in the snapshots retired within the
	// retention window, then in retention (catalog.Catalog.Locate).
	Locate(snap *catalog.Snapshot, q catalog.Lookup) (catalog.Found, bool)
}

// BuildInfo describes the running binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	BuildDate string `json:"buildDate,omitempty"`
	GoVersion string `json:"goVersion"`
}

// Options configures a Server.
type Options struct {
	// BaseURL is the public base URL, without a trailing slash; "" derives
	// it from each request.
	BaseURL string
	// TrustProxy lets X-Forwarded-Proto/Host set the derived base URL.
	TrustProxy bool
	// AllowedHosts, when BaseURL is "", lists the hosts (host[:port],
	// lower case) documents may be derived for; others get 421. Empty
	// allows any valid host.
	AllowedHosts []string
	// CORSAllowOrigin is sent as Access-Control-Allow-Origin on GET and
	// HEAD; "" sends none.
	CORSAllowOrigin string
	Build           BuildInfo
	// AdminToken enables POST /-/reload for requests bearing it.
	AdminToken string
	// ReadTokens, if set, makes the feed private: every route but the
	// probes and the admin route needs one of its tokens (auth.go).
	ReadTokens ReadTokens
	Reloader   Reloader
	// AuthFailures, if set, answers 429 to a client address that sent
	// too many wrong admin or read tokens (authlimit.go).
	AuthFailures AuthLimiter
	// Observer, if set, is told about every request and recovered panic.
	Observer Observer
	// Metrics, if set, is served at /metrics.
	Metrics http.Handler
	// ReadBodyTimeout bounds the time to read a request body; 0 does not.
	ReadBodyTimeout time.Duration
	// WriteStallTimeout closes the connection of a response that makes no
	// progress this long (its client reads nothing); 0 does not.
	WriteStallTimeout time.Duration
	// RequestLog, if set, writes the request log's lines without slog's
	// generic machinery; they are the same bytes (transport.RequestLog).
	RequestLog *transport.RequestLog
	// MaxRanges is the most ranges a Range header may name before it is
	// ignored and the whole body sent; 0 allows any number.
	MaxRanges int
	// CataloguePageSize is how many items one page of the HTML catalogue
	// lists; 0: one page lists all.
	CataloguePageSize int
	// MaxSearchResults caps take of a search and limit of find: larger
	// values are taken as it. MaxUpdateChecks bounds the items of one
	// check-updates request, MaxBodyBytes its body (both 400 beyond).
	// MaxQueryBytes bounds q of a search or the catalogue (400 beyond).
	// 0 is off (no bound), as in the configuration.
	MaxSearchResults int
	MaxUpdateChecks  int
	MaxBodyBytes     int
	MaxQueryBytes    int
}

// Observer records request metrics (metrics.Metrics): those of every
// request, per route (transport.Observer), and these.
type Observer interface {
	transport.Observer
	ObservePanic()
	// ObserveRefusal counts a request refused for its read token;
	// reason is "missing" or "unknown".
	ObserveRefusal(reason string)
}

// Server is the HTTP face of the catalogue.
type Server struct {
	cat     Snapshots
	opts    Options
	log     *slog.Logger
	ready   atomic.Bool
	router  chi.Router
	handler http.Handler
	// exact holds, per method (GET, HEAD), the routes without parameters
	// (most documents), each with its middleware: found by one map
	// lookup, without chi's routing context, which copies the request.
	exact map[string]map[string]http.Handler
	// blobFile is the content-addressed files' route (feed.PathBlobFile)
	// with its middleware, for the same reason: every file a client
	// syncs is fetched there. ServeHTTP finds it by the path's prefix.
	blobFile http.Handler
	// installs counts downloads per skill for the find route.
	installs installCounts
	// pages renders the HTML catalogue.
	pages *page.Renderer
	// bytes serves bodies.
	bytes transport.Bytes
	// lastBase is the base URL derived last: clients of one server
	// mostly name it by one host, so it is checked and built once.
	lastBase atomic.Pointer[derivedBase]
}

// NewServer returns a Server reading snapshots from cat.
func NewServer(cat Snapshots, opts Options, log *slog.Logger) *Server {
	s := &Server{cat: cat, opts: opts, log: log,
		pages: page.New(page.Options{PageSize: opts.CataloguePageSize, Private: opts.ReadTokens != nil}),
		bytes: transport.Bytes{MaxRanges: opts.MaxRanges, Error: serveContentError}}
	layer := transport.NewLayer(transport.LayerOptions{Log: log, Lines: opts.RequestLog, Observer: opts.Observer,
		Quiet: quietRoutes, Path: s.redactedPath, Unmatched: unmatchedRoute,
		WriteStallTimeout: opts.WriteStallTimeout, ReadBodyTimeout: opts.ReadBodyTimeout})
	r := chi.NewRouter()
	s.router = r
	r.Use(layer.Wrap, s.recoverPanics, s.cors, s.authenticate, s.parseQuery)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, errNotFound)
	})
	r.MethodNotAllowed(s.methodNotAllowed)
	s.routes(r)
	s.handler = r
	s.exact = exactRoutes(r)
	s.blobFile = routeChain(r, feed.PathBlobFile, transport.Routed(feed.PathBlobFile, s.handleBlobFilePath))
	return s
}

// routeChain is h behind the middleware chi runs for pattern's GET.
func routeChain(r chi.Routes, pattern string, h http.Handler) http.Handler {
	var chain http.Handler
	_ = chi.Walk(r, func(method, route string, _ http.Handler, mw ...func(http.Handler) http.Handler) error {
		if method == http.MethodGet && route == pattern {
			chain = chi.Chain(mw...).Handler(h)
		}
		return nil
	})
	if chain == nil {
		panic("httpapi: no GET route " + pattern)
	}
	return chain
}

// exactRoutes derives, from the route table, the handlers of the GET and
// HEAD routes whose pattern is a plain path, with the middleware chi
// would run. chi prefers such a route to any pattern with parameters, so
// a request for exactly that path ends there either way.
func exactRoutes(r chi.Routes) map[string]map[string]http.Handler {
	exact := map[string]map[string]http.Handler{http.MethodGet: {}, http.MethodHead: {}}
	_ = chi.Walk(r, func(method, route string, h http.Handler, mw ...func(http.Handler) http.Handler) error {
		if m := exact[method]; m != nil && !strings.ContainsAny(route, "{*") {
			m[route] = chi.Chain(mw...).Handler(h)
		}
		return nil
	})
	return exact
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m := s.exact[r.Method]; m != nil && r.URL.RawPath == "" {
		if h, ok := m[r.URL.Path]; ok {
			h.ServeHTTP(w, r)
			return
		}
		if _, _, ok := blobFileOf(r.URL.Path); ok {
			s.blobFile.ServeHTTP(w, r)
			return
		}
	}
	s.handler.ServeHTTP(w, r)
}

// unmatchedRoute is the pattern chi matched for a request no route
// answered: a 405's pattern, "" for a 404.
func unmatchedRoute(r *http.Request) string {
	return chi.RouteContext(r.Context()).RoutePattern()
}

// SetReady switches /readyz between 200 and 503.
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// Routes lists every registered method and route pattern, for the
// contract test against api/openapi.yaml.
func (s *Server) Routes() []string {
	var out []string
	_ = chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, method+" "+route)
		return nil
	})
	return out
}

// methods the 405 handler probes to fill in Allow.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range probeMethods {
		if s.router.Match(chi.NewRouteContext(), m, routingPath(r)) {
			allow = append(allow, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	s.fail(w, r, errMethodNotAllowed)
}

func routingPath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}

// validHost reports whether host may go into a base URL: a DNS name
// (labels of letters, digits and inner hyphens, and an optional final
// dot) or an IP literal, with an
// optional port 1-65535. Anything else in Host is refused, since it would
// end up in every absolute URL of the response.
func validHost(host string) bool {
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		name, port = host[:i], host[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] < '1' || port[0] > '9' {
			return false
		}
	}
	if inner, ok := strings.CutPrefix(name, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		a, err := netip.ParseAddr(inner)
		return ok && err == nil && a.Is6() && a.Zone() == ""
	}
	if name == "" || len(name) > 253 {
		return false
	}
	// A fully qualified name ends in the root's empty label, as in
	// "skills.example.com.": clients send what they were given.
	for label := range strings.SplitSeq(strings.TrimSuffix(name, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// baseURL is the public base for absolute URLs in this response.
func (s *Server) baseURL(r *http.Request) (string, bool) {
	if s.opts.BaseURL != "" {
		return s.opts.BaseURL, true
	}
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if s.opts.TrustProxy {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	if host == "" {
		// HTTP/1.0 needs no Host: name the address the client reached.
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host = a.String()
		}
	}
	if last := s.lastBase.Load(); last != nil && last.scheme == scheme && last.host == host {
		return last.url, true
	}
	if !validHost(host) {
		return "", false
	}
	b := &derivedBase{scheme: scheme, host: host, url: scheme + "://" + strings.ToLower(host)}
	s.lastBase.Store(b)
	return b.url, true
}

// derivedBase is a base URL derived from a request's scheme and host.
type derivedBase struct{ scheme, host, url string }

func firstValue(h string) string {
	first, _, _ := strings.Cut(h, ",")
	return strings.TrimSpace(first)
}

// snapshot returns the current snapshot, or answers 503 and returns nil
// before the first scan finished.
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) *catalog.Snapshot {
	snap := s.cat.Current()
	if snap == nil {
		s.fail(w, r, errNotReady)
	}
	return snap
}

// serveBytes answers with b, its ETag set, under http.ServeContent's
// semantics (If-None-Match, Range, HEAD), its error statuses as JSON
// (transport.Bytes).
func (s *Server) serveBytes(w http.ResponseWriter, r *http.Request, b []byte) {
	s.bytes.Serve(w, r, b)
}

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
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/mcpapi"
	"github.com/skillserver/skillserver/internal/page"
	"github.com/skillserver/skillserver/internal/transport"
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
	// CatalogueViewMaxBytes is the largest file the HTML catalogue's file
	// view shows and its version comparison diffs; 0: no bound.
	CatalogueViewMaxBytes int
	// MaxSearchResults caps take of a search and limit of find: larger
	// values are taken as it. MaxUpdateChecks bounds the items of one
	// check-updates request, MaxBodyBytes its body (both 400 beyond).
	// MaxQueryBytes bounds q of a search or the catalogue (400 beyond).
	// 0 is off (no bound), as in the configuration.
	MaxSearchResults int
	MaxUpdateChecks  int
	MaxBodyBytes     int
	MaxQueryBytes    int
	// MCP configures the MCP endpoint (feed.PathMCP).
	MCP mcpapi.Options
}

// Observer records request metrics (metrics.Metrics): those of every
// request, per route (transport.Observer), and these.
type Observer interface {
	transport.Observer
	ObservePanic()
	// ObserveRefusal counts a request refused for its read token;
	// reason is "missing", "probe", "unknown" or "throttled".
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
	// mcp is the MCP endpoint.
	mcp *mcpapi.Handler
	// bytes serves bodies.
	bytes transport.Bytes
	// lastBase is the base URL derived last: clients of one server
	// mostly name it by one host, so it is checked and built once.
	lastBase atomic.Pointer[derivedBase]
}

// SetReady switches /readyz between 200 and 503.
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// serveBytes answers with b, its ETag set, under http.ServeContent's
// semantics (If-None-Match, Range, HEAD), its error statuses as JSON
// (transport.Bytes).
func (s *Server) serveBytes(w http.ResponseWriter, r *http.Request, b []byte) {
	s.bytes.Serve(w, r, b)
}

// serveBlob answers with the blob b: from memory, from the state
// directory's hot cache of small blobs, or from its file there (sent by
// the kernel where it can: transport.Bytes.File).
// A blob whose file is gone or fails verification answers 500 (the state
// directory reported the fault) and false.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request, b content.Blob) bool {
	if data, ok := b.InMemory(); ok {
		s.bytes.Serve(w, r, data)
		return true
	}
	if data, ok, err := b.Small(); ok {
		if err != nil {
			s.fail(w, r, fmt.Errorf("blob %s cannot be served from the state directory: %w", b.Digest(), err))
			return false
		}
		s.bytes.Serve(w, r, data)
		return true
	}
	f, _, err := b.OpenFile()
	if err != nil {
		s.fail(w, r, fmt.Errorf("blob %s cannot be served from the state directory: %w", b.Digest(), err))
		return false
	}
	defer f.Close()
	s.bytes.File(w, r, f, b.Size())
	return true
}

// ReadTokens is the read tokens in force (*access.File); the set may be
// replaced between requests, never during one.
type ReadTokens interface {
	Tokens() *access.Set
}

// Reloader runs a full rescan and returns when its snapshot is live.
type Reloader interface {
	ReloadNow(ctx context.Context) (*catalog.Snapshot, error)
}

// AuthLimiter counts the failed authentications of each client address
// (throttle.Limiter): Fail records one, and reports false, with how long
// to wait, once the address has failed too often.
type AuthLimiter interface {
	Fail(key string, now time.Time) (retryAfter time.Duration, ok bool)
	// Held reports, recording nothing, whether the address has no
	// failure left, and how long until it has one.
	Held(key string, now time.Time) (retryAfter time.Duration, held bool)
}

// derivedBase is a base URL derived from a request's scheme and host.
type derivedBase struct{ scheme, host, url string }

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

// blobPrefix is where feed.PathBlobFile's parameters begin.
var blobPrefix = strings.TrimSuffix(feed.PathBlob, "{digest}")

// blobFileOf splits path, a feed.PathBlobFile path without a path
// token, into its digest's hex and the file's name; ok is false for any
// other path, which chi routes instead.
func blobFileOf(path string) (digest, name string, ok bool) {
	rest, ok := strings.CutPrefix(path, blobPrefix)
	if !ok {
		return "", "", false
	}
	digest, name, ok = strings.Cut(rest, "/")
	return digest, name, ok && name != ""
}

package httpapi

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/mcpapi"
	"github.com/skillserver/skillserver/internal/page"
	"github.com/skillserver/skillserver/internal/transport"
)

// registerRoutes registers every route the server answers. Each GET route also
// answers HEAD. api/openapi.yaml documents exactly this list.
func (s *Server) registerRoutes(r chi.Router) {
	routeGet(r, "/healthz", s.handleHealthz)
	routeGet(r, "/readyz", s.handleReadyz)
	routeGet(r, feed.PathHealth, s.handleHealth)
	routeGet(r, "/api/v1/info", s.handleInfo)
	routePost(r, "/-/reload", s.handleReload)
	if s.opts.Metrics != nil {
		routeGet(r, "/metrics", s.wholeTreeOnly(s.opts.Metrics.ServeHTTP))
	}

	// Every document of the feed (docs/http-api.md, "RFC discovery feed", §3, §4, §5), at the paths
	// its links name: the feed's table of paths (internal/feed/paths.go).
	for _, k := range feed.Kinds() {
		for _, p := range k.Patterns() {
			pattern, key := documentRoute(k, p)
			routeGet(r, pattern, s.handleDocument(key))
		}
	}
	// The RFC feed's SKILL.md of a skill's latest version, and the legacy
	// v0.1 layout's files (skillkit, OpenCode).
	routeGet(r, feed.PathLatestSkillMD, s.handleLatestSkillMD)
	routeGet(r, feed.PathLegacyFile, s.handleLegacyFile)

	// Skills over MCP (docs/http-api.md, "Skills over MCP"): POST carries
	// JSON-RPC; GET and DELETE answer 405 as any other method, since no
	// session is kept: no stream to open, none to end.
	routePost(r, feed.PathMCP, s.handleMCP)

	// The ClawHub-compatible read API (docs/http-api.md, "ClawHub read
	// API"), under its own prefix; its writes are refused (clawWrite).
	routeGet(r, feed.PathClawHubDiscovery, s.handleClawHubDiscovery)
	routeGet(r, feed.PathClawHubSearch, s.handleClawHubSearch)
	routeGet(r, feed.PathClawHubSkills, s.handleClawHubList)
	routeGet(r, feed.PathClawHubSkill, s.handleClawHubSkill)
	routeGet(r, feed.PathClawHubVersions, s.handleClawHubVersions)
	routeGet(r, feed.PathClawHubVersion, s.handleClawHubVersion)
	routeGet(r, feed.PathClawHubFile, s.handleClawHubFile)
	routeGet(r, feed.PathClawHubDownload, s.handleClawHubDownload)
	routeGet(r, feed.PathClawHubResolve, s.handleClawHubResolve)
	routeGet(r, feed.PathClawHubWhoami, s.handleClawHubWhoami)

	// Search and the update check (docs/http-api.md, "Search and read API").
	routeGet(r, feed.PathSkillSearch, s.handleSearch(false))
	routePost(r, feed.PathCheckUpdates, s.handleCheckUpdates)
	routeGet(r, feed.PathSubagentSearch, s.handleSearch(true))
	// The same ranking for the skills CLI's `find` (SKILLS_API_URL).
	routeGet(r, feed.PathFind, s.handleFind)

	// Discovery of the above: the RFC 9727 API catalog and the OpenAPI
	// description it names.
	routeGet(r, feed.PathRoot, s.handleRoot)
	routeGet(r, feed.PathAPICatalog, s.handleAPICatalog)
	routeGet(r, feed.PathOpenAPI, s.handleOpenAPI)

	// The HTML catalogue's pages (the catalogue itself is PathRoot for a
	// browser), their assets and the admin's view of the scan's problems.
	routeGet(r, feed.PathUISkill, s.handleItemPage(false))
	routeGet(r, feed.PathUISkillVersion, s.handleItemPage(false))
	routeGet(r, feed.PathUISkillFile, s.handleFilePage)
	routeGet(r, feed.PathUISkillCompare, s.handleComparePage)
	routeGet(r, feed.PathUIAgent, s.handleItemPage(true))
	routeGet(r, feed.PathUIAgentVersion, s.handleItemPage(true))
	routeGet(r, feed.PathUIAsset, s.handleAsset)
	routeGet(r, feed.PathUIProblems, s.handleProblems)

	// Artifact bytes (docs/http-api.md, "Artifact bytes"): the
	// content-addressed files the documents advertise, and the same bytes
	// by name and version, pinned with ?digest= or not. {version} may be
	// "latest".
	routeGet(r, feed.PathSkillMD, s.handleSkillMD)
	routeGet(r, feed.PathArchive, s.handleArchive)
	routeGet(r, feed.PathResource, s.handleResource)
	routeGet(r, feed.PathAgentMD, s.handleAgentMD)
	routeGet(r, feed.PathBlob, s.handleBlob)
	routeGet(r, feed.PathBlobFile, s.handleBlobFile)
}

// routeGet registers h for GET and HEAD of pattern, tagged with it
// (transport.Routed) so that the request log and the metrics name its
// pattern, and count it with the route's own observer.
func routeGet(r chi.Router, pattern string, h http.HandlerFunc) {
	h = transport.Routed(pattern, h)
	r.Get(pattern, h)
	r.Head(pattern, h)
}

// routePost registers h for POST to pattern, tagged as get does.
func routePost(r chi.Router, pattern string, h http.HandlerFunc) {
	r.Post(pattern, transport.Routed(pattern, h))
}

// documentRoute adapts a document path of the feed to chi and returns
// the key function of its route. chi cannot match "{version}.json": its
// parameters end at the first ".", and versions hold dots. Such a segment
// is matched whole, as {file}, and ".json" stripped here.
func documentRoute(k feed.DocKind, pattern string) (string, docKeyFunc) {
	segs := strings.Split(pattern, "/")
	jsonParam := ""
	for i, seg := range segs {
		if p, ok := strings.CutSuffix(seg, "}.json"); ok && strings.HasPrefix(p, "{") {
			jsonParam, segs[i] = p[1:], "{file}"
		}
	}
	return strings.Join(segs, "/"), func(r *http.Request) (feed.DocKey, bool) {
		return k.KeyOf(func(name string) (string, bool) {
			if name == jsonParam {
				return jsonFile(r)
			}
			return param(r, name)
		})
	}
}

// wholeTreeOnly answers 404 to a read token that sees only some items, as
// for anything else outside its scope: what h tells (the metrics count
// the whole tree's items and problems) is not within it.
func (s *Server) wholeTreeOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if g, ok := r.Context().Value(grantKey{}).(grant); ok && g.token.Scoped() {
			s.fail(w, r, errNotFound)
			return
		}
		h(w, r)
	}
}

// NewServer returns a Server reading snapshots from cat.
func NewServer(cat Snapshots, opts Options, log *slog.Logger) *Server {
	s := &Server{cat: cat, opts: opts, log: log,
		pages: page.New(page.Options{PageSize: opts.CataloguePageSize, Private: opts.ReadTokens != nil, MaxViewBytes: int64(opts.CatalogueViewMaxBytes)}),
		bytes: transport.Bytes{MaxRanges: opts.MaxRanges, Error: serveContentError}}
	s.mcp = mcpapi.New(opts.MCP, s.mcpReader)
	layer := transport.NewLayer(transport.LayerOptions{Log: log, Lines: opts.RequestLog, Observer: opts.Observer,
		Quiet: quietRoutes, Path: s.redactedPath, Unmatched: unmatchedRoute,
		WriteStallTimeout: opts.WriteStallTimeout, ReadBodyTimeout: opts.ReadBodyTimeout})
	r := chi.NewRouter()
	s.router = r
	r.Use(layer.Wrap, s.recoverPanics, s.cors, s.authenticate, s.parseQuery)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		if clawWrite(r) {
			s.handleClawHubWrite(w, r)
			return
		}
		s.fail(w, r, errNotFound)
	})
	r.MethodNotAllowed(s.methodNotAllowed)
	s.registerRoutes(r)
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

// unmatchedRoute is the pattern chi matched for a request no route
// answered: a 405's pattern, "" for a 404.
func unmatchedRoute(r *http.Request) string {
	return chi.RouteContext(r.Context()).RoutePattern()
}

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
	if clawWrite(r) {
		clawText(w, http.StatusMethodNotAllowed, clawReadOnly)
		return
	}
	s.fail(w, r, errMethodNotAllowed)
}

func routingPath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}

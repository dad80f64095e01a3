package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/transport"
)

// routes registers every route the server answers. Each GET route also
// answers HEAD. api/openapi.yaml documents exactly this list.
func (s *Server) routes(r chi.Router) {
	get(r, "/healthz", s.handleHealthz)
	get(r, "/readyz", s.handleReadyz)
	get(r, feed.PathHealth, s.handleHealth)
	get(r, "/api/v1/info", s.handleInfo)
	post(r, "/-/reload", s.handleReload)
	if s.opts.Metrics != nil {
		get(r, "/metrics", s.wholeTreeOnly(s.opts.Metrics.ServeHTTP))
	}

	// Every document of the feed (docs/http-api.md, "RFC discovery feed", §3, §4, §5), at the paths
	// its links name: the feed's table of paths (internal/feed/paths.go).
	for _, k := range feed.Kinds() {
		for _, p := range k.Patterns() {
			pattern, key := documentRoute(k, p)
			get(r, pattern, s.handleDocument(key))
		}
	}
	// The RFC feed's SKILL.md of a skill's latest version, and the legacy
	// v0.1 layout's files (skillkit, OpenCode).
	get(r, feed.PathLatestSkillMD, s.handleLatestSkillMD)
	get(r, feed.PathLegacyFile, s.handleLegacyFile)

	// Search and the update check (docs/http-api.md, "Search and read API").
	get(r, feed.PathSkillSearch, s.handleSearch(false))
	post(r, feed.PathCheckUpdates, s.handleCheckUpdates)
	get(r, feed.PathSubagentSearch, s.handleSearch(true))
	// The same ranking for the skills CLI's `find` (SKILLS_API_URL).
	get(r, feed.PathFind, s.handleFind)

	// Discovery of the above: the RFC 9727 API catalog and the OpenAPI
	// description it names.
	get(r, feed.PathRoot, s.handleRoot)
	get(r, feed.PathAPICatalog, s.handleAPICatalog)
	get(r, feed.PathOpenAPI, s.handleOpenAPI)

	// The HTML catalogue's pages (the catalogue itself is PathRoot for a
	// browser), their assets and the admin's view of the scan's problems.
	get(r, feed.PathUISkill, s.handleItemPage(false))
	get(r, feed.PathUISkillVersion, s.handleItemPage(false))
	get(r, feed.PathUIAgent, s.handleItemPage(true))
	get(r, feed.PathUIAgentVersion, s.handleItemPage(true))
	get(r, feed.PathUIAsset, s.handleAsset)
	get(r, feed.PathUIProblems, s.handleProblems)

	// Artifact bytes (docs/http-api.md, "Artifact bytes"): the
	// content-addressed files the documents advertise, and the same bytes
	// by name and version, pinned with ?digest= or not. {version} may be
	// "latest".
	get(r, feed.PathSkillMD, s.handleSkillMD)
	get(r, feed.PathArchive, s.handleArchive)
	get(r, feed.PathResource, s.handleResource)
	get(r, feed.PathAgentMD, s.handleAgentMD)
	get(r, feed.PathBlob, s.handleBlob)
	get(r, feed.PathBlobFile, s.handleBlobFile)
}

// get registers h for GET and HEAD of pattern, tagged with it
// (transport.Routed) so that the request log and the metrics name its
// pattern, and count it with the route's own observer.
func get(r chi.Router, pattern string, h http.HandlerFunc) {
	h = transport.Routed(pattern, h)
	r.Get(pattern, h)
	r.Head(pattern, h)
}

// post registers h for POST to pattern, tagged as get does.
func post(r chi.Router, pattern string, h http.HandlerFunc) {
	r.Post(pattern, transport.Routed(pattern, h))
}

// docKeyFunc resolves a request to the document it names; ok is false when
// the path cannot name one.
type docKeyFunc func(*http.Request) (key feed.DocKey, ok bool)

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

// jsonFile strips ".json" from the {file} parameter.
func jsonFile(r *http.Request) (string, bool) {
	f, ok := param(r, "file")
	base, found := strings.CutSuffix(f, ".json")
	return base, ok && found && base != ""
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

// param returns a decoded path parameter. chi matches on the escaped path
// when the request has one, so its parameters are escaped then.
func param(r *http.Request, key string) (string, bool) {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v, true
	}
	u, err := url.PathUnescape(v)
	return u, err == nil
}

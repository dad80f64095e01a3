package httpapi

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/page"
	"github.com/skillserver/skillserver/internal/transport"
)

// The HTML catalogue (internal/page): the catalogue at / for clients
// that prefer HTML, a page per skill and sub-agent, their assets, and
// the admin's view of the last scan's problems. Every other route, and
// every miss outside these pages, answers as before: JSON.

// prefersHTML reports whether the request's Accept header asks for HTML
// at least as much as for JSON: text/html (or application/xhtml+xml)
// named with a q above 0, and no higher q for application/json. A client
// that sends */* alone (curl, most libraries) or nothing gets what it
// got before the pages existed.
func prefersHTML(r *http.Request) bool {
	var htmlQ, jsonQ float64 = -1, -1
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		switch mt {
		case "text/html", "application/xhtml+xml":
			htmlQ = max(htmlQ, q)
		case "application/json":
			jsonQ = max(jsonQ, q)
		}
	}
	return htmlQ > 0 && htmlQ >= jsonQ
}

// setPageSecurity is what every HTML response sends: page.SecurityHeaders
// (a token's view keeps the stricter Referrer-Policy authenticate set),
// and this origin only for the windows it opens and the sites embedding
// its responses.
func setPageSecurity(h http.Header) {
	for _, sh := range page.SecurityHeaders {
		if sh.Name == "Referrer-Policy" && h.Get(sh.Name) != "" {
			continue
		}
		h.Set(sh.Name, sh.Value)
	}
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// pageSource is documentSource with the base's path token taken off: a
// page writes the view's prefix itself, so that it can also name the bare
// base (netclaw's feed URL).
func (s *Server) pageSource(w http.ResponseWriter, r *http.Request) (*catalog.Snapshot, feed.Base) {
	snap, base := s.documentSource(w, r)
	base.URL = strings.TrimSuffix(base.URL, tokenPrefix(r))
	return snap, base
}

// handleCatalogue answers / for a client that prefers HTML.
func (s *Server) handleCatalogue(w http.ResponseWriter, r *http.Request) {
	snap, base := s.pageSource(w, r)
	if snap == nil {
		return
	}
	qs := transport.Query(w, r)
	n, err := intParam(w, r, "page", 1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := viewOf(r, snap.Feed())
	text, err := s.searchText(w, r)
	if err != nil {
		s.fail(w, r, err) // as a bad page number is
		return
	}
	doc, ok := s.pages.Catalogue(f, base, page.Query{Text: text, Tag: qs.Get("tag"), Kind: qs.Get("kind"), N: n})
	if !ok {
		s.failPage(w, r, f, fmt.Errorf("%w: the catalogue has no page %d", errNotFound, n))
		return
	}
	s.servePage(w, r, doc)
}

// handleItemPage answers the page of a skill (agents false) or a
// sub-agent, of its latest version or of the route's {version}.
func (s *Server) handleItemPage(agents bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		snap, base := s.pageSource(w, r)
		if snap == nil {
			return
		}
		name, ok1 := param(r, "name")
		version, ok2 := param(r, "version")
		f := viewOf(r, snap.Feed())
		var doc *feed.Document
		ok, what := false, "skill"
		switch {
		case !ok1 || !ok2:
		case agents:
			doc, ok = s.pages.Agent(f, snap.Store, base, name, version)
			what = "sub-agent"
		default:
			doc, ok = s.pages.Skill(f, snap.Store, base, name, version)
		}
		if !ok {
			s.failPage(w, r, f, fmt.Errorf("%w: no %s named %q with version %q", errNotFound, what, name, orLatest(version)))
			return
		}
		s.servePage(w, r, doc)
	}
}

// handleFilePage answers the view of one file of a skill's version.
func (s *Server) handleFilePage(w http.ResponseWriter, r *http.Request) {
	s.versionPage(w, r, "*", s.pages.File, func(name, version, file string) string {
		return fmt.Sprintf("skill %q version %q has no file %q", name, orLatest(version), file)
	})
}

// handleComparePage answers what changed from {other} to {version} of a
// skill.
func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	s.versionPage(w, r, "other", s.pages.Compare, func(name, version, other string) string {
		return fmt.Sprintf("skill %q has no versions %q and %q", name, orLatest(version), orLatest(other))
	})
}

// versionPage answers a page of a skill's {version} and one more
// parameter, third: render makes it, and missing says what a miss lacks.
func (s *Server) versionPage(w http.ResponseWriter, r *http.Request, third string,
	render func(f *feed.Feed, blobs page.Blobs, base feed.Base, name, version, arg string) (*feed.Document, bool),
	missing func(name, version, arg string) string) {
	snap, base := s.pageSource(w, r)
	if snap == nil {
		return
	}
	name, ok1 := param(r, "name")
	version, ok2 := param(r, "version")
	arg, ok3 := param(r, third)
	f := viewOf(r, snap.Feed())
	var doc *feed.Document
	ok := false
	if ok1 && ok2 && ok3 {
		doc, ok = render(f, snap.Store, base, name, version, arg)
	}
	if !ok {
		s.failPage(w, r, f, fmt.Errorf("%w: %s", errNotFound, missing(name, version, arg)))
		return
	}
	s.servePage(w, r, doc)
}

func orLatest(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}

// servePage writes a page as documents are written (ETag, gzip, 304).
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, doc *feed.Document) {
	h := w.Header()
	h.Add("Vary", "Accept")
	setPageSecurity(h)
	s.serveDocument(w, r, doc, pageContentTypes)
}

// pageContentTypes is page.ContentType as a shared header value.
var pageContentTypes = []string{page.ContentType}

// failPage answers a miss of the pages: an HTML page for a reader who
// asked for HTML, JSON for everyone else.
func (s *Server) failPage(w http.ResponseWriter, r *http.Request, f *feed.Feed, err error) {
	if !prefersHTML(r) {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	setPageSecurity(h)
	h.Set("Content-Type", page.ContentType)
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write(s.pages.NotFound(f, err.Error()))
}

// failUnauthorizedPage answers a browser on a private feed without a
// token: a 401 page that says how to open the feed with one. It names
// the server, never an item.
func (s *Server) failUnauthorizedPage(w http.ResponseWriter, r *http.Request, f *feed.Feed) {
	base, err := s.documentBase(r)
	if err != nil {
		base.URL = "" // a bad Host: the page names the path alone
	}
	h := w.Header()
	setPageSecurity(h)
	h.Set("Content-Type", page.ContentType)
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(s.pages.Unauthorized(f, base.URL))
}

// handleAsset serves an embedded file the pages load. Its URL names its
// digest, so it may be cached forever.
func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) {
	file, _ := param(r, "file")
	body, ct, digest, ok := page.Asset(file)
	if snap := s.cat.Current(); !ok && snap != nil {
		body, ct, digest, ok = page.Logo(snap.Feed().Server(), file)
	}
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: no asset %q", errNotFound, file))
		return
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", cacheImmutable)
	h.Set("ETag", digest.ETag())
	h.Set("X-Content-Type-Options", "nosniff")
	// An SVG opened on its own is a document that could run script; the
	// pages load it as an image, where none runs.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	s.serveBytes(w, r, body)
}

// handleProblems is the admin's view of the current snapshot's problems:
// why a skill is not published. It takes the admin token as POST
// /-/reload does, or as the password of HTTP Basic authentication, which
// a browser asks for.
func (s *Server) handleProblems(w http.ResponseWriter, r *http.Request) {
	if s.opts.AdminToken == "" {
		s.fail(w, r, fmt.Errorf("%w: the admin pages are disabled (set admin_token to enable them)", errNotFound))
		return
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		_, token, ok = r.BasicAuth()
	}
	if !ok || token == "" {
		h := w.Header()
		h.Add("WWW-Authenticate", `Bearer realm="skillserver"`)
		h.Add("WWW-Authenticate", `Basic realm="skillserver admin", charset="UTF-8"`)
		s.fail(w, r, errUnauthorized)
		return
	}
	if s.throttled(w, r) {
		return
	}
	if !s.adminToken(token) {
		s.refuseWrongToken(w, r, errForbidden)
		return
	}
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	h := w.Header()
	setPageSecurity(h)
	h.Set("Content-Type", page.ContentType)
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(s.pages.Problems(snap.Feed(), snap.Generation, snap.ProblemsBelowRoots()))
}

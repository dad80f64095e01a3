package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/provenance"
	"github.com/skillserver/skillserver/internal/skill"
	"github.com/skillserver/skillserver/internal/transport"
)

// snapshot returns the current snapshot, or answers 503 and returns nil
// before the first scan finished.
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) *catalog.Snapshot {
	snap := s.cat.Current()
	if snap == nil {
		s.fail(w, r, errNotReady)
	}
	return snap
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

// artifact is what an artifact route resolved to in the current snapshot.
type artifact struct {
	key         catalog.ArtifactKey // retention key; zero for none
	digest      content.Digest      // "" when the current snapshot does not serve key
	contentType []string            // the Content-Type header's value, shared
	missing     error               // why the current snapshot does not serve it
	// install names the skill a download of this artifact installs
	// (SKILL.md or archive.zip); "" for other files.
	install string
}

// skillVersion resolves {name}/{version} in the view f; the error says
// what is missing.
func skillVersion(r *http.Request, f *feed.Feed) (name, version string, v *item.SkillVersion, err error) {
	name, ok1 := param(r, "name")
	version, ok2 := param(r, "version")
	sk, ok := f.Skill(name)
	if !ok1 || !ok2 || !ok {
		return name, version, nil, fmt.Errorf("%w: no skill named %q", errNotFound, name)
	}
	v, ok = sk.Version(version)
	if !ok {
		return name, version, nil, fmt.Errorf("%w: skill %q has no version %q", errNotFound, name, version)
	}
	return name, version, v, nil
}

func (s *Server) handleDocument(resolve docKeyFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		snap, base := s.documentSource(w, r)
		if snap == nil {
			return
		}
		key, ok := resolve(r)
		var found catalog.Found
		if ok {
			// A client that began walking the tree before a reload may
			// follow an href the new snapshot no longer has: it finishes
			// from the snapshot it started on (Locate).
			found, ok = s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksDocument, View: readerView(r), Doc: key, Base: base})
		}
		if !ok {
			s.fail(w, r, fmt.Errorf("%w: no document at %s", errNotFound, r.URL.Path))
			return
		}
		s.serveDocument(w, r, found.Doc, jsonContentTypes)
	}
}

// serveDocument writes a document of the feed, or a page, as
// contentType: its digest as ETag, gzip-compressed when the client
// accepts it, revalidated with 304.
func (s *Server) serveDocument(w http.ResponseWriter, r *http.Request, doc *feed.Document, contentType []string) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = cacheShorts
	if vary := h["Vary"]; len(vary) > 0 {
		h["Vary"] = append(vary, "Accept-Encoding")
	} else {
		h["Vary"] = varyAcceptEncoding
	}
	body, digest := doc.Body, doc.Digest
	if acceptsGzip(r) {
		if gz, gzDigest, ok := doc.Gzip(); ok {
			body, digest = gz, gzDigest
			h["Content-Encoding"] = gzipEncoding
		}
	}
	h["Etag"] = transport.ETagValue(w, digest.ETag())
	s.serveBytes(w, r, body)
}

// documentSource is the current snapshot and the documents' base URL for
// r, or an answer (503, 400, 421) and nil.
func (s *Server) documentSource(w http.ResponseWriter, r *http.Request) (*catalog.Snapshot, feed.Base) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return nil, feed.Base{}
	}
	base, err := s.documentBase(r)
	if err != nil {
		s.fail(w, r, err)
		return nil, feed.Base{}
	}
	return snap, base
}

// documentBase is the base URL of the documents in this response: the
// configured one, or one derived from the request, whose host must be
// listed when allowed_hosts is set. Bases the operator named are Known:
// their documents are kept for the snapshot's lifetime. A path token
// stays in the base, so absolute URLs keep it.
func (s *Server) documentBase(r *http.Request) (feed.Base, error) {
	base, ok := s.baseURL(r)
	base += tokenPrefix(r)
	switch {
	case !ok:
		return feed.Base{}, fmt.Errorf("%w: the Host header is not a valid host name; configure base_url", errBadRequest)
	case s.opts.BaseURL != "":
		return feed.Base{URL: base, Known: true}, nil
	case len(s.opts.AllowedHosts) == 0:
		return feed.Base{URL: base}, nil
	}
	_, host, _ := strings.Cut(base, "://")
	if !slices.Contains(s.opts.AllowedHosts, host) {
		return feed.Base{}, fmt.Errorf("%w: this server does not serve host %q (allowed_hosts)", errMisdirected, host)
	}
	return feed.Base{URL: base, Known: true}, nil
}

func (s *Server) handleLatestSkillMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	name, _ := param(r, "name")
	a := artifact{contentType: markdownContentTypes}
	if sk, ok := view(r, snap.Feed()).Skill(name); ok {
		a.digest, a.install = sk.Latest.SkillMD, name
	} else {
		a.missing = fmt.Errorf("%w: no skill named %q", errNotFound, name)
	}
	s.serveArtifact(w, r, snap, a)
}

func (s *Server) handleSkillMD(w http.ResponseWriter, r *http.Request) {
	s.handleSkillFile(w, r, skill.FileName)
}

func (s *Server) handleArchive(w http.ResponseWriter, r *http.Request) {
	s.handleSkillFile(w, r, feed.ArchiveFile)
}

func (s *Server) handleResource(w http.ResponseWriter, r *http.Request) {
	// The path is looked up in the snapshot, never joined onto a disk path,
	// so "..", encoded or not, can only miss.
	p, ok := param(r, "*")
	if !ok || p == "" {
		s.fail(w, r, fmt.Errorf("%w: no such file", errNotFound))
		return
	}
	s.handleSkillFile(w, r, p)
}

// handleSkillFile serves SKILL.md, archive.zip or a resource of a version.
func (s *Server) handleSkillFile(w http.ResponseWriter, r *http.Request, file string) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	f := view(r, snap.Feed())
	name, version, v, err := skillVersion(r, f)
	a := artifact{key: artifactKey(f, catalog.ArtifactKey{Name: name, Version: version, File: file}), contentType: contentTypeOf(file), missing: err}
	switch {
	case err != nil:
	case file == skill.FileName:
		a.digest, a.install = v.SkillMD, name
	case file == feed.ArchiveFile && v.Type == item.TypeArchive:
		a.digest, a.install = v.Archive, name
	case file == feed.ArchiveFile:
		a.missing = fmt.Errorf("%w: skill %q version %q is a lone SKILL.md and has no archive", errNotFound, name, version)
	default:
		if res, ok := v.Resource(file); ok {
			a.digest = res.Digest
		} else {
			a.missing = fmt.Errorf("%w: skill %q version %q has no file %q", errNotFound, name, version, file)
		}
	}
	s.serveArtifact(w, r, snap, a)
}

func (s *Server) handleAgentMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	name, ok1 := param(r, "name")
	ver, ok2 := param(r, "version")
	f := view(r, snap.Feed())
	a := artifact{key: artifactKey(f, catalog.ArtifactKey{Agent: true, Name: name, Version: ver}), contentType: markdownContentTypes}
	if ag, ok := f.Agent(name); !ok1 || !ok2 || !ok {
		a.missing = fmt.Errorf("%w: no sub-agent named %q", errNotFound, name)
	} else if v, ok := ag.Version(ver); !ok {
		a.missing = fmt.Errorf("%w: sub-agent %q has no version %q", errNotFound, name, ver)
	} else {
		a.digest = v.Digest
	}
	s.serveArtifact(w, r, snap, a)
}

func (s *Server) handleBlob(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	raw, _ := param(r, "digest")
	d, err := content.ParseDigest(raw)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %w", errBadRequest, err))
		return
	}
	// A scoped reader gets only the blobs of its own items, and none that
	// only retention still holds: those have no items left to check.
	found, ok := s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksBlob, View: readerView(r), Digest: d})
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: no blob %s", errNotFound, d))
		return
	}
	s.writeArtifact(w, r, found.Body, d, octetStream, cacheImmutables, "")
}

// handleBlobFile serves a content-addressed file (feed.ArtifactPath): the
// bytes of digest under one of the names the view publishes them as,
// which gives the Content-Type. A file a reload replaced keeps answering
// from a retired snapshot that published it, or from retention, for the
// retention window, as a ?digest= pin does; then it is 404, never other
// bytes.
func (s *Server) handleBlobFile(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	raw, _ := param(r, "digest")
	name, ok := param(r, "*")
	d, err := content.ParseDigest(raw)
	if err != nil || !ok {
		s.fail(w, r, fmt.Errorf("%w: no such file", errNotFound))
		return
	}
	// A file a reload replaced answers from a retired snapshot that
	// published it, or from retention: the same window as ?digest=.
	found, ok := s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksFile, View: readerView(r), Digest: d, Name: name})
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: no file %q with digest %s", errNotFound, name, d))
		return
	}
	s.writeArtifact(w, r, found.Body, d, contentTypeOf(name), cacheImmutables, found.Install)
}

// artifactKey is k, or no key when the view f does not hold k's item:
// retention must not serve a reader bytes of items it cannot see.
func artifactKey(f *feed.Feed, k catalog.ArtifactKey) catalog.ArtifactKey {
	if !f.Allows(k.Name) {
		return catalog.ArtifactKey{}
	}
	return k
}

// serveArtifact writes an artifact. A `digest` query parameter pins the
// request: it is answered with exactly those bytes while the current
// snapshot, or one retired within the retention window, served them at
// this path, and 404 otherwise, never other bytes. Pinned responses may be
// cached forever.
func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request, snap *catalog.Snapshot, a artifact) {
	var body []byte
	var ok bool
	var cache []string
	if q, pinned := transport.Query(w, r)["digest"]; pinned {
		want, err := content.ParseDigest(q[0])
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: digest parameter: %w", errBadRequest, err))
			return
		}
		var found catalog.Found
		found, ok = s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksPinned, Digest: want, Key: a.key, Served: a.digest})
		if !ok {
			s.fail(w, r, fmt.Errorf("%w: %s is not served here (any more)", errNotFound, want))
			return
		}
		body, a.digest = found.Body, want
		cache = cacheImmutables
	} else {
		if a.digest == "" {
			s.fail(w, r, a.missing)
			return
		}
		if body, ok = snap.Store.Get(a.digest); !ok {
			s.fail(w, r, fmt.Errorf("snapshot %d advertises blob %s it does not hold", snap.Generation, a.digest))
			return
		}
		cache = cacheShorts
	}
	s.writeArtifact(w, r, body, a.digest, a.contentType, cache, a.install)
}

// writeArtifact answers with artifact bytes body of digest d: its
// Content-Type and Cache-Control, the digest as ETag, the artifact
// security headers; and when it answered a GET with the whole body (a
// 200: not HEAD, a Range, a revalidation's 304 or a failed
// precondition), a download of install's artifact counted (none when
// install is "").
func (s *Server) writeArtifact(w http.ResponseWriter, r *http.Request, body []byte, d content.Digest, contentType, cacheControl []string, install string) {
	h := w.Header()
	h["Cache-Control"] = cacheControl
	h["Content-Type"] = contentType
	h["Etag"] = transport.ETagValue(w, d.ETag())
	setArtifactSecurity(h)
	s.serveBytes(w, r, body)
	if install != "" && r.Method == http.MethodGet && transport.Status(w) == http.StatusOK {
		s.installs.add(install)
	}
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
// Only JSON documents are ever compressed: an artifact decoded in transit
// would fail its digest check.
func acceptsGzip(r *http.Request) bool {
	ae := r.Header["Accept-Encoding"]
	if len(ae) == 0 {
		return false
	}
	for part := range strings.SplitSeq(ae[0], ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// setArtifactSecurity keeps served files inert: an .html or .svg resource
// opened in a browser runs no script on this origin, and nothing sniffs a
// type other than the one sent.
func setArtifactSecurity(h http.Header) {
	h["X-Content-Type-Options"] = nosniff
	h["Content-Security-Policy"] = sandboxed
}

// serveBytes answers with b, its ETag set, under http.ServeContent's
// semantics (If-None-Match, Range, HEAD), its error statuses as JSON
// (transport.Bytes).
func (s *Server) serveBytes(w http.ResponseWriter, r *http.Request, b []byte) {
	s.bytes.Serve(w, r, b)
}

// contentTypeValues holds feed.ContentType's media types as header
// values, one shared slice each (the table is fixed, so it stays small).
var contentTypeValues sync.Map

// contentTypeOf is p's Content-Type header value (a shared one).
func contentTypeOf(p string) []string {
	ct := feed.ContentType(p)
	if v, ok := contentTypeValues.Load(ct); ok {
		return v.([]string)
	}
	v, _ := contentTypeValues.LoadOrStore(ct, []string{ct})
	return v.([]string)
}

// Health and build information: small, per-request JSON.

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	snap := s.cat.Current()
	switch {
	case snap == nil:
		s.fail(w, r, errNotReady)
		return
	case !s.ready.Load():
		s.fail(w, r, errShuttingDown)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "generation": snap.Generation})
}

type healthBody struct {
	Status     string `json:"status"`
	Version    string `json:"version"`
	Generation uint64 `json:"generation"`
	Skills     int    `json:"skills"`
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	body := healthBody{Status: "healthy", Version: s.opts.Build.Version}
	status := http.StatusOK
	if snap := s.cat.Current(); snap != nil {
		body.Generation, body.Skills = snap.Generation, len(view(r, snap.Feed()).Skills)
	} else {
		body.Status, status = "starting", http.StatusServiceUnavailable
	}
	writeJSON(w, status, body)
}

type infoBody struct {
	BuildInfo
	Generation    uint64 `json:"generation"`
	Skills        int    `json:"skills"`
	SkillVersions int    `json:"skillVersions"`
	Problems      int    `json:"problems"`
	// Source is the git checkout the skills were read from (provenance).
	Source *provenance.Source `json:"source,omitempty"`
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	body := infoBody{
		BuildInfo:     s.opts.Build,
		Generation:    snap.Generation,
		Skills:        len(snap.Skills),
		SkillVersions: snap.VersionCount(),
		Problems:      len(snap.Problems),
		Source:        snap.Provenance,
	}
	// A scoped reader counts only its own items; the tree's problems are
	// not its business.
	if f := view(r, snap.Feed()); f.Scoped() {
		body.Skills, body.SkillVersions, body.Problems = len(f.Skills), 0, 0
		for _, sk := range f.Skills {
			body.SkillVersions += len(sk.Versions)
		}
	}
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONCached(w, status, v, "no-store")
}

// writeJSONCached writes v as JSON, encoded now, with Cache-Control cc.
func writeJSONCached(w http.ResponseWriter, status int, v any, cc string) {
	b, err := feed.Encode(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "internal server error")
		return
	}
	h := w.Header()
	h.Set("Content-Type", jsonContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", cc)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

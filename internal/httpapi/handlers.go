package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
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

// skillVersion resolves {name}/{version} or answers 404.
func (s *Server) skillVersion(w http.ResponseWriter, r *http.Request, snap *catalog.Snapshot) *catalog.SkillVersion {
	name, ok1 := param(r, "name")
	ver, ok2 := param(r, "version")
	sk, ok := snap.Skill(name)
	if !ok1 || !ok2 || !ok {
		s.fail(w, r, fmt.Errorf("%w: no skill named %q", errNotFound, name))
		return nil
	}
	v, ok := sk.Version(ver)
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: skill %q has no version %q", errNotFound, name, ver))
		return nil
	}
	return v
}

func (s *Server) handleDocument(resolve docKeyFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		snap := s.snapshot(w, r)
		if snap == nil {
			return
		}
		base, ok := s.baseURL(r)
		if !ok {
			s.fail(w, r, fmt.Errorf("%w: the Host header is not a valid host name; configure base_url", errBadRequest))
			return
		}
		key, ok := resolve(r)
		var doc *catalog.Document
		if ok {
			doc, ok = snap.Document(base, key)
		}
		if !ok {
			s.fail(w, r, fmt.Errorf("%w: no document at %s", errNotFound, r.URL.Path))
			return
		}
		h := w.Header()
		h.Set("Content-Type", jsonContentType)
		h.Set("Cache-Control", cacheShort)
		h.Set("ETag", doc.Digest.ETag())
		serveBytes(w, r, doc.Body)
	}
}

func (s *Server) handleLatestSkillMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	name, _ := param(r, "name")
	sk, ok := snap.Skill(name)
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: no skill named %q", errNotFound, name))
		return
	}
	s.serveArtifact(w, r, snap, sk.Latest.SkillMD, markdownContentType)
}

func (s *Server) handleSkillMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	if v := s.skillVersion(w, r, snap); v != nil {
		s.serveArtifact(w, r, snap, v.SkillMD, markdownContentType)
	}
}

func (s *Server) handleArchive(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	v := s.skillVersion(w, r, snap)
	if v == nil {
		return
	}
	if v.Type != catalog.TypeArchive {
		s.fail(w, r, fmt.Errorf("%w: skill %q version %q is a lone SKILL.md and has no archive", errNotFound, v.Name, v.Version))
		return
	}
	s.serveArtifact(w, r, snap, v.Archive, "application/zip")
}

func (s *Server) handleResource(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	v := s.skillVersion(w, r, snap)
	if v == nil {
		return
	}
	// The path is looked up in the snapshot, never joined onto a disk path,
	// so "..", encoded or not, can only miss.
	p, ok := param(r, "*")
	res, found := v.Resource(p)
	if !ok || !found {
		s.fail(w, r, fmt.Errorf("%w: skill %q version %q has no file %q", errNotFound, v.Name, v.Version, p))
		return
	}
	s.serveArtifact(w, r, snap, res.Digest, contentTypeOf(res.Path))
}

func (s *Server) handleAgentMD(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	name, ok1 := param(r, "name")
	ver, ok2 := param(r, "version")
	a, ok := snap.Agent(name)
	if !ok1 || !ok2 || !ok {
		s.fail(w, r, fmt.Errorf("%w: no sub-agent named %q", errNotFound, name))
		return
	}
	v, ok := a.Version(ver)
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: sub-agent %q has no version %q", errNotFound, name, ver))
		return
	}
	s.serveArtifact(w, r, snap, v.Digest, markdownContentType)
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
	if _, ok := snap.Store.Get(d); !ok {
		s.fail(w, r, fmt.Errorf("%w: no blob %s", errNotFound, d))
		return
	}
	w.Header().Set("Cache-Control", cacheImmutable)
	s.serveArtifact(w, r, snap, d, "application/octet-stream")
}

// serveArtifact writes the blob d. A `digest` query parameter pins the
// request: it must name d (else 404, never other bytes) and makes the
// response cacheable forever.
func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request, snap *catalog.Snapshot, d content.Digest, contentType string) {
	h := w.Header()
	if q, pinned := r.URL.Query()["digest"]; pinned {
		want, err := content.ParseDigest(q[0])
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: digest parameter: %w", errBadRequest, err))
			return
		}
		if want != d {
			s.fail(w, r, fmt.Errorf("%w: this path no longer serves %s", errNotFound, want))
			return
		}
		h.Set("Cache-Control", cacheImmutable)
	} else if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", cacheShort)
	}
	b, ok := snap.Store.Get(d)
	if !ok {
		s.fail(w, r, fmt.Errorf("snapshot %d advertises blob %s it does not hold", snap.Generation, d))
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("ETag", d.ETag())
	h.Set("X-Content-Type-Options", "nosniff")
	serveBytes(w, r, b)
}

// serveBytes answers with b under http.ServeContent's semantics
// (If-None-Match, Range, HEAD), its error statuses as JSON.
func serveBytes(w http.ResponseWriter, r *http.Request, b []byte) {
	http.ServeContent(&jsonErrorWriter{ResponseWriter: w}, r, "", time.Time{}, bytes.NewReader(b))
}

// contentTypes is a fixed table, not the host's mime database, so every
// replica sends the same headers.
var contentTypes = map[string]string{
	".md":       markdownContentType,
	".markdown": markdownContentType,
	".txt":      "text/plain; charset=utf-8",
	".json":     jsonContentType,
	".yaml":     "application/yaml; charset=utf-8",
	".yml":      "application/yaml; charset=utf-8",
	".toml":     "application/toml; charset=utf-8",
	".csv":      "text/csv; charset=utf-8",
	".html":     "text/html; charset=utf-8",
	".css":      "text/css; charset=utf-8",
	".xml":      "application/xml; charset=utf-8",
	".js":       "text/javascript; charset=utf-8",
	".mjs":      "text/javascript; charset=utf-8",
	".ts":       "text/plain; charset=utf-8",
	".sh":       "text/x-shellscript; charset=utf-8",
	".py":       "text/x-python; charset=utf-8",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
	".svg":      "image/svg+xml",
	".pdf":      "application/pdf",
	".zip":      "application/zip",
	".gz":       "application/gzip",
	".tar":      "application/x-tar",
	".wasm":     "application/wasm",
}

func contentTypeOf(p string) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(p))]; ok {
		return ct
	}
	return "application/octet-stream"
}

// Health and build information: small, per-request JSON.

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	snap := s.cat.Current()
	if !s.ready.Load() || snap == nil {
		s.fail(w, r, errNotReady)
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
		body.Generation, body.Skills = snap.Generation, len(snap.Skills)
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
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	writeJSON(w, http.StatusOK, infoBody{
		BuildInfo:     s.opts.Build,
		Generation:    snap.Generation,
		Skills:        len(snap.Skills),
		SkillVersions: snap.VersionCount(),
		Problems:      len(snap.Problems),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "internal server error")
		return
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", jsonContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

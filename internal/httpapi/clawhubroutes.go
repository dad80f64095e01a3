package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// The ClawHub-compatible read API (docs/http-api.md, "ClawHub read API").
// Its errors are short text, which the clawhub CLI prints as they are
// (it shows a JSON error body raw); "Skill not found" is the text it
// recognises. Writes are refused with 405: the tree is published through
// its repository.

const (
	clawNotFound = "Skill not found"
	clawReadOnly = "This registry is read-only: skills are published by committing them to the tree this server reads"
)

func clawText(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// clawLimit is the limit query parameter, bounded by max_search_results
// (0 for none or a bad one: all, within the bound).
func (s *Server) clawLimit(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || n <= 0 {
		n = 0
	}
	if m := s.maxSearchResults(); m > 0 && (n == 0 || n > m) {
		n = m
	}
	return n
}

// clawView is the request's view of the current snapshot, or nil (and the
// request answered) before the first scan.
func (s *Server) clawView(w http.ResponseWriter, r *http.Request) *feed.Feed {
	snap := s.clawSnapshot(w)
	if snap == nil {
		return nil
	}
	return viewOf(r, snap.Feed())
}

// clawSnapshot is the current snapshot, or nil (and the request
// answered) before the first scan.
func (s *Server) clawSnapshot(w http.ResponseWriter) *catalog.Snapshot {
	snap := s.cat.Current()
	if snap == nil {
		clawText(w, http.StatusServiceUnavailable, "the server has not finished its first scan")
	}
	return snap
}

// clawJSON answers v, or "Skill not found".
func clawJSON(w http.ResponseWriter, v any, ok bool) {
	if !ok {
		clawText(w, http.StatusNotFound, clawNotFound)
		return
	}
	writeJSONCached(w, http.StatusOK, v, "no-store")
}

// handleClawHubDiscovery answers where the API is: the CLI needs it
// absolute, so it is the document base (with a path token, if any).
func (s *Server) handleClawHubDiscovery(w http.ResponseWriter, r *http.Request) {
	base, err := s.documentBase(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSONCached(w, http.StatusOK, feed.ClawHubDiscovery{APIBase: base.URL + feed.PathClawHub}, cacheShort)
}

func (s *Server) handleClawHubSearch(w http.ResponseWriter, r *http.Request) {
	if f := s.clawView(w, r); f != nil {
		q, err := s.searchText(w, r)
		if err != nil {
			clawText(w, http.StatusBadRequest, err.Error())
			return
		}
		clawJSON(w, f.ClawHubSearch(q, s.clawLimit(r)), true)
	}
}

func (s *Server) handleClawHubList(w http.ResponseWriter, r *http.Request) {
	if f := s.clawView(w, r); f != nil {
		clawJSON(w, f.ClawHubList(r.URL.Query().Get("prefix"), s.clawLimit(r)), true)
	}
}

func (s *Server) handleClawHubSkill(w http.ResponseWriter, r *http.Request) {
	if f := s.clawView(w, r); f != nil {
		name, _ := param(r, "name")
		v, ok := f.ClawHubSkill(name)
		clawJSON(w, v, ok)
	}
}

func (s *Server) handleClawHubVersions(w http.ResponseWriter, r *http.Request) {
	if f := s.clawView(w, r); f != nil {
		name, _ := param(r, "name")
		v, ok := f.ClawHubVersions(name, s.clawLimit(r))
		clawJSON(w, v, ok)
	}
}

func (s *Server) handleClawHubVersion(w http.ResponseWriter, r *http.Request) {
	if f := s.clawView(w, r); f != nil {
		name, _ := param(r, "name")
		version, _ := param(r, "version")
		v, ok := f.ClawHubVersion(name, version)
		clawJSON(w, v, ok)
	}
}

func (s *Server) handleClawHubResolve(w http.ResponseWriter, r *http.Request) {
	if f := s.clawView(w, r); f != nil {
		q := r.URL.Query()
		v, ok := f.ClawHubResolve(q.Get("slug"), q.Get("hash"))
		clawJSON(w, v, ok)
	}
}

// handleClawHubWhoami names the read token the request carries, which
// `clawhub login --token` checks; none, on a public feed.
func (s *Server) handleClawHubWhoami(w http.ResponseWriter, r *http.Request) {
	user := map[string]any{"handle": nil}
	if g, ok := r.Context().Value(grantKey{}).(grant); ok {
		user["handle"] = g.token.Name
	}
	writeJSONCached(w, http.StatusOK, map[string]any{"user": user}, "no-store")
}

// clawVersionOf is the version the request's slug and version (or tag)
// name, and the snapshot that holds its bytes.
func (s *Server) clawVersionOf(w http.ResponseWriter, r *http.Request, slug string) (*catalog.Snapshot, *item.SkillVersion, bool) {
	snap := s.clawSnapshot(w)
	if snap == nil {
		return nil, nil, false
	}
	q := r.URL.Query()
	version := q.Get("version")
	if version == "" {
		version = q.Get("tag")
	}
	_, v, ok := viewOf(r, snap.Feed()).ClawHubVersionOf(slug, version)
	if !ok {
		clawText(w, http.StatusNotFound, clawNotFound)
	}
	return snap, v, ok
}

// handleClawHubFile serves one file of a version, as the artifact routes
// do (ETag, Range, the content type and security headers).
func (s *Server) handleClawHubFile(w http.ResponseWriter, r *http.Request) {
	name, _ := param(r, "name")
	snap, v, ok := s.clawVersionOf(w, r, name)
	if !ok {
		return
	}
	p := r.URL.Query().Get("path")
	d := v.SkillMD
	if p != skill.FileName {
		res, ok := v.Resource(p)
		if !ok {
			clawText(w, http.StatusNotFound, "No file "+strconv.Quote(p)+" in this version")
			return
		}
		d = res.Digest
	}
	s.serveClawBlob(w, r, snap, d, p)
}

// handleClawHubDownload serves a version as the zip the CLI installs: its
// archive, the bytes and digest the RFC index advertises; a version that
// is a lone SKILL.md, a zip of it in the same deterministic format.
func (s *Server) handleClawHubDownload(w http.ResponseWriter, r *http.Request) {
	snap, v, ok := s.clawVersionOf(w, r, r.URL.Query().Get("slug"))
	if !ok {
		return
	}
	if v.Type == item.TypeArchive {
		s.serveClawBlob(w, r, snap, v.Archive, feed.ArchiveFile)
		return
	}
	md, ok := snap.Store.Get(v.SkillMD)
	if !ok {
		clawText(w, http.StatusNotFound, clawNotFound)
		return
	}
	zip, err := content.BuildZip(skill.FileName, []content.ArchiveFile{{Path: skill.FileName, Data: md}})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeArtifact(w, r, content.BytesBlob(zip), content.Sum(zip), contentTypeOf(feed.ArchiveFile), cacheShorts, "")
}

// serveClawBlob serves the blob d of snap under the file name name.
func (s *Server) serveClawBlob(w http.ResponseWriter, r *http.Request, snap *catalog.Snapshot, d content.Digest, name string) {
	body, ok := snap.Store.Blob(d)
	if !ok {
		clawText(w, http.StatusNotFound, clawNotFound)
		return
	}
	s.writeArtifact(w, r, body, d, contentTypeOf(name), cacheShorts, "")
}

// clawWrite reports whether r is a write to the ClawHub API: any method
// but GET and HEAD under its prefix, which the router has no route for.
func clawWrite(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead &&
		strings.HasPrefix(routingPath(r), feed.PathClawHub+"/")
}

// handleClawHubWrite refuses a write to a path of the ClawHub API that has
// no route (publish, star, transfer...).
func (s *Server) handleClawHubWrite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	clawText(w, http.StatusMethodNotAllowed, clawReadOnly)
}

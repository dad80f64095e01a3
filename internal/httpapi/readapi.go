package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/skillserver/skillserver/internal/catalog"
)

// Paging of search results.
const (
	defaultTake = 20
	maxTake     = 100
	// maxUpdateChecks bounds POST /api/v1/skills/check-updates.
	maxUpdateChecks = 100
	maxBodyBytes    = 1 << 20
)

// intParam parses a non-negative integer query parameter.
func intParam(r *http.Request, name string, def int) (int, error) {
	raw, ok := r.URL.Query()[name]
	if !ok || raw[0] == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw[0])
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s=%q must be a whole number, 0 or more", errBadRequest, name, raw[0])
	}
	return n, nil
}

// handleSearch answers GET /api/v1/skills and /api/v1/subagents: a page of
// summaries, ranked for q, with the total before paging in X-Total-Count.
func (s *Server) handleSearch(agents bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		snap := s.snapshot(w, r)
		if snap == nil {
			return
		}
		skip, err := intParam(r, "skip", 0)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		take, err := intParam(r, "take", defaultTake)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		take = min(take, maxTake)
		q := r.URL.Query().Get("q")
		var hits []catalog.Summary
		if agents {
			if !snap.AgentsConfigured {
				s.fail(w, r, fmt.Errorf("%w: no sub-agent source is configured", errNotFound))
				return
			}
			hits = snap.SearchAgents(q)
		} else {
			hits = snap.SearchSkills(q)
		}
		w.Header().Set("X-Total-Count", strconv.Itoa(len(hits)))
		page := hits[min(skip, len(hits)):min(skip+take, len(hits))]
		writeJSONCached(w, http.StatusOK, page, cacheShort)
	}
}

type updateQuery struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// handleCheckUpdates answers POST /api/v1/skills/check-updates.
func (s *Server) handleCheckUpdates(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	var qs []updateQuery
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&qs); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(w, r, fmt.Errorf("%w: the body is over %d bytes", errBadRequest, maxBodyBytes))
			return
		}
		s.fail(w, r, fmt.Errorf("%w: the body must be a JSON array of {\"name\", \"version\"}: %v", errBadRequest, err))
		return
	}
	if len(qs) > maxUpdateChecks {
		s.fail(w, r, fmt.Errorf("%w: %d items; at most %d per request", errBadRequest, len(qs), maxUpdateChecks))
		return
	}
	out := make([]catalog.UpdateCheck, len(qs))
	for i, q := range qs {
		out[i] = snap.CheckUpdate(q.Name, q.Version)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleLegacyFile serves /.well-known/skills/{name}/{path}: a file of the
// skill's latest version, for v0.1 readers.
func (s *Server) handleLegacyFile(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshot(w, r)
	if snap == nil {
		return
	}
	name, _ := param(r, "name")
	file, ok := param(r, "*")
	a := artifact{contentType: contentTypeOf(file)}
	sk, found := snap.Skill(name)
	switch {
	case !found || !ok:
		a.missing = fmt.Errorf("%w: no skill named %q", errNotFound, name)
	case file == "SKILL.md":
		a.digest = sk.Latest.SkillMD
	default:
		if res, ok := sk.Latest.Resource(file); ok {
			a.digest = res.Digest
		} else {
			a.missing = fmt.Errorf("%w: skill %q has no file %q", errNotFound, name, file)
		}
	}
	s.serveArtifact(w, r, snap, a)
}

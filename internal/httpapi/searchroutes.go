package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/transport"
)

// defaultTake is how many search results a request gets without take (or
// limit).
const defaultTake = 20

// limitOf is the limit n sets: 0 is off, no limitOf (math.MaxInt).
func limitOf(n int) int {
	if n <= 0 {
		return math.MaxInt
	}
	return n
}

// searchText is the q of a search request, refused past max_query_bytes:
// a search looks every word of q up in the index, and over 1,000 skills
// a 60 KB query (what max_header_bytes lets through) took 60 to 350 times
// as long as a one-word query.
func (s *Server) searchText(w http.ResponseWriter, r *http.Request) (string, error) {
	q := transport.Query(w, r).Get("q")
	if max := limitOf(s.opts.MaxQueryBytes); len(q) > max {
		return "", fmt.Errorf("%w: q is %d bytes; the limit is %d (max_query_bytes); search for fewer words", errBadRequest, len(q), max)
	}
	return q, nil
}

// maxSearchResults is the most results one search answers.
func (s *Server) maxSearchResults() int {
	return limitOf(s.opts.MaxSearchResults)
}

// intParam parses a non-negative integer query parameter.
func intParam(w http.ResponseWriter, r *http.Request, name string, def int) (int, error) {
	raw, ok := transport.Query(w, r)[name]
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
		snap := s.snapshotFor(w, r)
		if snap == nil {
			return
		}
		skip, err := intParam(w, r, "skip", 0)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		take, err := intParam(w, r, "take", defaultTake)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		take = min(take, s.maxSearchResults())
		q, err := s.searchText(w, r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		var hits []feed.Summary
		f := viewOf(r, snap.Feed())
		if agents {
			if !snap.AgentsConfigured {
				s.fail(w, r, fmt.Errorf("%w: no sub-agent source is configured", errNotFound))
				return
			}
			hits = f.SearchAgents(q)
		} else {
			hits = f.SearchSkills(q)
		}
		w.Header().Set("X-Total-Count", strconv.Itoa(len(hits)))
		start := min(skip, len(hits)) // skip+take could overflow; never add them
		page := hits[start : start+min(take, len(hits)-start)]
		writeJSONCached(w, http.StatusOK, page, cacheShort)
	}
}

type updateQuery struct {
	Name    string
	Version string
	Digest  content.Digest // "" when the item gives none
}

// handleCheckUpdates answers POST /api/v1/skills/check-updates.
func (s *Server) handleCheckUpdates(w http.ResponseWriter, r *http.Request) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return
	}
	qs, err := decodeUpdateQueries(w, r, limitOf(s.opts.MaxUpdateChecks), int64(limitOf(s.opts.MaxBodyBytes)))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]feed.UpdateCheck, len(qs))
	f := viewOf(r, snap.Feed())
	for i, q := range qs {
		out[i] = f.CheckUpdate(q.Name, q.Version, q.Digest)
	}
	writeJSON(w, http.StatusOK, out)
}

// decodeUpdateQueries reads the check-updates body: exactly one JSON
// array of at most maxItems {"name", "version"} objects, each with an
// optional "digest" of what the client holds, in at most maxBytes.
func decodeUpdateQueries(w http.ResponseWriter, r *http.Request, maxItems int, maxBytes int64) ([]updateQuery, error) {
	const shape = `the body must be one JSON array of {"name": "...", "version": "..."}`
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBytes))
	tooBig := func(err error) error {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fmt.Errorf("%w: the body is over %d bytes (max_body_bytes)", errBadRequest, maxBytes)
		}
		return nil
	}
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if e := tooBig(err); e != nil {
			return nil, e
		}
		return nil, fmt.Errorf("%w: %s", errBadRequest, shape)
	}
	if raw == nil || dec.More() {
		return nil, fmt.Errorf("%w: %s", errBadRequest, shape)
	}
	if _, err := dec.Token(); err != io.EOF {
		if e := tooBig(err); e != nil {
			return nil, e // the array, then more than the limit of blanks
		}
		return nil, fmt.Errorf("%w: %s, and nothing after it", errBadRequest, shape)
	}
	if len(raw) > maxItems {
		return nil, fmt.Errorf("%w: %d items; at most %d per request (max_update_checks)", errBadRequest, len(raw), maxItems)
	}
	qs := make([]updateQuery, len(raw))
	for i, item := range raw {
		var q struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
			Digest  *string `json:"digest"`
		}
		if err := json.Unmarshal(item, &q); err != nil || q.Name == nil || q.Version == nil {
			return nil, fmt.Errorf("%w: item %d: %s, both strings", errBadRequest, i, shape)
		}
		qs[i] = updateQuery{Name: *q.Name, Version: *q.Version}
		if q.Digest != nil {
			d, err := content.ParseDigest(*q.Digest)
			if err != nil {
				return nil, fmt.Errorf("%w: item %d: digest: %w", errBadRequest, i, err)
			}
			qs[i].Digest = d
		}
	}
	return qs, nil
}

// handleFind answers GET /api/search?q=&limit= for the skills CLI's
// `find`: the same ranking as GET /api/v1/skills, at most limit (default
// 20, at most max_search_results) skills.
func (s *Server) handleFind(w http.ResponseWriter, r *http.Request) {
	snap, base := s.documentSource(w, r)
	if snap == nil {
		return
	}
	limit, err := intParam(w, r, "limit", defaultTake)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q, err := s.searchText(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hits := viewOf(r, snap.Feed()).SearchSkills(q)
	writeJSONCached(w, http.StatusOK, feed.Find(hits, base.URL, min(limit, s.maxSearchResults()), s.installs.get), "no-store")
}

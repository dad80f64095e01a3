package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"

	"github.com/skillserver/skillserver/internal/skill"
)

type reloadBody struct {
	Generation uint64          `json:"generation"`
	Skills     int             `json:"skills"`
	Agents     int             `json:"agents"`
	Errors     int             `json:"errors"`
	Problems   []skill.Problem `json:"problems"`
}

// handleReload is POST /-/reload: enabled only with an admin token, it
// answers once the new snapshot is live, listing the problems that kept
// parts of the tree back.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	if s.opts.AdminToken == "" || s.opts.Reloader == nil {
		s.fail(w, r, fmt.Errorf("%w: the admin endpoint is disabled (set admin_token to enable it)", errNotFound))
		return
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillserver"`)
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
	snap, err := s.opts.Reloader.ReloadNow(r.Context())
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away; logged as transport.StatusClientClosed
		}
		// The catalogue or the reloader logged the failure where it
		// happened; the request line logs the 503.
		s.fail(w, r, errReloadFailed)
		return
	}
	problems := snap.ProblemsBelowRoots()
	if problems == nil {
		problems = []skill.Problem{}
	}
	writeJSON(w, http.StatusOK, reloadBody{
		Generation: snap.Generation, Skills: len(snap.Skills), Agents: len(snap.Agents),
		Errors: snap.ErrorCount(), Problems: problems,
	})
}

// adminToken reports whether token is the admin token. It compares
// digests, so neither the content nor the length of the token leaks
// through timing.
func (s *Server) adminToken(token string) bool {
	want, got := sha256.Sum256([]byte(s.opts.AdminToken)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

package httpapi

import (
	"net/http"

	"github.com/skillserver/skillserver/internal/provenance"
)

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
		body.Generation, body.Skills = snap.Generation, len(viewOf(r, snap.Feed()).Skills)
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
	snap := s.snapshotFor(w, r)
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
	if f := viewOf(r, snap.Feed()); f.Scoped() {
		body.Skills, body.SkillVersions, body.Problems = len(f.Skills), 0, 0
		for _, sk := range f.Skills {
			body.SkillVersions += len(sk.Versions)
		}
	}
	writeJSON(w, http.StatusOK, body)
}

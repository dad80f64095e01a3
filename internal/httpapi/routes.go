package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/catalog"
)

// routes registers every route the server answers. Each GET route also
// answers HEAD. api/openapi.yaml documents exactly this list.
func (s *Server) routes(r chi.Router) {
	get(r, "/healthz", s.handleHealthz)
	get(r, "/readyz", s.handleReadyz)
	get(r, "/health", s.handleHealth)
	get(r, "/api/v1/info", s.handleInfo)

	// Agent Skills Discovery RFC feed (wire.md §1).
	get(r, "/.well-known/agent-skills/index.json", s.handleDocument(func(*http.Request) catalog.DocKey {
		return catalog.DocKey{Kind: catalog.DocRFCIndex}
	}))
	get(r, "/.well-known/agent-skills/{name}/SKILL.md", s.handleLatestSkillMD)

	// Artifact bytes (wire.md §2).
	get(r, "/api/v1/skills/{name}/{version}/SKILL.md", s.handleSkillMD)
	get(r, "/api/v1/skills/{name}/{version}/archive.zip", s.handleArchive)
	get(r, "/api/v1/skills/{name}/{version}/*", s.handleResource)
	get(r, "/api/v1/blobs/sha256/{digest}", s.handleBlob)
}

func get(r chi.Router, pattern string, h http.HandlerFunc) {
	r.Get(pattern, h)
	r.Head(pattern, h)
}

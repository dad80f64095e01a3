package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/skillserver/skillserver/internal/feed"
)

// routes registers every route the server answers. Each GET route also
// answers HEAD. api/openapi.yaml documents exactly this list.
func (s *Server) routes(r chi.Router) {
	get(r, "/healthz", s.handleHealthz)
	get(r, "/readyz", s.handleReadyz)
	get(r, "/health", s.handleHealth)
	get(r, "/api/v1/info", s.handleInfo)
	r.Post("/-/reload", s.handleReload)
	if s.opts.Metrics != nil {
		get(r, "/metrics", s.opts.Metrics.ServeHTTP)
	}

	// Agent Skills Discovery RFC feed (wire.md §1).
	get(r, "/.well-known/agent-skills/index.json", s.handleDocument(fixedDoc(feed.DocRFCIndex)))
	get(r, "/.well-known/agent-skills/{name}/SKILL.md", s.handleLatestSkillMD)
	// One skill's own RFC index: `skills add https://host/skill/<name>`.
	get(r, "/skill/{name}/.well-known/agent-skills/index.json", s.handleDocument(identityDoc(feed.DocScopedIndex)))
	// Legacy v0.1 index (skillkit, OpenCode).
	get(r, "/.well-known/skills/index.json", s.handleDocument(fixedDoc(feed.DocLegacyIndex)))
	get(r, "/.well-known/skills/{name}/*", s.handleLegacyFile)
	// A2A agent card, at the current and the older well-known path.
	get(r, "/.well-known/agent-card.json", s.handleDocument(fixedDoc(feed.DocAgentCard)))
	get(r, "/.well-known/agent.json", s.handleDocument(fixedDoc(feed.DocAgentCard)))

	// Native manifest tree (wire.md §3).
	get(r, "/manifest.json", s.handleDocument(fixedDoc(feed.DocManifest)))
	get(r, "/skills/v1/index.json", s.handleDocument(fixedDoc(feed.DocSkillIndex)))
	get(r, "/skills/v1/pages/{file}", s.handleDocument(pageDoc(feed.DocSkillPage, feed.DocSkill)))
	get(r, "/skills/v1/{name}/index.json", s.handleDocument(identityDoc(feed.DocSkill)))
	get(r, "/skills/v1/{name}/versions/{file}", s.handleDocument(versionDoc(feed.DocSkillVersion)))
	get(r, "/subagents/v1/index.json", s.handleDocument(fixedDoc(feed.DocSubagentIndex)))
	get(r, "/subagents/v1/pages/{file}", s.handleDocument(pageDoc(feed.DocSubagentPage, feed.DocSubagent)))
	get(r, "/subagents/v1/{name}/index.json", s.handleDocument(identityDoc(feed.DocSubagent)))
	get(r, "/subagents/v1/{name}/versions/{file}", s.handleDocument(versionDoc(feed.DocSubagentVersion)))

	// Search and read API (wire.md §4). {version} may be "latest".
	get(r, "/api/v1/skills", s.handleSearch(false))
	r.Post("/api/v1/skills/check-updates", s.handleCheckUpdates)
	get(r, "/api/v1/skills/{name}", s.handleDocument(identityDoc(feed.DocAPISkill)))
	get(r, "/api/v1/skills/{name}/{version}", s.handleDocument(apiVersionDoc(feed.DocAPISkillVersion)))
	get(r, "/api/v1/skills/{name}/{version}/resources", s.handleDocument(apiVersionDoc(feed.DocAPISkillResources)))
	get(r, "/api/v1/subagents", s.handleSearch(true))
	get(r, "/api/v1/subagents/{name}", s.handleDocument(identityDoc(feed.DocAPISubagent)))
	get(r, "/api/v1/subagents/{name}/{version}", s.handleDocument(apiVersionDoc(feed.DocAPISubagentVersion)))

	// Artifact bytes (wire.md §2).
	get(r, "/api/v1/skills/{name}/{version}/SKILL.md", s.handleSkillMD)
	get(r, "/api/v1/skills/{name}/{version}/archive.zip", s.handleArchive)
	get(r, "/api/v1/skills/{name}/{version}/*", s.handleResource)
	get(r, "/api/v1/subagents/{name}/{version}/agent.md", s.handleAgentMD)
	get(r, "/api/v1/blobs/sha256/{digest}", s.handleBlob)
}

func get(r chi.Router, pattern string, h http.HandlerFunc) {
	r.Get(pattern, h)
	r.Head(pattern, h)
}

// docKeyFunc resolves a request to the document it names; ok is false when
// the path cannot name one.
type docKeyFunc func(*http.Request) (key feed.DocKey, ok bool)

func fixedDoc(kind feed.DocKind) docKeyFunc {
	return func(*http.Request) (feed.DocKey, bool) { return feed.DocKey{Kind: kind}, true }
}

// jsonFile strips ".json" from the {file} parameter. chi cannot match
// "{version}.json" itself: its parameters end at the first ".", and
// versions hold dots.
func jsonFile(r *http.Request) (string, bool) {
	f, ok := param(r, "file")
	base, found := strings.CutSuffix(f, ".json")
	return base, ok && found && base != ""
}

// pageDoc resolves /{tree}/pages/{page}.json. Static segments win in chi,
// so an item named "pages" has its identity document under this route.
func pageDoc(page, identity feed.DocKind) docKeyFunc {
	return func(r *http.Request) (feed.DocKey, bool) {
		f, ok := jsonFile(r)
		if f == "index" {
			return feed.DocKey{Kind: identity, Name: "pages"}, ok
		}
		return feed.DocKey{Kind: page, Page: f}, ok
	}
}

func identityDoc(kind feed.DocKind) docKeyFunc {
	return func(r *http.Request) (feed.DocKey, bool) {
		name, ok := param(r, "name")
		return feed.DocKey{Kind: kind, Name: name}, ok
	}
}

func versionDoc(kind feed.DocKind) docKeyFunc {
	return func(r *http.Request) (feed.DocKey, bool) {
		name, ok1 := param(r, "name")
		version, ok2 := jsonFile(r)
		return feed.DocKey{Kind: kind, Name: name, Version: version}, ok1 && ok2
	}
}

func apiVersionDoc(kind feed.DocKind) docKeyFunc {
	return func(r *http.Request) (feed.DocKey, bool) {
		name, ok1 := param(r, "name")
		version, ok2 := param(r, "version")
		return feed.DocKey{Kind: kind, Name: name, Version: version}, ok1 && ok2
	}
}

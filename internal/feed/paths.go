package feed

import (
	"net/url"
	"strings"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// The URL space. Every path the server publishes is written here once, as
// a pattern: {name}, {version}, {page} and {digest} stand for one path
// segment each, and a trailing * for a slash path. The router registers
// these patterns (internal/httpapi/routes.go) and the documents fill them
// in (Href), so a link and the route that answers it cannot drift apart.

// File names of a version's artifacts, as they appear in its URLs.
const (
	ArchiveFile = "archive.zip"
	AgentFile   = "agent.md"
)

// docPaths are the paths of each document kind; the first is the one
// documents link to, any other (the agent card's older path, the AI
// catalogue's newer one) answers too.
var docPaths = [...][]string{
	DocRFCIndex:           {"/.well-known/agent-skills/index.json"},
	DocManifest:           {"/manifest.json"},
	DocSkillIndex:         {"/skills/v1/index.json"},
	DocSkillPage:          {"/skills/v1/pages/{page}.json"},
	DocSkill:              {"/skills/v1/{name}/index.json"},
	DocSkillVersion:       {"/skills/v1/{name}/versions/{version}.json"},
	DocSubagentIndex:      {"/subagents/v1/index.json"},
	DocSubagentPage:       {"/subagents/v1/pages/{page}.json"},
	DocSubagent:           {"/subagents/v1/{name}/index.json"},
	DocSubagentVersion:    {"/subagents/v1/{name}/versions/{version}.json"},
	DocAPISkill:           {PathSkillSearch + "/{name}"},
	DocAPISkillVersion:    {PathSkillSearch + "/{name}/{version}"},
	DocAPISkillResources:  {PathSkillSearch + "/{name}/{version}/resources"},
	DocAPISubagent:        {PathSubagentSearch + "/{name}"},
	DocAPISubagentVersion: {PathSubagentSearch + "/{name}/{version}"},
	DocAgentCard:          {"/.well-known/agent-card.json", "/.well-known/agent.json"},
	DocLegacyIndex:        {"/.well-known/skills/index.json"},
	DocScopedIndex:        {"/skill/{name}/.well-known/agent-skills/index.json"},
	// ARD v0.9 and the AI Catalog name ai-catalog.json; ARD v0.91 moved
	// to ard.json, which its consumers fetch first.
	DocAICatalog: {"/.well-known/ai-catalog.json", "/.well-known/ard.json"},
}

// Paths that are not documents of the feed: searches, the update check,
// artifact bytes and blobs.
const (
	PathSkillSearch    = "/api/v1/skills"
	PathSubagentSearch = "/api/v1/subagents"
	PathCheckUpdates   = PathSkillSearch + "/check-updates"
	PathSkillMD        = PathSkillSearch + "/{name}/{version}/" + skill.FileName
	PathArchive        = PathSkillSearch + "/{name}/{version}/" + ArchiveFile
	PathResource       = PathSkillSearch + "/{name}/{version}/*"
	PathAgentMD        = PathSubagentSearch + "/{name}/{version}/" + AgentFile
	PathBlob           = "/api/v1/blobs/sha256/{digest}"
	// PathBlobFile is the content-addressed URL of a file: its bytes by
	// digest, under the file's name (ArtifactPath). Documents advertise
	// artifacts only at this path.
	PathBlobFile = PathBlob + "/*"
	// PathLatestSkillMD is the RFC feed's own path of a skill's latest
	// SKILL.md.
	PathLatestSkillMD = "/.well-known/agent-skills/{name}/" + skill.FileName
	// PathLegacyFile is a file of a skill's latest version in the legacy
	// v0.1 layout.
	PathLegacyFile = "/.well-known/skills/{name}/*"
	// PathRoot answers with Link headers to the API catalog and the entry
	// points, for clients that start from the host name.
	PathRoot = "/"
	// PathAPICatalog is the RFC 9727 API catalog: a linkset naming the
	// feeds and APIs above and the OpenAPI description of them.
	PathAPICatalog = "/.well-known/api-catalog"
	// PathOpenAPI serves api/openapi.yaml, the description of every route.
	PathOpenAPI = "/openapi.yaml"
	// PathFind is the search the skills CLI's `find` command calls
	// (${SKILLS_API_URL}/api/search).
	PathFind = "/api/search"
	// PathHealth is the health probe with the snapshot's counts.
	PathHealth = "/health"
	// PathMCP is the MCP endpoint (streamable HTTP) of the skills
	// extension (internal/mcpapi).
	PathMCP = "/mcp"
	// PathTokenPrefix starts the path form of a read token,
	// /t/<token>/<route>, for clients that can send no header.
	PathTokenPrefix = "/t/"
)

// The ClawHub-compatible read API (clawhub.go), under a prefix of its own
// so that its /api/v1 never meets the read API's; the clawhub CLI finds
// it through PathClawHubDiscovery.
const (
	PathClawHubDiscovery = "/.well-known/clawhub.json"
	PathClawHub          = "/clawhub"
	PathClawHubSearch    = PathClawHub + "/api/v1/search"
	PathClawHubSkills    = PathClawHub + "/api/v1/skills"
	PathClawHubSkill     = PathClawHubSkills + "/{name}"
	PathClawHubVersions  = PathClawHubSkill + "/versions"
	PathClawHubVersion   = PathClawHubVersions + "/{version}"
	PathClawHubFile      = PathClawHubSkill + "/file"
	PathClawHubDownload  = PathClawHub + "/api/v1/download"
	PathClawHubResolve   = PathClawHub + "/api/v1/resolve"
	PathClawHubWhoami    = PathClawHub + "/api/v1/whoami"
)

// The HTML catalogue (internal/page). The catalogue itself is PathRoot
// for a client that prefers HTML; the other pages live under /ui/, which
// no document, artifact or API route uses, and the operator's view of
// the last scan's problems beside the admin route.
const (
	PathUISkill        = "/ui/skills/{name}"
	PathUISkillVersion = "/ui/skills/{name}/{version}"
	PathUIAgent        = "/ui/subagents/{name}"
	PathUIAgentVersion = "/ui/subagents/{name}/{version}"
	// PathUISkillFile shows one text file of a skill's version, with
	// line numbers; PathUISkillCompare what changed from version other
	// to version.
	PathUISkillFile    = "/ui/skills/{name}/{version}/files/*"
	PathUISkillCompare = "/ui/skills/{name}/{version}/compare/{other}"
	PathUIAsset        = "/ui/assets/{file}"
	PathUIProblems     = "/-/problems"
)

// ArtifactPath is the content-addressed path of a file whose bytes have
// digest d and whose name is file (SKILL.md, archive.zip, agent.md or a
// resource's slash path). The path names the bytes, so what it answers
// never changes, on this server or on a static host holding an export
// (which ignores query strings). The file's name stays the last
// segments: clients read the archive format from the ".zip" suffix and
// treat a URL ending in "/SKILL.md" as a raw SKILL.md.
func ArtifactPath(d content.Digest, file string) string {
	return Href(PathBlobFile, d.Hex(), file)
}

// Patterns returns the paths documents of kind k are served at.
func (k DocKind) Patterns() []string {
	if !k.valid() {
		return nil
	}
	return docPaths[k]
}

// Path is where the document key lives: its kind's first pattern, filled
// with the key's name, version and page.
func (k DocKey) Path() string {
	if !k.Kind.valid() {
		return ""
	}
	return fill(docPaths[k.Kind][0], func(param string) string {
		switch param {
		case "name":
			return k.Name
		case "version":
			return k.Version
		case "page":
			return k.Page
		}
		return ""
	})
}

// Href fills pattern's parameters, in order, with args: each path-escaped
// as one segment, a trailing * segment by segment.
func Href(pattern string, args ...string) string {
	i := 0
	return fill(pattern, func(string) string {
		if i >= len(args) {
			return ""
		}
		i++
		return args[i-1]
	})
}

// fill replaces each {param} of pattern with the escaped value(param), and
// a trailing * with value("*") escaped segment by segment.
func fill(pattern string, value func(param string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexAny(pattern, "{*")
		if i < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		b.WriteString(pattern[:i])
		if pattern[i] == '*' {
			b.WriteString(escapePath(value("*")))
			pattern = pattern[i+1:]
			continue
		}
		j := strings.IndexByte(pattern[i:], '}')
		b.WriteString(url.PathEscape(value(pattern[i+1 : i+j])))
		pattern = pattern[i+j+1:]
	}
}

// Params lists the parameters of pattern in order ("*" for a trailing
// catch-all).
func Params(pattern string) []string {
	var out []string
	for {
		i := strings.IndexAny(pattern, "{*")
		if i < 0 {
			return out
		}
		if pattern[i] == '*' {
			out = append(out, "*")
			pattern = pattern[i+1:]
			continue
		}
		j := strings.IndexByte(pattern[i:], '}')
		out = append(out, pattern[i+1:i+j])
		pattern = pattern[i+j+1:]
	}
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ScopedFeedHref is the root-relative URL of the one-skill feed of name:
// the URL a client that appends the RFC index path to it (the skills CLI)
// installs exactly that skill from.
func ScopedFeedHref(name string) string {
	return strings.TrimSuffix(DocKey{Kind: DocScopedIndex, Name: name}.Path(), docPaths[DocRFCIndex][0])
}

// URLs. Every artifact URL is absolute and content-addressed: its path
// names its bytes (ArtifactPath).

// ArtifactURL is the URL of v's artifact: its zip or its SKILL.md.
func ArtifactURL(base string, v *item.SkillVersion) string {
	if v.Type == item.TypeArchive {
		return base + ArtifactPath(v.Archive, ArchiveFile)
	}
	return base + ArtifactPath(v.SkillMD, skill.FileName)
}

// SkillMDURL is the URL of v's SKILL.md, which is v's artifact when v is
// a lone SKILL.md and the first file of its archive otherwise.
func SkillMDURL(base string, v *item.SkillVersion) string {
	return base + ArtifactPath(v.SkillMD, skill.FileName)
}

// ResourceURL is the URL of one resource file of v.
func ResourceURL(base string, r item.Resource) string {
	return base + ArtifactPath(r.Digest, r.Path)
}

// AgentURL is the URL of an agent-md file.
func AgentURL(base string, v *item.AgentVersion) string {
	return base + ArtifactPath(v.Digest, AgentFile)
}

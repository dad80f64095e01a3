package check

import (
	"net/url"
	"strings"
)

// The wire rules check holds a server to, written out here from the
// specifications they come from (the Agent Skills Discovery RFC, the
// native manifest tree netclaw syncs, the v0.1 layout skillkit and
// OpenCode read, A2A's agent card) rather than taken from this server's
// feed package: a constant both got wrong would otherwise pass every
// check. TestWireRulesAgreeWithFeed holds the two to the same values, so
// a change to either fails a test until the other follows.
const (
	// RFCSchema is the only $schema RFC clients accept, compared byte for
	// byte.
	RFCSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
	// ManifestSchema is the native manifest's $schema.
	ManifestSchema = "https://schemas.netclaw.dev/skillserver/manifest/0.1.0"

	// The entry points every client starts from, below the feed's base.
	pathRFCIndex      = "/.well-known/agent-skills/index.json"
	pathManifest      = "/manifest.json"
	pathSubagentIndex = "/subagents/v1/index.json"
	pathLegacyIndex   = "/.well-known/skills/index.json"
	// pathLegacyFiles holds the v0.1 layout's files, one folder a skill:
	// /.well-known/skills/<name>/<file>.
	pathLegacyFiles = "/.well-known/skills/"

	// typeArchive and typeSkillMD are an RFC entry's two types: a zip of
	// the skill's folder, or its SKILL.md alone.
	typeArchive = "archive"
	typeSkillMD = "skill-md"
	// agentFile names a sub-agent's one file.
	agentFile = "agent.md"

	// The MCP skills extension (SEP-2640, io.modelcontextprotocol/skills)
	// at the feed's MCP endpoint, on the revision it is specified against.
	pathMCP      = "/mcp"
	mcpRevision  = "2026-07-28"
	mcpExtension = "io.modelcontextprotocol/skills"
	mcpScheme    = "skill://"
	// mcpInvalidParams is JSON-RPC's invalid params: the extension's
	// answer to an unknown skill URI.
	mcpInvalidParams = -32602
	// mcpMaxPages is the most skills/list pages the MCP Inspector reads.
	mcpMaxPages = 64
)

// agentCardPaths are where A2A clients look for the agent card: the
// current path (A2A 0.3.0), then the older one.
var agentCardPaths = []string{"/.well-known/agent-card.json", "/.well-known/agent.json"}

// legacyFilePath is the v0.1 path of a skill's file, each segment
// escaped.
func legacyFilePath(name, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return pathLegacyFiles + url.PathEscape(name) + "/" + strings.Join(segs, "/")
}

package check

import (
	"slices"
	"testing"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
)

// TestWireRulesAgreeWithFeed: check's own statement of the wire rules
// (wire.go) and what this server's feed package publishes are the same
// values. Either changing alone fails here; a change to the rules must be
// made in both, deliberately.
func TestWireRulesAgreeWithFeed(t *testing.T) {
	for _, c := range []struct{ what, check, feed string }{
		{"RFC $schema", RFCSchema, feed.RFCSchema},
		{"manifest $schema", ManifestSchema, feed.ManifestSchema},
		{"RFC index path", pathRFCIndex, feed.DocRFCIndex.Patterns()[0]},
		{"manifest path", pathManifest, feed.DocManifest.Patterns()[0]},
		{"sub-agent index path", pathSubagentIndex, feed.DocSubagentIndex.Patterns()[0]},
		{"legacy index path", pathLegacyIndex, feed.DocLegacyIndex.Patterns()[0]},
		{"archive type", typeArchive, string(item.TypeArchive)},
		{"skill-md type", typeSkillMD, string(item.TypeSkillMD)},
		{"agent file", agentFile, feed.AgentFile},
		{"MCP endpoint", pathMCP, feed.PathMCP},
		{"MCP skill scheme", mcpScheme, feed.SkillScheme},
	} {
		if c.check != c.feed {
			t.Errorf("%s: check says %q, feed publishes %q", c.what, c.check, c.feed)
		}
	}
	if !slices.Equal(agentCardPaths, feed.DocAgentCard.Patterns()) {
		t.Errorf("agent card paths: check reads %q, feed serves %q", agentCardPaths, feed.DocAgentCard.Patterns())
	}
	for _, f := range []struct{ name, file string }{
		{"code-review", "SKILL.md"},
		{"k8s-deploy", "scripts/deploy.sh"},
		{"odd", "dir with space/100% #1?.md"},
	} {
		if got, want := legacyFilePath(f.name, f.file), feed.Href(feed.PathLegacyFile, f.name, f.file); got != want {
			t.Errorf("legacy file %s/%s: check asks %q, feed serves %q", f.name, f.file, got, want)
		}
	}
}

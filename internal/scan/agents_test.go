package scan

import (
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/skill"
)

func TestInvalidAgentFixtures(t *testing.T) {
	root := "../../testdata/invalid/agents"
	snap := scanTree(t, Input{AgentsDir: root})
	tests := []struct {
		path      string // under root
		rule      string
		severity  skill.Severity
		published string // agent name that must (still) be published, or ""
	}{
		{"bom-agent.md", skill.RuleEncoding, skill.SeverityError, ""},
		{"name-mismatch-agent.md", skill.RuleNameMismatch, skill.SeverityError, ""},
		{"empty-body.md", skill.RuleBody, skill.SeverityError, ""},
		{"bad-timeout.md", skill.RuleField, skill.SeverityError, ""},
		{"bad-role.md", skill.RuleField, skill.SeverityError, ""},
		{"dup.md", skill.RuleDuplicate, skill.SeverityError, ""},
		{"dup", skill.RuleDuplicate, skill.SeverityError, ""},
		{"version-file-mismatch/1.0.0.md", skill.RuleVersion, skill.SeverityError, ""},
		{"bad-version-file/1.0_x.md", skill.RuleVersion, skill.SeverityError, ""},
		{"unknown-key-agent.md", skill.RuleUnknownKey, skill.SeverityWarning, "unknown-key-agent"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			found := false
			for _, p := range snap.Problems {
				found = found || (p.Path == root+"/"+tt.path && p.Rule == tt.rule && p.Severity == tt.severity)
			}
			if !found {
				t.Errorf("no %s %q problem at %s; got %v", tt.severity, tt.rule, tt.path, snap.Problems)
			}
			if tt.published != "" {
				if _, ok := snap.Agent(tt.published); !ok {
					t.Errorf("%s is not published beside its warning", tt.published)
				}
			}
		})
	}
	var names []string
	for _, a := range snap.Agents {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "unknown-key-agent,valid-agent" {
		t.Errorf("published agents = %s, want only the valid ones", got)
	}
	if ps := snap.AgentEntries["valid-agent"].Problems; len(ps) != 0 {
		t.Errorf("valid-agent has problems %v", ps)
	}
}

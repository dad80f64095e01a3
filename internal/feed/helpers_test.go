package feed

import (
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/scan"
)

// Tree says what the feed of a test is made of: the roots a scan reads.
type Tree struct {
	SkillsDir, AgentsDir string
	PageSize             int
}

// scanTree scans src and returns its feed, as a snapshot's.
func scanTree(t *testing.T, src Tree) *Feed {
	t.Helper()
	r, err := scan.Run(t.Context(), scan.Input{SkillsDir: src.SkillsDir, AgentsDir: src.AgentsDir, Generation: 1, Cache: scan.NewCache()})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return New(Input{Generation: 1, Source: r, Skills: r.Skills, Agents: r.Agents,
		AgentsConfigured: src.AgentsDir != "", PageSize: src.PageSize, Shared: NewSharedCache(DefaultCacheBytes)})
}

var writeFile = fixture.WriteFile

var skillMD = fixture.SkillMD

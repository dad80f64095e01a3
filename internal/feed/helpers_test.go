package feed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
)

// Tree says what the feed of a test is made of: the roots a scan reads.
type Tree struct {
	SkillsDir, AgentsDir string
	PageSize             int
}

// scanned is a scan result as a feed's Source.
type scanned struct{ r *scan.Result }

func (s scanned) Skill(name string) (*item.Skill, bool) {
	sk := s.r.SkillEntries[name].Published()
	return sk, sk != nil
}

func (s scanned) Agent(name string) (*item.Agent, bool) {
	a := s.r.AgentEntries[name].Published()
	return a, a != nil
}

// scanTree scans src and returns its feed, as a snapshot's.
func scanTree(t *testing.T, src Tree) *Feed {
	t.Helper()
	r, err := scan.Run(t.Context(), scan.Input{SkillsDir: src.SkillsDir, AgentsDir: src.AgentsDir, Generation: 1, Cache: scan.NewCache()})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return New(Input{Generation: 1, Source: scanned{r}, Skills: r.Skills, Agents: r.Agents,
		AgentsConfigured: src.AgentsDir != "", PageSize: src.PageSize, Shared: NewSharedCache(DefaultCacheBytes)})
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: test skill " + name + "\n---\n\nBody.\n"
}

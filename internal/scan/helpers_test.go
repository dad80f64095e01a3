package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// scanned is one scan as the walker's tests look at it.
type scanned struct {
	r        *Result
	Store    *content.Store
	Problems []skill.Problem // every entry's
}

func (s scanned) Skill(name string) (*item.Skill, bool) {
	sk := s.r.SkillEntries[name].Published()
	return sk, sk != nil
}

func (s scanned) Agent(name string) (*item.Agent, bool) {
	a := s.r.AgentEntries[name].Published()
	return a, a != nil
}

// scanTree scans in from an empty cache, as generation 1.
func scanTree(t *testing.T, in Input) scanned {
	t.Helper()
	in.Generation, in.Cache = 1, NewCache()
	r, err := Run(t.Context(), in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := scanned{r: r, Store: r.Store}
	for _, e := range r.SkillEntries {
		s.Problems = append(s.Problems, e.Problems...)
	}
	for _, e := range r.AgentEntries {
		s.Problems = append(s.Problems, e.Problems...)
	}
	return s
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

func problemsUnder(snap scanned, prefix, rule string) []skill.Problem {
	var out []skill.Problem
	for _, p := range snap.Problems {
		if strings.HasPrefix(p.Path, prefix) && p.Rule == rule {
			out = append(out, p)
		}
	}
	return out
}

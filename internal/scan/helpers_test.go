package scan

import (
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/skill"
)

// scanned is one scan as the walker's tests look at it.
type scanned struct {
	*Result
	Problems []skill.Problem // every entry's
}

// scanTree scans in from an empty cache, as generation 1.
func scanTree(t *testing.T, in Input) scanned {
	t.Helper()
	in.Generation, in.Cache = 1, NewCache()
	r, err := Run(t.Context(), in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := scanned{Result: r}
	for _, e := range r.SkillEntries {
		s.Problems = append(s.Problems, e.Problems...)
	}
	for _, e := range r.AgentEntries {
		s.Problems = append(s.Problems, e.Problems...)
	}
	return s
}

var writeFile = fixture.WriteFile

var skillMD = fixture.SkillMD

func problemsUnder(snap scanned, prefix, rule string) []skill.Problem {
	var out []skill.Problem
	for _, p := range snap.Problems {
		if strings.HasPrefix(p.Path, prefix) && p.Rule == rule {
			out = append(out, p)
		}
	}
	return out
}

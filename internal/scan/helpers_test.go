package scan

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// scanned is one scan as the tests look at it.
type scanned struct {
	*Result
	// Problems are every entry's, sorted by path, then rule and message
	// (the order a snapshot lists them in).
	Problems []skill.Problem
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
	slices.SortStableFunc(s.Problems, func(a, b skill.Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Rule+a.Message, b.Rule+b.Message)
	})
	return s
}

var writeFile = fixture.WriteFile

var skillMD = fixture.SkillMD

var symlink = fixture.Symlink

var agentMD = fixture.AgentMD

func problemsUnder(snap scanned, prefix, rule string) []skill.Problem {
	var out []skill.Problem
	for _, p := range snap.Problems {
		if strings.HasPrefix(p.Path, prefix) && p.Rule == rule {
			out = append(out, p)
		}
	}
	return out
}

// versionsOf lists the versions of it, newest first; none for a nil item.
func versionsOf[V item.Version](it *item.Item[V]) []string {
	if it == nil {
		return nil
	}
	var out []string
	for _, v := range it.Versions {
		out = append(out, v.Info().Version)
	}
	return out
}

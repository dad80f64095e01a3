package scan

import (
	"strings"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// failedPaths are the paths of an entry's error problems.
func failedPaths(ps []skill.Problem) []string {
	var out []string
	for _, p := range ps {
		if p.Severity == skill.SeverityError {
			out = append(out, p.Path)
		}
	}
	return out
}

// touches reports whether any failed path is source, inside it, or one of
// its parents: the failure is about that version.
func touches(failed []string, source string) bool {
	for _, f := range failed {
		if f == source || strings.HasPrefix(f, source+"/") || strings.HasPrefix(source, f+"/") {
			return true
		}
	}
	return false
}

func staleProblem(source, version string, generation uint64) skill.Problem {
	return skill.Warnf(source, skill.RuleStale, "still serving the last good version %s (from generation %d) until the errors here are fixed or it is removed from disk", version, generation)
}

// lastGood picks the versions of the previous snapshot to keep publishing:
// those whose source (report of its path) failed this scan (problems has
// an error at, inside or above it) and that the new scan did not
// produce. A half-saved edit or a transient read error therefore never
// removes a version from the feeds, while a version whose files are gone
// from disk is not carried: removal removes it. Each kept version is
// reported stale.
func lastGood[V item.Version](prev, cur []V, problems []skill.Problem, report func(string) string) (carried []V, stale []skill.Problem) {
	failed := failedPaths(problems)
	if len(failed) == 0 {
		return nil, nil
	}
	have := make(map[string]bool, len(cur))
	for _, v := range cur {
		have[v.Info().Version] = true
	}
	for _, v := range prev {
		info := v.Info()
		source := report(info.Path)
		if have[info.Version] || !touches(failed, source) {
			continue
		}
		carried = append(carried, v)
		stale = append(stale, staleProblem(source, info.Version, info.Generation))
	}
	return carried, stale
}

// keepLastGood carries the versions of the previous scan's entry key
// whose sources failed this scan (see lastGood), with their blobs.
func (e *Entry[V]) keepLastGood(blobs *content.Builder, prevScan *Result, prev map[string]*Entry[V], key string, report func(string) string) {
	pe := prev[key].Published()
	if pe == nil {
		return
	}
	var versions []V
	if e.Item != nil {
		versions = e.Item.Versions
	}
	carried, stale := lastGood(pe.Versions, versions, e.Problems, report)
	if len(carried) == 0 {
		return
	}
	for _, v := range carried {
		carry(blobs, prevScan.Store, v)
	}
	e.Problems = append(e.Problems, stale...)
	e.Item = item.New(key, append(versions, carried...))
}

// carry puts every blob of v that from holds into blobs: a version kept
// from the previous scan brings its bytes into the new store.
func carry(blobs *content.Builder, from *content.Store, v interface{ Blobs() []content.Digest }) {
	for _, d := range v.Blobs() {
		blobs.Carry(d, from)
	}
}

package scan

import (
	"strings"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// Entry is the outcome of scanning one top-level entry of a root: a skill
// folder, or everything that claims one agent name (agents/<name>.md and
// agents/<name>/), or one top-level entry that could not be read as
// either. Scans keep entries, valid or not, so a reload can reuse those
// that did not change together with their problems.
type Entry[V item.Version] struct {
	Item     *item.Item[V] // nil when nothing in it is valid
	Problems []skill.Problem
	Gen      uint64 // generation that scanned it
	// Linked is true when the entry is or holds a symlink: what it
	// publishes may live in another entry, so a change anywhere can
	// change it (see catalog.Catalog.Update).
	Linked bool
}

// SkillEntry and AgentEntry are the entries of the two roots.
type (
	SkillEntry = Entry[*item.SkillVersion]
	AgentEntry = Entry[*item.AgentVersion]
)

// Published returns the entry's item; nil for a missing entry too.
func (e *Entry[V]) Published() *item.Item[V] {
	if e == nil {
		return nil
	}
	return e.Item
}

// entryScanner is what the scanners of both roots share: the scan's
// inputs and the entry being filled.
type entryScanner[V item.Version] struct {
	scanBase
	cur *Entry[V]
}

func newEntryScanner[V item.Version](base scanBase) entryScanner[V] {
	return entryScanner[V]{scanBase: base, cur: &Entry[V]{Gen: base.generation}}
}

func (s *entryScanner[V]) problem(p skill.Problem) { s.cur.Problems = append(s.cur.Problems, p) }

// finish keeps the last good versions of key from last (the previous
// scan's entries of the root) and returns the entry, or nil when there is
// nothing to keep.
func (s *entryScanner[V]) finish(last map[string]*Entry[V], key string) *Entry[V] {
	s.cur.keepLastGood(s.scanBase, last, key)
	if s.cur.Item == nil && len(s.cur.Problems) == 0 && !s.cur.Linked {
		return nil
	}
	return s.cur
}

// keepLastGood carries the versions of the previous scan's entry key
// whose sources failed this scan (see lastGood), with their blobs.
func (e *Entry[V]) keepLastGood(b scanBase, prev map[string]*Entry[V], key string) {
	pe := prev[key].Published()
	if pe == nil {
		return
	}
	var versions []V
	if e.Item != nil {
		versions = e.Item.Versions
	}
	carried, stale := lastGood(pe.Versions, versions, e.Problems)
	if len(carried) == 0 {
		return
	}
	for _, v := range carried {
		carry(b.blobs, b.prev.Store, v)
	}
	e.Problems = append(e.Problems, stale...)
	e.Item = item.New(key, append(versions, carried...))
}

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
// those whose source failed this scan (problems has an error at, inside or
// above it) and that the new scan did not produce. A half-saved edit or a
// transient read error therefore never removes a version from the feeds,
// while a version whose files are gone from disk is not carried: removal
// removes it. Each kept version is reported stale.
func lastGood[V item.Version](prev, cur []V, problems []skill.Problem) (carried []V, stale []skill.Problem) {
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
		if have[info.Version] || !touches(failed, info.Source) {
			continue
		}
		carried = append(carried, v)
		stale = append(stale, staleProblem(info.Source, info.Version, info.Generation))
	}
	return carried, stale
}

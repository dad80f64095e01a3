package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

// derived is what a snapshot knows about all of its entries together: the
// entries that have problems, the skills that route to a sub-agent, and
// version and error counts. A full build goes over every entry; a partial
// one starts from the previous snapshot's and looks only at the entries
// it rescanned, so a one-skill reload does not pay for the whole
// catalogue here.
type derived struct {
	skills, agents rootDerived
	routingSkills  map[string]bool // skills with a version naming a sub-agent
	// routeProblems are the warnings of routing skills whose sub-agent is
	// not published, by skill.
	routeProblems map[string][]skill.Problem
	errors        int
	// fingerprint sums a hash of every published version's kind, name,
	// version and artifact digest (mod 2^64): it depends on what is
	// published, not on the order or history of reloads that led there.
	fingerprint uint64
}

// rootDerived is what derived knows of the entries of one root.
type rootDerived struct {
	problems map[string]bool // entries that have problems
	linked   map[string]bool // entries that are or hold a symlink
	versions int             // versions published
}

func (r rootDerived) clone() rootDerived {
	return rootDerived{problems: maps.Clone(r.problems), linked: maps.Clone(r.linked), versions: r.versions}
}

func newRootDerived() rootDerived {
	return rootDerived{problems: map[string]bool{}, linked: map[string]bool{}}
}

// versionHash is one published version's share of the fingerprint.
func versionHash(kind item.Kind, name, version string, d content.Digest) uint64 {
	sum := sha256.Sum256([]byte(kind.String() + "\x00" + name + "\x00" + version + "\x00" + string(d)))
	return binary.BigEndian.Uint64(sum[:8])
}

// note counts entry e of root r, under key k, into d.
func note[V item.Version](d *derived, r *rootDerived, kind item.Kind, k string, e *scan.Entry[V]) {
	if e == nil {
		return
	}
	if len(e.Problems) > 0 {
		r.problems[k] = true
	}
	if e.Linked {
		r.linked[k] = true
	}
	if e.Item == nil {
		return
	}
	r.versions += len(e.Item.Versions)
	for _, v := range e.Item.Versions {
		d.fingerprint += versionHash(kind, v.Info().Name, v.Info().Version, v.ArtifactDigest())
	}
}

// forget takes entry e of root r, under key k, out of d.
func forget[V item.Version](d *derived, r *rootDerived, kind item.Kind, k string, e *scan.Entry[V]) {
	delete(r.problems, k)
	delete(r.linked, k)
	if it := e.Published(); it != nil {
		r.versions -= len(it.Versions)
		for _, v := range it.Versions {
			d.fingerprint -= versionHash(kind, v.Info().Name, v.Info().Version, v.ArtifactDigest())
		}
	}
}

// noteSkill is note, plus whether the skill routes to a sub-agent.
func (d *derived) noteSkill(k string, e *scan.SkillEntry) {
	note(d, &d.skills, item.KindSkill, k, e)
	if it := e.Published(); it != nil && slices.ContainsFunc(it.Versions, func(v *item.SkillVersion) bool { return v.Subagent != "" }) {
		d.routingSkills[k] = true
	}
}

func (d *derived) forgetSkill(k string, e *scan.SkillEntry) {
	forget(d, &d.skills, item.KindSkill, k, e)
	delete(d.routingSkills, k)
	delete(d.routeProblems, k)
}

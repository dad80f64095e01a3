package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

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

// Fingerprint identifies what the snapshot publishes: every skill and
// sub-agent version with its artifact digest. Replicas serving the same
// tree have the same fingerprint whatever their reload history; it
// leaves out what depends on the checkout (modification times) or on the
// scan (problems).
func (s *Snapshot) Fingerprint() string { return fmt.Sprintf("%016x", s.derived.fingerprint) }

// derive fills s.derived, s.crossProblems and s.Problems. prev is the
// snapshot a partial build started from.
func (s *Snapshot) derive(prev *Snapshot) {
	d := &s.derived
	if s.partial {
		p := &prev.derived
		d.skills, d.agents, d.routingSkills = p.skills.clone(), p.agents.clone(), maps.Clone(p.routingSkills)
		d.routeProblems = maps.Clone(p.routeProblems)
		d.fingerprint = p.fingerprint
		for _, k := range s.rescannedSkills {
			d.forgetSkill(k, prev.skillEntries[k])
			d.noteSkill(k, s.skillEntries[k])
		}
		for _, k := range s.rescannedAgents {
			forget(d, &d.agents, item.KindSubagent, k, prev.agentEntries[k])
			note(d, &d.agents, item.KindSubagent, k, s.agentEntries[k])
		}
	} else {
		d.skills, d.agents, d.routingSkills = newRootDerived(), newRootDerived(), map[string]bool{}
		d.routeProblems = map[string][]skill.Problem{}
		for k, e := range s.skillEntries {
			d.noteSkill(k, e)
		}
		for k, e := range s.agentEntries {
			note(d, &d.agents, item.KindSubagent, k, e)
		}
	}
	s.Problems = nil
	for k := range d.skills.problems {
		s.Problems = append(s.Problems, s.skillEntries[k].Problems...)
	}
	for k := range d.agents.problems {
		s.Problems = append(s.Problems, s.agentEntries[k].Problems...)
	}
	s.checkSubagentRoutes()
	s.Problems = append(s.Problems, s.crossProblems...)
	slices.SortStableFunc(s.Problems, func(a, b skill.Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Rule+a.Message, b.Rule+b.Message)
	})
	d.errors = 0
	for _, p := range s.Problems {
		if p.Severity == skill.SeverityError {
			d.errors++
		}
	}
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

// checkSubagentRoutes warns about skills that route to a sub-agent the
// snapshot does not publish; their routesToSubagent is omitted, so every
// advertised href answers. Only skills that route anywhere are looked at:
// all of them when the sub-agents may have changed (a full build, or a
// partial one that rescanned sub-agents), else only the rescanned skills.
func (s *Snapshot) checkSubagentRoutes() {
	d := &s.derived
	check := s.rescannedSkills
	if !s.partial || len(s.rescannedAgents) > 0 {
		check = slices.Collect(maps.Keys(d.routingSkills))
	}
	for _, name := range check {
		delete(d.routeProblems, name)
		if !d.routingSkills[name] {
			continue
		}
		for _, v := range s.skillEntries[name].Item.Versions {
			if v.Subagent == "" {
				continue
			}
			if _, ok := s.Agent(v.Subagent); !ok {
				d.routeProblems[name] = append(d.routeProblems[name], skill.Warnf(v.Source+"/"+skill.FileName, skill.RuleMetadata,
					"metadata.subagent names %q, which is not a published sub-agent; routesToSubagent is omitted", v.Subagent))
			}
		}
	}
	s.crossProblems = nil
	for _, name := range slices.Sorted(maps.Keys(d.routeProblems)) {
		s.crossProblems = append(s.crossProblems, d.routeProblems[name]...)
	}
}

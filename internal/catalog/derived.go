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
	problemSkills, problemAgents map[string]bool
	linkedSkills, linkedAgents   map[string]bool // entries that are or hold a symlink
	routingSkills                map[string]bool // skills with a version naming a sub-agent
	// routeProblems are the warnings of routing skills whose sub-agent is
	// not published, by skill.
	routeProblems                map[string][]skill.Problem
	skillVersions, agentVersions int
	errors                       int
	// fingerprint sums a hash of every published version's kind, name,
	// version and artifact digest (mod 2^64): it depends on what is
	// published, not on the order or history of reloads that led there.
	fingerprint uint64
}

// versionHash is one published version's share of the fingerprint.
func versionHash(kind, name, version string, d content.Digest) uint64 {
	sum := sha256.Sum256([]byte(kind + "\x00" + name + "\x00" + version + "\x00" + string(d)))
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
		d.problemSkills, d.problemAgents, d.routingSkills = maps.Clone(p.problemSkills), maps.Clone(p.problemAgents), maps.Clone(p.routingSkills)
		d.routeProblems = maps.Clone(p.routeProblems)
		d.linkedSkills, d.linkedAgents = maps.Clone(p.linkedSkills), maps.Clone(p.linkedAgents)
		d.skillVersions, d.agentVersions, d.fingerprint = p.skillVersions, p.agentVersions, p.fingerprint
		for _, k := range s.rescannedSkills {
			d.forgetSkill(k, prev.skillEntries[k])
			d.noteSkill(k, s.skillEntries[k])
		}
		for _, k := range s.rescannedAgents {
			d.forgetAgent(k, prev.agentEntries[k])
			d.noteAgent(k, s.agentEntries[k])
		}
	} else {
		d.problemSkills, d.problemAgents, d.routingSkills = map[string]bool{}, map[string]bool{}, map[string]bool{}
		d.routeProblems = map[string][]skill.Problem{}
		d.linkedSkills, d.linkedAgents = map[string]bool{}, map[string]bool{}
		for k, e := range s.skillEntries {
			d.noteSkill(k, e)
		}
		for k, e := range s.agentEntries {
			d.noteAgent(k, e)
		}
	}
	s.Problems = nil
	for k := range d.problemSkills {
		s.Problems = append(s.Problems, s.skillEntries[k].Problems...)
	}
	for k := range d.problemAgents {
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

func (d *derived) noteSkill(k string, e *scan.SkillEntry) {
	if e == nil {
		return
	}
	if len(e.Problems) > 0 {
		d.problemSkills[k] = true
	}
	if e.Linked {
		d.linkedSkills[k] = true
	}
	if e.Skill == nil {
		return
	}
	d.skillVersions += len(e.Skill.Versions)
	for _, v := range e.Skill.Versions {
		d.fingerprint += versionHash("skill", v.Name, v.Version, v.Digest())
	}
	if slices.ContainsFunc(e.Skill.Versions, func(v *item.SkillVersion) bool { return v.Subagent != "" }) {
		d.routingSkills[k] = true
	}
}

func (d *derived) forgetSkill(k string, e *scan.SkillEntry) {
	delete(d.problemSkills, k)
	delete(d.linkedSkills, k)
	delete(d.routingSkills, k)
	delete(d.routeProblems, k)
	if sk := e.Item(); sk != nil {
		d.skillVersions -= len(sk.Versions)
		for _, v := range sk.Versions {
			d.fingerprint -= versionHash("skill", v.Name, v.Version, v.Digest())
		}
	}
}

func (d *derived) noteAgent(k string, e *scan.AgentEntry) {
	if e == nil {
		return
	}
	if len(e.Problems) > 0 {
		d.problemAgents[k] = true
	}
	if e.Linked {
		d.linkedAgents[k] = true
	}
	if e.Agent != nil {
		d.agentVersions += len(e.Agent.Versions)
		for _, v := range e.Agent.Versions {
			d.fingerprint += versionHash("agent", v.Name, v.Version, v.Digest)
		}
	}
}

func (d *derived) forgetAgent(k string, e *scan.AgentEntry) {
	delete(d.problemAgents, k)
	delete(d.linkedAgents, k)
	if a := e.Item(); a != nil {
		d.agentVersions -= len(a.Versions)
		for _, v := range a.Versions {
			d.fingerprint -= versionHash("agent", v.Name, v.Version, v.Digest)
		}
	}
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
		for _, v := range s.skillEntries[name].Skill.Versions {
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

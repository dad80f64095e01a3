package catalog

import (
	"slices"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

// logReload logs each problem once (new ones, not those of reused entries)
// and one summary line. After a partial reload only the rescanned entries
// can hold new problems.
func (c *Catalog) logReload(prev *Snapshot, res ReloadResult) {
	snap := res.Snapshot
	logNew := func(ps []skill.Problem) {
		for _, p := range ps {
			c.log.Warn("scan problem", "path", p.Path, "rule", p.Rule, "severity", string(p.Severity), "message", p.Message)
		}
	}
	var prevSkills map[string]*scan.SkillEntry
	var prevAgents map[string]*scan.AgentEntry
	if prev != nil {
		prevSkills, prevAgents = prev.skillEntries, prev.agentEntries
	}
	partial := prev != nil && snap.partial
	logNewEntries(prevSkills, snap.skillEntries, snap.rescannedSkills, partial, logNew)
	logNewEntries(prevAgents, snap.agentEntries, snap.rescannedAgents, partial, logNew)
	for _, p := range snap.crossProblems {
		if prev == nil || !slices.Contains(prev.crossProblems, p) {
			logNew([]skill.Problem{p})
		}
	}
	c.log.Info("reload",
		"generation", snap.Generation,
		"full", res.Full,
		"skills", len(snap.Skills),
		"skill_versions", snap.VersionCount(),
		"agents", len(snap.Agents),
		"agent_versions", snap.AgentVersionCount(),
		"problems", len(snap.Problems),
		"errors", snap.ErrorCount(),
		"rescanned", snap.Rescanned,
		"files_read", snap.FileCacheMisses,
		"files_cached", snap.FileCacheHits,
		"archives_built", snap.ArchivesBuilt,
		"blobs", snap.Store.Len(),
		"bytes", snap.Store.Bytes(),
		"retained_artifacts", res.Retention.Artifacts,
		"retained_bytes", res.Retention.Bytes,
		"duration", res.Duration,
	)
}

// logNewEntries calls logNew with the problems of each entry of cur that
// is not prev's (an entry reused whole was logged when it was scanned).
// After a partial build only the rescanned entries can be new.
func logNewEntries[V item.Version](prev, cur map[string]*scan.Entry[V], rescanned []string, partial bool, logNew func([]skill.Problem)) {
	if !partial {
		for name, e := range cur {
			if prev[name] != e {
				logNew(e.Problems)
			}
		}
		return
	}
	for _, name := range rescanned {
		if e := cur[name]; e != nil && prev[name] != e {
			logNew(e.Problems)
		}
	}
}

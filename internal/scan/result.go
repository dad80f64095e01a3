package scan

import (
	"errors"

	"github.com/skillserver/skillserver/internal/content"
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

// ErrScanFailed wraps the reason a whole scan could not complete; the
// caller keeps its previous snapshot.
var ErrScanFailed = errors.New("scan failed")

// Result is one completed scan: every entry of both roots, the items they
// publish and the content store holding every blob those items serve.
type Result struct {
	SkillEntries map[string]*SkillEntry
	AgentEntries map[string]*AgentEntry
	Skills       []*item.Skill // sorted by name
	Agents       []*item.Agent // sorted by name
	Store        *content.Store
	// Partial is true when the scan rescanned only RescannedSkills and
	// RescannedAgents and reused every other entry of Prev.
	Partial                          bool
	RescannedSkills, RescannedAgents []string
	// Rescanned counts entries scanned rather than reused; FileCacheHits
	// and FileCacheMisses count files taken from the cache and files read;
	// ArchivesBuilt the archives deflated rather than reused.
	Rescanned                      int
	FileCacheHits, FileCacheMisses int
	ArchivesBuilt                  int
	// CacheIgnored names the shards of a scan cache kept on disk that
	// the scan read back and did not trust, one error each, for the log.
	CacheIgnored []error
}

// Skill returns the named skill of the scan (a skill's entry key is its
// name); r may be nil.
func (r *Result) Skill(name string) (*item.Skill, bool) {
	if r == nil {
		return nil, false
	}
	sk := r.SkillEntries[name].Published()
	return sk, sk != nil
}

// Agent returns the named sub-agent of the scan (an agent's entry key is
// its name); r may be nil.
func (r *Result) Agent(name string) (*item.Agent, bool) {
	if r == nil {
		return nil, false
	}
	a := r.AgentEntries[name].Published()
	return a, a != nil
}

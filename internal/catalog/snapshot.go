package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/provenance"
	"github.com/skillserver/skillserver/internal/scan"
	"github.com/skillserver/skillserver/internal/skill"
)

// Source says what to scan.
type Source struct {
	// SkillsDir is the skills root; "" means no skills source.
	SkillsDir string
	// AgentsDir is the sub-agents root; "" means no sub-agent source is
	// configured, which the native tree reports as 404 rather than empty.
	AgentsDir string
	Limits    scan.Limits
	// PageSize is the most items one native-tree page holds (0: default).
	PageSize int
	// Server describes this server in the agent card.
	Server feed.ServerInfo
	// Provenance reads, on every build, the git checkout holding SkillsDir.
	Provenance bool
}

// Snapshot is one immutable, complete view of the catalogue. Everything a
// request needs is in it; handlers never touch the filesystem.
type Snapshot struct {
	Generation uint64
	Skills     []*item.Skill // sorted by name
	Agents     []*item.Agent // sorted by name
	Problems   []skill.Problem
	Store      *content.Store
	// AgentsConfigured is false when no sub-agent source is configured.
	AgentsConfigured bool
	ScanDuration     time.Duration
	// Provenance is the git checkout the skills root was read from, and
	// AgentsProvenance the one the sub-agents root was: nil when
	// Source.Provenance is off or the root is in no checkout.
	Provenance, AgentsProvenance *provenance.Source

	// Rescanned counts top-level entries scanned rather than reused;
	// FileCacheHits and FileCacheMisses count files taken from the cache
	// and files read.
	Rescanned                      int
	FileCacheHits, FileCacheMisses int
	ArchivesBuilt                  int // archives deflated rather than reused

	// roots are the skills and sub-agents roots as configured
	// (ProblemsBelowRoots).
	roots [2]string
	// crossProblems are about how items relate (a skill routing to an
	// agent that is not published); they belong to no single entry.
	crossProblems []skill.Problem
	scanned       *scan.Result // what the next scan starts from
	skillEntries  map[string]*scan.SkillEntry
	// partial is true when this snapshot rescanned only the entries in
	// rescannedSkills and rescannedAgents and reused every other entry of
	// the previous one.
	partial                          bool
	rescannedSkills, rescannedAgents []string
	agentEntries                     map[string]*scan.AgentEntry
	derived                          derived
	feed                             *feed.Feed
}

// Feed returns the documents of the snapshot.
func (s *Snapshot) Feed() *feed.Feed { return s.feed }

// Skill returns the named skill. A skill's entry key is its folder name,
// which is its name.
func (s *Snapshot) Skill(name string) (*item.Skill, bool) { return s.scanned.Skill(name) }

// Agent returns the named sub-agent. An agent's entry key is its name.
func (s *Snapshot) Agent(name string) (*item.Agent, bool) { return s.scanned.Agent(name) }

// Counts are the figures of a snapshot that logs and metrics report.
type Counts struct {
	Generation                   uint64
	Skills, Agents               int
	SkillVersions, AgentVersions int
	Errors, Warnings             int
	Bytes                        int64  // what the content store holds
	Fingerprint                  string // see Snapshot.Fingerprint
}

// Counts returns the snapshot's figures.
func (s *Snapshot) Counts() Counts {
	return Counts{Generation: s.Generation, Skills: len(s.Skills), Agents: len(s.Agents),
		SkillVersions: s.VersionCount(), AgentVersions: s.AgentVersionCount(),
		Errors: s.ErrorCount(), Warnings: len(s.Problems) - s.ErrorCount(),
		Bytes: s.Store.Bytes(), Fingerprint: s.Fingerprint()}
}

// AgentVersionCount is the number of published sub-agent versions.
func (s *Snapshot) AgentVersionCount() int { return s.derived.agents.versions }

// VersionCount is the number of published skill versions.
func (s *Snapshot) VersionCount() int { return s.derived.skills.versions }

// ErrorCount is the number of error-severity problems.
func (s *Snapshot) ErrorCount() int { return s.derived.errors }

// Build scans src into a new snapshot with the given generation. Problems
// with individual items are data in the snapshot; an error means the scan as
// a whole failed (a root unreadable, ctx cancelled) and nothing was built.
// It is for one look at a tree (validate, export): documents for bases
// nobody configured are made per call, never cached.
func Build(ctx context.Context, src Source, generation uint64) (*Snapshot, error) {
	return build(ctx, buildInput{src: src, generation: generation, cache: scan.NewCache(), docs: feed.NewSharedCache(0), log: slog.New(slog.DiscardHandler)})
}

type buildInput struct {
	src        Source
	generation uint64
	prev       *Snapshot // reused where unchanged; source of last good versions
	changes    *scan.Changes
	cache      *scan.Cache
	blobs      *content.Dir // nil: blobs in memory
	docs       *feed.SharedCache
	log        *slog.Logger
	progress   *scan.Progress // nil: not counted
}

// checkout is the git checkout holding root, or nil: none when root is in
// no checkout, and, logged, none when the checkout cannot be read.
func checkout(log *slog.Logger, root string) *provenance.Source {
	if root == "" {
		return nil
	}
	p, err := provenance.Read(root)
	if errors.Is(err, provenance.ErrNotCheckout) {
		return nil
	} else if err != nil {
		log.Warn("provenance: the git checkout cannot be read; its versions are published without a source", "root", root, "err", err)
		return nil
	}
	return &p
}

func build(ctx context.Context, in buildInput) (*Snapshot, error) {
	start := time.Now()
	src := in.src
	var prev *scan.Result
	if in.prev != nil {
		prev = in.prev.scanned
	}
	r, err := scan.Run(ctx, scan.Input{SkillsDir: src.SkillsDir, AgentsDir: src.AgentsDir, Limits: src.Limits,
		Generation: in.generation, Prev: prev, Changes: in.changes, Cache: in.cache, Blobs: in.blobs, Progress: in.progress})
	if err != nil {
		return nil, err
	}
	for _, err := range r.CacheIgnored {
		in.log.Warn("cannot use part of the scan cache; its entries were read from the files", "error", err)
	}
	snap := &Snapshot{Generation: in.generation, AgentsConfigured: src.AgentsDir != "", roots: [2]string{src.SkillsDir, src.AgentsDir},
		Skills: r.Skills, Agents: r.Agents, Store: r.Store,
		Rescanned: r.Rescanned, FileCacheHits: r.FileCacheHits, FileCacheMisses: r.FileCacheMisses, ArchivesBuilt: r.ArchivesBuilt,
		scanned: r, skillEntries: r.SkillEntries, agentEntries: r.AgentEntries,
		partial: r.Partial, rescannedSkills: r.RescannedSkills, rescannedAgents: r.RescannedAgents}
	snap.derive(in.prev)
	if src.Provenance {
		// Read after the scan: a checkout that moves during it is named
		// by its newer commit, which the next reload scans.
		snap.Provenance, snap.AgentsProvenance = checkout(in.log, src.SkillsDir), checkout(in.log, src.AgentsDir)
	}
	snap.feed = feed.New(feed.Input{Generation: snap.Generation, Source: snap, Files: snap.Store, Skills: snap.Skills, Agents: snap.Agents,
		Origins:          feed.Origins{Skills: snap.Provenance, Agents: snap.AgentsProvenance},
		AgentsConfigured: snap.AgentsConfigured, PageSize: src.PageSize, Server: src.Server, Shared: in.docs})
	snap.ScanDuration = time.Since(start)
	return snap, nil
}

// rootNames name the roots, in the order of Snapshot.roots, where a
// problem is shown without the server's own paths.
var rootNames = [2]string{"skills", "agents"}

// ProblemsBelowRoots is Problems with each root, as configured, replaced
// by its name ("skills" or "agents") in paths and messages: what the
// admin page shows, which has no need to tell where the server keeps its
// trees (an absolute path names the host's layout, a user's home, a
// mount).
func (s *Snapshot) ProblemsBelowRoots() []skill.Problem {
	out := slices.Clone(s.Problems)
	for i := range out {
		for r, root := range s.roots {
			if root == "" {
				continue
			}
			out[i].Path = belowRoot(out[i].Path, root, rootNames[r])
			out[i].Message = strings.ReplaceAll(out[i].Message, root+"/", rootNames[r]+"/")
		}
	}
	return out
}

// belowRoot is p with root (a path prefix ending at a separator or the
// end) replaced by name.
func belowRoot(p, root, name string) string {
	rest, ok := strings.CutPrefix(p, root)
	if !ok || rest != "" && rest[0] != '/' {
		return p
	}
	return name + rest
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
				d.routeProblems[name] = append(d.routeProblems[name], skill.Warnf(scan.Report(s.roots[0], path.Join(v.Path, skill.FileName)), skill.RuleMetadata,
					"metadata.subagent names %q, which is not a published sub-agent; routesToSubagent is omitted", v.Subagent))
			}
		}
	}
	s.crossProblems = nil
	for _, name := range slices.Sorted(maps.Keys(d.routeProblems)) {
		s.crossProblems = append(s.crossProblems, d.routeProblems[name]...)
	}
}

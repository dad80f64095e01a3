package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// Source says what to scan.
type Source struct {
	// SkillsDir is the skills root; "" means no skills source.
	SkillsDir string
	// AgentsDir is the sub-agents root; "" means no sub-agent source is
	// configured, which the native tree reports as 404 rather than empty.
	AgentsDir string
	Limits    Limits
	// PageSize is the most items one native-tree page holds (0: default).
	PageSize int
	// Server describes this server in the agent card.
	Server ServerInfo
}

// Snapshot is one immutable, complete view of the catalogue. Everything a
// request needs is in it; handlers never touch the filesystem.
type Snapshot struct {
	Generation uint64
	Skills     []*Skill // sorted by name
	Agents     []*Agent // sorted by name
	Problems   []skill.Problem
	Store      *content.Store
	// AgentsConfigured is false when no sub-agent source is configured.
	AgentsConfigured bool
	ScanDuration     time.Duration

	// Rescanned counts top-level entries scanned rather than reused;
	// FileCacheHits and FileCacheMisses count files taken from the cache
	// and files read.
	Rescanned                      int
	FileCacheHits, FileCacheMisses int

	// crossProblems are about how items relate (a skill routing to an
	// agent that is not published); they belong to no single entry.
	crossProblems []skill.Problem
	skillEntries  map[string]*skillEntry
	// partial is true when this snapshot rescanned only the entries in
	// rescannedSkills and rescannedAgents and reused every other entry of
	// the previous one.
	partial                          bool
	rescannedSkills, rescannedAgents []string
	agentEntries                     map[string]*agentEntry
	derived                          derived
	pageSize                         int
	server                           ServerInfo
	search                           searchIndexes
	trees                            sync.Once // builds skillTree and agentTree on first use
	skillTree                        collection
	agentTree                        collection
	docs                             *docCache
}

// tree returns the native-tree view of skills or agents, built once per
// snapshot when a tree document is first asked for (a reload does not
// pay for it).
func (s *Snapshot) tree(agents bool) *collection {
	s.trees.Do(func() { s.skillTree, s.agentTree = s.skillCollection(), s.agentCollection() })
	if agents {
		return &s.agentTree
	}
	return &s.skillTree
}

// Skill returns the named skill. A skill's entry key is its folder name,
// which is its name.
func (s *Snapshot) Skill(name string) (*Skill, bool) {
	sk := s.skillEntries[name].item()
	return sk, sk != nil
}

// Agent returns the named sub-agent. An agent's entry key is its name.
func (s *Snapshot) Agent(name string) (*Agent, bool) {
	a := s.agentEntries[name].item()
	return a, a != nil
}

// AgentVersionCount is the number of published sub-agent versions.
func (s *Snapshot) AgentVersionCount() int { return s.derived.agentVersions }

// VersionCount is the number of published skill versions.
func (s *Snapshot) VersionCount() int { return s.derived.skillVersions }

// ErrorCount is the number of error-severity problems.
func (s *Snapshot) ErrorCount() int { return s.derived.errors }

// ErrScanFailed wraps the reason a whole scan could not complete; the
// caller keeps its previous snapshot.
var ErrScanFailed = errors.New("scan failed")

// Changes names the top-level entries of each root (skills/<name>,
// agents/<name>.md or agents/<name>/) that may have changed since the
// previous snapshot. A nil *Changes means unknown: everything is rescanned
// (unchanged files still come from the cache).
type Changes struct {
	Skills map[string]bool
	Agents map[string]bool // keyed by agent name: "x" for x.md and x/
}

// Build scans src into a new snapshot with the given generation. Problems
// with individual items are data in the snapshot; an error means the scan as
// a whole failed (a root unreadable, ctx cancelled) and nothing was built.
func Build(ctx context.Context, src Source, generation uint64) (*Snapshot, error) {
	return build(ctx, buildInput{src: src, generation: generation, cache: newScanCache(), docs: newDocLRU(DefaultDocumentCacheBytes)})
}

type buildInput struct {
	src        Source
	generation uint64
	prev       *Snapshot // reused where unchanged; source of last good versions
	changes    *Changes
	cache      *scanCache
	docs       *docLRU // the shared document cache
}

func build(ctx context.Context, in buildInput) (*Snapshot, error) {
	start := time.Now()
	src := in.src
	snap := &Snapshot{Generation: in.generation, AgentsConfigured: src.AgentsDir != ""}
	partial := in.changes != nil && in.prev != nil
	// A partial build lays its blobs over the previous store instead of
	// copying it; once the overlay grows past an eighth of the store, in
	// blobs or in bytes, a flat store is built again, dropping blobs
	// nothing serves any more (a large file rewritten would otherwise
	// keep every version it had).
	flat := !partial || in.prev.Store.OverlayLen() > in.prev.Store.Len()/8 ||
		in.prev.Store.OverlayBytes() > in.prev.Store.Bytes()/8
	var blobs *content.Builder
	if flat {
		blobs = content.NewBuilder()
	} else {
		blobs = content.NewOverlay(in.prev.Store)
	}
	in.cache.begin()
	var rescanned []string // cache keys of the entries scanned
	base := func(t *treeRoot) scanBase {
		return scanBase{t: t, lim: src.Limits, blobs: blobs, prev: in.prev, generation: in.generation}
	}
	skills := rootScan[*skillEntry, *Skill]{kind: "skills", dir: src.SkillsDir, plan: skillsPlan,
		scan: scanSkillEntry, item: (*skillEntry).item, name: (*Skill).name}
	agents := rootScan[*agentEntry, *Agent]{kind: "agents", dir: src.AgentsDir, plan: agentsPlan,
		scan: scanAgentEntry, item: (*agentEntry).item, name: (*Agent).name}
	if partial {
		// A partial build starts from the previous entries; a root with no
		// changed names has none changed.
		skills.prev, skills.prevItems, skills.changed = in.prev.skillEntries, in.prev.Skills, orEmpty(in.changes.Skills)
		agents.prev, agents.prevItems, agents.changed = in.prev.agentEntries, in.prev.Agents, orEmpty(in.changes.Agents)
	}

	if src.SkillsDir != "" {
		r, err := skills.run(ctx, in.cache, base)
		if err != nil {
			return nil, err
		}
		snap.skillEntries, snap.Skills, snap.rescannedSkills = r.entries, r.items, r.keys
		rescanned = append(rescanned, r.cacheKeys...)
	}
	if src.AgentsDir != "" {
		r, err := agents.run(ctx, in.cache, base)
		if err != nil {
			return nil, err
		}
		snap.agentEntries, snap.Agents, snap.rescannedAgents = r.entries, r.items, r.keys
		rescanned = append(rescanned, r.cacheKeys...)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScanFailed, err)
	}
	if partial && flat {
		// Entries reused from prev bring their blobs into the new flat store.
		for _, e := range snap.skillEntries {
			if e.skill != nil {
				for _, v := range e.skill.Versions {
					carrySkillVersion(blobs, in.prev.Store, v)
				}
			}
		}
		for _, e := range snap.agentEntries {
			if e.agent != nil {
				for _, v := range e.agent.Versions {
					if b, ok := in.prev.Store.Get(v.Digest); ok {
						blobs.PutDigested(v.Digest, b)
					}
				}
			}
		}
	}

	snap.Store = blobs.Store()
	in.cache.commit(!partial, rescanned)
	snap.Rescanned = len(rescanned)
	snap.partial = partial
	snap.FileCacheHits, snap.FileCacheMisses = int(in.cache.hits.Load()), int(in.cache.misses.Load())
	snap.derive(in.prev)
	snap.server = src.Server
	snap.pageSize = src.PageSize
	if snap.pageSize <= 0 {
		snap.pageSize = DefaultPageSize
	}
	snap.docs = newDocCache(in.docs)
	snap.ScanDuration = time.Since(start)
	return snap, nil
}

// DirExists reports whether dir exists and is a directory.
func DirExists(dir string) (bool, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !info.IsDir():
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	return true, nil
}

// rootScan is one root's share of a build: what differs between the
// skills and the agents root.
type rootScan[E comparable, T comparable] struct {
	kind      string // "skills" or "agents": cache key prefix and error text
	dir       string
	plan      rootPlan
	changed   map[string]bool // nil: scan every entry; else a partial build
	prev      map[string]E    // entries a partial build starts from
	prevItems []T             // their items, sorted by name
	scan      func(scanBase, entryJob) E
	item      func(E) T // nil when the entry publishes nothing
	name      func(T) string
}

type rootResult[E comparable, T comparable] struct {
	entries   map[string]E
	items     []T      // sorted by name
	keys      []string // entry keys scanned
	cacheKeys []string // the same, as scan cache keys
}

// run scans the root, on top of prev for a partial build, and lists its
// items: sorted from scratch after a full scan, patched after a partial
// one.
func (r rootScan[E, T]) run(ctx context.Context, cache *scanCache, base func(*treeRoot) scanBase) (rootResult[E, T], error) {
	t, err := openTreeRoot(r.dir)
	if err != nil {
		return rootResult[E, T]{}, fmt.Errorf("%w: open %s root: %w", ErrScanFailed, r.kind, err)
	}
	defer t.Close()
	entries, keys, err := scanRoot(ctx, t, r.plan, r.changed, r.prev, func(job entryJob) E {
		b := base(t)
		b.ec = cache.open(r.kind + "/" + job.key)
		defer b.ec.close()
		return r.scan(b, job)
	})
	if err != nil {
		return rootResult[E, T]{}, fmt.Errorf("%w: %w", ErrScanFailed, err)
	}
	res := rootResult[E, T]{entries: entries, keys: keys}
	item := func(k string) T { return r.item(entries[k]) }
	if r.changed != nil {
		res.items = patchSorted(r.prevItems, keys, item, r.name)
	} else {
		res.items = sortedItems(entries, r.item, r.name)
	}
	for _, k := range keys {
		res.cacheKeys = append(res.cacheKeys, r.kind+"/"+k)
	}
	return res, nil
}

// orEmpty returns m, or an empty set for nil: a partial build tells
// "nothing changed" from "scan everything" by a non-nil set.
func orEmpty(m map[string]bool) map[string]bool {
	if m == nil {
		return map[string]bool{}
	}
	return m
}

// sortedItems returns the items of entries (nil ones left out), sorted
// by name.
func sortedItems[E comparable, T comparable](entries map[string]E, item func(E) T, name func(T) string) []T {
	var zero T
	out := make([]T, 0, len(entries))
	for _, e := range entries {
		if it := item(e); it != zero {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	return out
}

// scanRoot scans the entries of one root: all of them (changed == nil),
// or only the changed ones on top of prev's. It returns the new entries and
// the keys it scanned.
func scanRoot[E comparable](ctx context.Context, t *treeRoot, p rootPlan, changed map[string]bool, prev map[string]E, scan func(entryJob) E) (map[string]E, []string, error) {
	jobs, err := p.plan(t, changed)
	if err != nil {
		return nil, nil, err
	}
	results := make([]E, len(jobs))
	if err := runJobs(ctx, jobs, func(i int, job entryJob) { results[i] = scan(job) }); err != nil {
		return nil, nil, err
	}
	entries := make(map[string]E, len(prev)+len(jobs))
	maps.Copy(entries, prev)
	keys := make([]string, len(jobs))
	var none E
	for i, job := range jobs {
		keys[i] = job.key
		if results[i] == none {
			delete(entries, job.key)
		} else {
			entries[job.key] = results[i]
		}
	}
	return entries, keys, nil
}

// patchSorted returns prev (sorted by name) with the items of the keys
// rescanned replaced by their new version, if any: the order of a large
// catalogue is kept, not sorted again, when a reload changed a few items.
//
// It copies prev once and finds each key by binary search, so beyond that
// copy its cost follows the number of keys.
func patchSorted[T any](prev []T, keys []string, now func(key string) T, name func(T) string) []T {
	out := slices.Grow(slices.Clone(prev), len(keys))
	byName := func(x T, n string) int { return strings.Compare(name(x), n) }
	var zero T
	for _, k := range keys {
		i, found := slices.BinarySearchFunc(out, k, byName)
		it := now(k)
		switch gone := any(it) == any(zero); {
		case gone && found:
			out = slices.Delete(out, i, i+1)
		case gone:
		case found:
			out[i] = it
		default:
			out = slices.Insert(out, i, it)
		}
	}
	return out
}

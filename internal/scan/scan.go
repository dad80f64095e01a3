// Package scan turns a skills root and an agents root into entries: one
// per top-level name of a root, each with the item it publishes (if any)
// and its problems. Run and its Input are in this file, each file below
// uses only files below it: the layout rules (skills.go, agents.go), the
// roots (roots.go: the entry-key rule EntryKey, the plan of what to
// rescan, the worker pool), what the scanners of an entry share
// (entry.go), the per-entry cache that lets a rescan skip unchanged
// files, parses and archives (cache.go), the walker (walk*.go: one open
// handle per folder, symlinks resolved through os.Root; filestat.go what
// a stat says), the last-good rule that keeps publishing a version whose
// files fail to scan (lastgood.go), and at the ground what a scan gives:
// its Result and Entry (result.go) and its Progress (progress.go).
// A rescan takes the previous Result (entries and store), never a
// published snapshot, so scanning does not depend on publishing.
//
// It must not import internal/catalog, the document or HTTP packages, or
// internal/reload; they build on it. It imports internal/item (the
// domain model and its Kind), internal/skill (front matter and problems)
// and internal/content (digests, archives, the store).
package scan

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// Changes names the top-level entries of each root (skills/<name>,
// agents/<name>.md or agents/<name>/) that may have changed since the
// previous snapshot. A nil *Changes means unknown: everything is rescanned
// (unchanged files still come from the cache).
type Changes struct {
	Skills map[string]bool
	Agents map[string]bool // keyed by agent name: "x" for x.md and x/
}

// Input says what one scan reads and what it may reuse.
type Input struct {
	// SkillsDir and AgentsDir are the roots; "" means not configured.
	SkillsDir, AgentsDir string
	Limits               Limits
	// Generation is the generation the scan's entries are stamped with.
	Generation uint64
	// Prev is the previous scan: where a partial scan starts from, and
	// the source of last good versions. Nil on the first scan.
	Prev *Result
	// Changes names the entries to rescan on top of Prev; nil rescans
	// every entry (unchanged files still come from Cache).
	Changes *Changes
	Cache   *Cache
	// Blobs, if set, is the state directory's blob folder: the new store
	// writes its blobs there instead of holding them in memory.
	Blobs *content.Dir
	// Progress, if set, counts the entries as they are scanned.
	Progress *Progress
}

// Run scans the roots of in. Problems with individual items are data in
// the entries; an error (wrapping ErrScanFailed) means the scan as a whole
// failed (a root unreadable, ctx cancelled), and the cache is unchanged.
func Run(ctx context.Context, in Input) (*Result, error) {
	res := &Result{}
	partial := in.Changes != nil && in.Prev != nil
	// A partial scan lays its blobs over the previous store instead of
	// copying it; once the overlay grows past an eighth of the store, in
	// blobs or in bytes, a flat store is built again, dropping blobs
	// nothing serves any more (a large file rewritten would otherwise
	// keep every version it had).
	flat := !partial || in.Prev.Store.OverlayLen() > in.Prev.Store.Len()/8 ||
		in.Prev.Store.OverlayBytes() > in.Prev.Store.Bytes()/8
	var blobs *content.Builder
	if flat {
		blobs = content.NewBuilder(in.Blobs)
	} else {
		blobs = content.NewOverlay(in.Prev.Store)
	}
	in.Cache.begin()
	var rescanned []string // cache keys of the entries scanned
	base := func(t *treeRoot) scanBase {
		return scanBase{t: t, lim: in.Limits, blobs: blobs, prev: in.Prev, generation: in.Generation}
	}
	progress := in.Progress
	if progress == nil {
		progress = &Progress{}
	}
	skills := rootScan[*SkillEntry, *item.Skill]{kind: item.KindSkill, dir: in.SkillsDir, progress: progress,
		scan: scanSkillEntry, item: (*SkillEntry).Published, name: func(s *item.Skill) string { return s.Name }}
	agents := rootScan[*AgentEntry, *item.Agent]{kind: item.KindSubagent, dir: in.AgentsDir, progress: progress,
		scan: scanAgentEntry, item: (*AgentEntry).Published, name: func(a *item.Agent) string { return a.Name }}
	if in.Prev != nil {
		skills.last, agents.last = in.Prev.SkillEntries, in.Prev.AgentEntries
	}
	if partial {
		// A partial scan starts from the previous entries; a root with no
		// changed names has none changed.
		skills.prev, skills.prevItems, skills.changed = in.Prev.SkillEntries, in.Prev.Skills, orEmpty(in.Changes.Skills)
		agents.prev, agents.prevItems, agents.changed = in.Prev.AgentEntries, in.Prev.Agents, orEmpty(in.Changes.Agents)
	}

	if in.SkillsDir != "" {
		r, err := skills.run(ctx, in.Cache, base)
		if err != nil {
			return nil, err
		}
		res.SkillEntries, res.Skills, res.RescannedSkills = r.entries, r.items, r.keys
		rescanned = append(rescanned, r.cacheKeys...)
	}
	if in.AgentsDir != "" {
		r, err := agents.run(ctx, in.Cache, base)
		if err != nil {
			return nil, err
		}
		res.AgentEntries, res.Agents, res.RescannedAgents = r.entries, r.items, r.keys
		rescanned = append(rescanned, r.cacheKeys...)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScanFailed, err)
	}
	if partial && flat {
		// Entries reused from prev bring their blobs into the new flat store.
		for _, e := range res.SkillEntries {
			if e.Item != nil {
				for _, v := range e.Item.Versions {
					carry(blobs, in.Prev.Store, v)
				}
			}
		}
		for _, e := range res.AgentEntries {
			if e.Item != nil {
				for _, v := range e.Item.Versions {
					carry(blobs, in.Prev.Store, v)
				}
			}
		}
	}

	// The versions this scan built keep their strings in one block.
	refs := newStrings(nil, res.SkillEntries, res.RescannedSkills, in.Generation)
	item.PackStrings(newStrings(refs, res.AgentEntries, res.RescannedAgents, in.Generation))

	res.Store = blobs.Store()
	in.Cache.commit(!partial, rescanned)
	res.Rescanned = len(rescanned)
	res.Partial = partial
	res.FileCacheHits, res.FileCacheMisses = int(in.Cache.hits.Load()), int(in.Cache.misses.Load())
	res.ArchivesBuilt = int(in.Cache.zipped.Load())
	res.CacheIgnored = in.Cache.takeIgnored()
	return res, nil
}

// newStrings appends to refs the strings of the versions of entries keys
// that this scan (generation gen) built, not those it carried.
func newStrings[V item.Version](refs []*string, entries map[string]*Entry[V], keys []string, gen uint64) []*string {
	for _, k := range keys {
		it := entries[k].Published()
		if it == nil {
			continue
		}
		for _, v := range it.Versions {
			if v.Info().Generation == gen {
				refs = v.AppendStrings(refs)
			}
		}
	}
	return refs
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

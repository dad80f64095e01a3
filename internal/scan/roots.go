package scan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillserver/skillserver/internal/item"
)

// rootScan is one root's share of a build: what differs between the
// skills and the agents root.
type rootScan[E comparable, T comparable] struct {
	kind      item.Kind
	dir       string
	progress  *Progress
	changed   map[string]bool // nil: scan every entry; else a partial build
	prev      map[string]E    // entries a partial build starts from
	prevItems []T             // their items, sorted by name
	scan      func(scanBase, map[string]E, entryJob) E
	last      map[string]E // the previous scan's entries: where last good versions come from
	item      func(E) T    // nil when the entry publishes nothing
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
func (r rootScan[E, T]) run(ctx context.Context, cache *Cache, base func(*treeRoot) scanBase) (rootResult[E, T], error) {
	t, err := openTreeRoot(r.dir)
	if err != nil {
		return rootResult[E, T]{}, fmt.Errorf("%w: open %s root: %w", ErrScanFailed, rootName(r.kind), err)
	}
	defer t.Close()
	entries, keys, err := scanRoot(ctx, t, plan(r.kind), r.changed, r.prev, r.progress, func(job entryJob) E {
		b := base(t)
		b.ec = cache.open(rootName(r.kind) + "/" + job.key)
		defer b.ec.close()
		return r.scan(b, r.last, job)
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
		res.cacheKeys = append(res.cacheKeys, rootName(r.kind)+"/"+k)
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
func scanRoot[E comparable](ctx context.Context, t *treeRoot, p rootPlan, changed map[string]bool, prev map[string]E, progress *Progress, scan func(entryJob) E) (map[string]E, []string, error) {
	jobs, err := p.plan(t, changed)
	if err != nil {
		return nil, nil, err
	}
	progress.Add(0, int64(len(jobs)))
	results := make([]E, len(jobs))
	if err := runJobs(ctx, jobs, func(i int, job entryJob) {
		results[i] = scan(job)
		progress.Add(1, 0)
	}); err != nil {
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

// entryJob is one top-level entry of a root to (re)scan: its key (a skill
// folder's name, an agent's name) and the names in the root that claim it
// (for agents, x.md and x/).
type entryJob struct {
	key    string
	claims []string
}

// lookupClaims stats the names that claim job in the root, relative to
// it, leaving out those gone since the root was listed. The plan lists
// the root without stats, so the stats run on the scan's workers.
func (t *treeRoot) lookupClaims(job entryJob) []entry {
	entries := make([]entry, 0, len(job.claims))
	for _, name := range job.claims {
		e, err := t.lookup(t.top, name)
		if !errors.Is(err, fs.ErrNotExist) {
			entries = append(entries, e) // an error other than "gone" is the scan's to report
		}
	}
	return entries
}

// rootName is the name of the root an item of kind k is read from, as
// the scan cache's keys use it.
func rootName(k item.Kind) string {
	if k == item.KindSubagent {
		return "agents"
	}
	return "skills"
}

// EntryKey is the entry-key rule: which entry of the root of kind k the
// top-level name belongs to. A skill's key is its folder name; a
// sub-agent's is its name, claimed by both x.md and x/. ok is false for
// names that are never entries (hidden files and folders). The file watch
// attributes its events by the same rule.
func EntryKey(k item.Kind, name string) (key string, ok bool) {
	if isHidden(name) {
		return "", false
	}
	if k == item.KindSubagent {
		return strings.TrimSuffix(name, agentExt), true
	}
	return name, true
}

// candidates lists the top-level names that could claim key. Every .md
// file directly in the agents root is an agent, README.md too (an error:
// README is not a valid name), as docs/source-tree.md says.
func candidates(k item.Kind, key string) []string {
	if k == item.KindSubagent {
		return []string{key + agentExt, key}
	}
	return []string{key}
}

func plan(k item.Kind) rootPlan {
	return rootPlan{keyOf: func(name string) (string, bool) { return EntryKey(k, name) },
		candidates: func(key string) []string { return candidates(k, key) }}
}

// rootPlan says how a root's entries map to keys.
type rootPlan struct {
	// keyOf maps a name in the root to its entry key; ok is false for
	// names that are never entries (hidden files, notes).
	keyOf func(name string) (key string, ok bool)
	// candidates lists the names that could claim key.
	candidates func(key string) []string
}

// plan lists the entries to scan. With changed == nil it lists the whole
// root. Otherwise it looks up only the changed keys, without listing a
// root that may hold tens of thousands of entries; a key none of whose
// candidates exists any more has no claims, and is removed.
func (p rootPlan) plan(t *treeRoot, changed map[string]bool) ([]entryJob, error) {
	if changed == nil {
		names, err := t.names(t.top)
		if err != nil {
			return nil, fmt.Errorf("read root %s: %w", t.display, err)
		}
		var jobs []entryJob
		index := map[string]int{}
		for _, name := range names {
			key, ok := p.keyOf(name)
			if !ok {
				continue
			}
			if i, seen := index[key]; seen {
				jobs[i].claims = append(jobs[i].claims, name)
				continue
			}
			index[key] = len(jobs)
			jobs = append(jobs, entryJob{key: key, claims: []string{name}})
		}
		return jobs, nil
	}
	if _, err := t.root.Stat("."); err != nil {
		return nil, fmt.Errorf("read root %s: %w", t.display, err)
	}
	jobs := make([]entryJob, 0, len(changed))
	for key := range changed {
		job := entryJob{key: key}
		for _, name := range p.candidates(key) {
			if k, ok := p.keyOf(name); !ok || k != key {
				continue
			}
			if _, err := t.lookup(t.top, name); !errors.Is(err, fs.ErrNotExist) {
				job.claims = append(job.claims, name) // an error other than "gone" is the scan's to report
			}
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// runJobs calls fn for every job, on as many goroutines as there are
// cores. Scanning is mostly hashing, parsing and compressing, so it scales
// with them. Workers take the next job from a shared counter, not a
// channel: ten thousand small jobs would otherwise be ten thousand
// hand-offs between goroutines.
func runJobs(ctx context.Context, jobs []entryJob, fn func(i int, job entryJob)) error {
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) {
					return
				}
				fn(i, jobs[i])
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

const agentExt = ".md"

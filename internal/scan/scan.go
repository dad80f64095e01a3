// Package scan turns a skills root and an agents root into entries: one
// per top-level name of a root, each with the item it publishes (if any)
// and its problems. It owns the walker (walk*.go: one open handle per
// folder, symlinks resolved through os.Root), the layout rules
// (scan_skills.go, scan_agents.go), the entry-key rule (Kind.Key), the
// per-entry cache that lets a rescan skip unchanged files, parses and
// archives, and the last-good rule that keeps publishing a version whose
// files fail to scan. A rescan takes the previous Result (entries and
// store), never a published snapshot, so scanning does not depend on
// publishing.
//
// It must not import internal/catalog, the document or HTTP packages, or
// internal/reload; they build on it. It imports internal/item (the
// domain model), internal/skill (front matter and problems) and
// internal/content (digests, archives, the store).
package scan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillserver/skillserver/internal/item"
)

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

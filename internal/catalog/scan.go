package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
)

// entryJob is one top-level entry of a root to (re)scan: its key (a skill
// folder's name, an agent's name) and the entries of the root that claim
// it (for agents, x.md and x/).
type entryJob struct {
	key    string
	claims []entry
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
		entries, err := t.list(t.top)
		if err != nil {
			return nil, fmt.Errorf("read root %s: %w", t.display, err)
		}
		var jobs []entryJob
		index := map[string]int{}
		for _, e := range entries {
			key, ok := p.keyOf(e.name)
			if !ok {
				continue
			}
			if i, seen := index[key]; seen {
				jobs[i].claims = append(jobs[i].claims, e)
				continue
			}
			index[key] = len(jobs)
			jobs = append(jobs, entryJob{key: key, claims: []entry{e}})
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
			e, err := t.lookup(t.top, name)
			if err == nil || !errors.Is(err, fs.ErrNotExist) {
				// A name that cannot be stat'ed is scanned, which reports it.
				job.claims = append(job.claims, e)
			}
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// runJobs calls fn for every job, on as many goroutines as there are
// cores. Scanning is mostly hashing, parsing and compressing, so it scales
// with them.
func runJobs(ctx context.Context, jobs []entryJob, fn func(i int, job entryJob)) error {
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i, jobs[i])
			}
		}()
	}
	var err error
	for i := range jobs {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return err
}

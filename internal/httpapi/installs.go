package httpapi

import (
	"sync"
	"sync/atomic"
)

// installCounts counts, per skill name, the downloads that look like an
// install: a GET of a version's whole SKILL.md or archive.zip (at its
// content-addressed URL, under the read API, the RFC feed's latest
// SKILL.md or the legacy layout), not a HEAD, a Range request or a
// revalidation that a 304 answers. Resources and digest-only blobs are
// not counted: an install fetches one of the two first. The
// counts live in memory: they restart at 0 with the process and each
// replica keeps its own. Only names the snapshot publishes are counted, so
// the map is bounded by the names ever published.
type installCounts struct {
	m sync.Map // skill name -> *atomic.Uint64
}

// add counts one download of name's artifact.
func (c *installCounts) add(name string) {
	v, ok := c.m.Load(name)
	if !ok {
		v, _ = c.m.LoadOrStore(name, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
}

// get is name's count.
func (c *installCounts) get(name string) uint64 {
	if v, ok := c.m.Load(name); ok {
		return v.(*atomic.Uint64).Load()
	}
	return 0
}

package feed

import (
	"container/list"
	"sync"
)

// SharedCache holds documents spliced for bases nobody configured (the Host
// of each request, when base_url and allowed_hosts are empty). A
// catalogue's snapshots share one, bounded in bytes: the least recently
// used go first, so a client sending a new Host with every request costs
// a splice each time and evicts nothing but what it caused.
type SharedCache struct {
	max int64 // <= 0: nothing is kept

	mu      sync.Mutex
	bytes   int64
	entries list.List // of *lruEntry, most recently used first
	byKey   map[lruKey]*list.Element
}

type lruKey struct {
	generation uint64
	view       string // Feed.viewID
	base       string
	// key is a document or an HTML page: both are cached per base, and
	// the two never share an entry.
	key cacheKey
}

type lruEntry struct {
	key  lruKey
	doc  *Document
	cost int64
}

// NewSharedCache returns a cache of at most max bytes (0: it keeps none).
func NewSharedCache(max int64) *SharedCache {
	return &SharedCache{max: max, byKey: map[lruKey]*list.Element{}}
}

// get returns the document cached for k, marking it used.
func (c *SharedCache) get(k lruKey) (*Document, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.entries.MoveToFront(el)
	d := el.Value.(*lruEntry).doc
	d.served.Store(true)
	return d, true
}

// add caches d, which no other goroutine holds yet, under k.
func (c *SharedCache) add(k lruKey, d *Document) {
	cost := int64(len(d.Body)+len(k.base)) + docOverhead
	if cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return // another request spliced the same bytes first
	}
	e := &lruEntry{key: k, doc: d, cost: cost}
	d.account = func(n int64) { c.grow(e, n) }
	c.byKey[k] = c.entries.PushFront(e)
	c.bytes += cost
	c.evict()
}

// grow counts n more bytes for e (its compressed form), if still cached.
func (c *SharedCache) grow(e *lruEntry, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.key]; ok && el.Value == e {
		e.cost += n
		c.bytes += n
		c.evict()
	}
}

func (c *SharedCache) evict() {
	for c.bytes > c.max {
		c.remove(c.entries.Back())
	}
}

func (c *SharedCache) remove(el *list.Element) {
	e := c.entries.Remove(el).(*lruEntry)
	delete(c.byKey, e.key)
	c.bytes -= e.cost
}

// drop removes the documents of a snapshot nothing serves any more.
func (c *SharedCache) drop(generation uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.entries.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*lruEntry).key.generation == generation {
			c.remove(el)
		}
		el = next
	}
}

// size is the bytes the cache holds.
func (c *SharedCache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

package feed

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"crypto/rand"
	"sync"
	"sync/atomic"

	"github.com/skillserver/skillserver/internal/content"
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

// docOverhead is what a cached document costs beyond its bytes: the
// entry, its key and base (an estimate).
const docOverhead = 256

// keep returns a document kept for the snapshot's lifetime, counted in
// c.bytes.
func (c *docCache) keep(body []byte) *Document {
	d := &Document{Body: body, Digest: content.Sum(body), gzipLevel: gzip.BestCompression, account: func(n int64) { c.bytes.Add(n) }}
	d.served.Store(true)
	c.bytes.Add(int64(len(body)) + docOverhead)
	return d
}

// once is a value computed at most once, for entries several requests may
// ask for at the same time.
type once[T any] struct {
	sync.Once
	v  T
	ok bool
}

// docCache holds what a snapshot has rendered. Entries for keys the
// snapshot has no document at are dropped, so misses grow nothing.
type docCache struct {
	sentinel string // the base templates are rendered with

	// htmlSentinel stands for the base in page templates: letters and
	// digits only, which HTML, attribute and URL escaping leave as they
	// are, and random per snapshot, so no skill's text can hold it.
	htmlSentinel string

	mu        sync.Mutex
	plain     map[DocKey]*once[*Document] // base-independent documents
	templates map[DocKey]*once[*template]
	pages     map[PageKey]*once[*template]             // HTML pages (internal/page)
	known     map[string]map[cacheKey]*once[*Document] // by Base.URL
	shared    *SharedCache

	bytes   atomic.Int64 // what plain, templates and known hold
	renders atomic.Int64 // documents encoded, for tests
}

func newDocCache(shared *SharedCache) *docCache {
	return &docCache{sentinel: "\x00" + rand.Text(), htmlSentinel: "SKILLSERVERBASE" + rand.Text(), plain: map[DocKey]*once[*Document]{},
		templates: map[DocKey]*once[*template]{}, pages: map[PageKey]*once[*template]{},
		known: map[string]map[cacheKey]*once[*Document]{}, shared: shared}
}

// cached returns m's entry for key, making it, and runs build in it once.
// An entry that found nothing is removed.
func cached[K comparable, T any](c *docCache, m map[K]*once[T], key K, build func() (T, bool)) (T, bool) {
	c.mu.Lock()
	e, ok := m[key]
	if !ok {
		e = &once[T]{}
		m[key] = e
	}
	c.mu.Unlock()
	e.Do(func() { e.v, e.ok = build() })
	if !e.ok {
		c.mu.Lock()
		if m[key] == e {
			delete(m, key)
		}
		c.mu.Unlock()
	}
	return e.v, e.ok
}

// cacheKey names what a view caches per base: a document or a page.
type cacheKey struct {
	doc  DocKey
	page PageKey
}

// split makes body a template, cut at each sentinel, counted in c.bytes.
func (c *docCache) split(body []byte, sentinel string) *template {
	t := &template{segs: bytes.Split(body, []byte(sentinel)), size: len(body)}
	t.size -= (len(t.segs) - 1) * len(sentinel)
	c.bytes.Add(int64(len(body)) + docOverhead)
	return t
}

// PageKey names one HTML page of a view.
type PageKey struct {
	Kind    string // the page's kind, as internal/page names them
	Name    string
	Version string
	// Other is a file's path (a file view) or the other version (a
	// version comparison).
	Other string
	N     int // a page number
}

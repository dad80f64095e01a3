package feed

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"html"
	"sync"
	"sync/atomic"

	"github.com/skillserver/skillserver/internal/content"
)

// DocKey identifies one document of a snapshot.
type DocKey struct {
	Kind    DocKind
	Name    string
	Version string
	Page    string
}

// Document is an encoded JSON document and the digest of its bytes.
type Document struct {
	Body   []byte
	Digest content.Digest

	// gzipLevel is how hard Gzip compresses: the best level for documents
	// kept for the snapshot's lifetime, a fast one for those in the shared
	// cache, which a stream of new bases can make again and again.
	gzipLevel int
	// served is set once the document was found in a cache: a document
	// spliced for a request is served uncompressed, so a request for a
	// base nobody asked for before costs no compression.
	served atomic.Bool
	// account, if set, is told the size of the compressed form once made,
	// for the cache that holds d.
	account    func(n int64)
	gzipOnce   sync.Once
	gzipBody   []byte
	gzipDigest content.Digest
}

// minGzip is the smallest document worth compressing.
const minGzip = 1024

// sharedGzipLevel compresses documents of the shared cache: on a 540 KB
// index, level 3 takes a quarter of the time of the best level and makes
// 3% more bytes (docs/architecture.md, Documents).
const sharedGzipLevel = 3

// Gzip returns the document gzip-compressed and that representation's
// digest, computed once; ok is false for documents too small to gain, and
// for a document the shared cache did not hold yet (the next request for
// it gets gzip). The bytes are deterministic (no name, no time in the
// header).
func (d *Document) Gzip() (body []byte, digest content.Digest, ok bool) {
	if len(d.Body) < minGzip || !d.served.Load() {
		return nil, "", false
	}
	d.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, d.gzipLevel)
		_, _ = zw.Write(d.Body)
		_ = zw.Close()
		d.gzipBody = buf.Bytes()
		d.gzipDigest = content.Sum(d.gzipBody)
		if d.account != nil {
			d.account(int64(len(d.gzipBody)))
		}
	})
	return d.gzipBody, d.gzipDigest, true
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

// Base-dependent documents (DocKind.absolute) are rendered once per
// snapshot as a template: with a sentinel for the base URL, split at it.
// A client's document is the template spliced with its base, a copy and
// a hash, however many bases clients send. The sentinel is a NUL and a
// random token per snapshot: encoding/json writes NUL as \u0000, which no
// base can contain, and a published string holding the same escape would
// have to guess the token, which is never published.
//
// The bytes of a base nobody configured are kept in a cache the
// catalogue's snapshots share, bounded in bytes; the configured base URL
// and the allowed hosts' bases (Known) keep theirs for the snapshot's
// lifetime, as base-independent documents do.

// A Base is the public base URL a document is rendered for.
type Base struct {
	URL string // scheme://host[/prefix], no trailing slash
	// Known marks a base the operator configured (base_url, or a host of
	// allowed_hosts): its documents are kept, and compressed at the best
	// level, for the snapshot's lifetime. Other bases share the
	// catalogue's bounded document cache.
	Known bool
}

type template struct {
	segs [][]byte // the document's bytes between the places of the base
	size int      // sum of len(segs)
}

func (t *template) splice(base string) []byte {
	b := make([]byte, 0, t.size+(len(t.segs)-1)*len(base))
	for i, seg := range t.segs {
		if i > 0 {
			b = append(b, base...)
		}
		b = append(b, seg...)
	}
	return b
}

// jsonText is s as encoded inside a JSON string of a published document.
func jsonText(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b := encodeDocument(s).Body // "...", then a newline
			return string(b[1 : len(b)-2])
		}
	}
	return s
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
	pages     map[PageKey]*once[*template]             // HTML pages (pages.go)
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

// Document returns the document key for a client whose public base URL is
// base.URL. ok is false when the snapshot has no such document.
func (f *Feed) Document(base Base, key DocKey) (*Document, bool) {
	c := f.docs
	if !key.Kind.absolute() {
		return cached(c, c.plain, key, func() (*Document, bool) {
			v, ok := f.render("", key)
			if !ok {
				return nil, false
			}
			return c.keep(f.encode(v)), true
		})
	}
	return f.forBase(base, cacheKey{doc: key}, jsonText(base.URL), func() (*template, bool) { return f.template(key) })
}

// cacheKey names what a view caches per base: a document or a page.
type cacheKey struct {
	doc  DocKey
	page PageKey
}

// forBase returns the bytes of the template tmpl makes, spliced with
// baseText (base.URL as the template's format escapes it): kept for the
// snapshot's lifetime when base is known, else in the shared cache.
func (f *Feed) forBase(base Base, k cacheKey, baseText string, tmpl func() (*template, bool)) (*Document, bool) {
	c := f.docs
	if base.Known {
		c.mu.Lock()
		m := c.known[base.URL]
		if m == nil {
			m = map[cacheKey]*once[*Document]{}
			c.known[base.URL] = m
		}
		c.mu.Unlock()
		return cached(c, m, k, func() (*Document, bool) {
			t, ok := tmpl()
			if !ok {
				return nil, false
			}
			return c.keep(t.splice(baseText)), true
		})
	}
	lk := lruKey{generation: f.Generation, view: f.viewID, base: base.URL, key: k}
	if d, ok := c.shared.get(lk); ok {
		return d, true
	}
	t, ok := tmpl()
	if !ok {
		return nil, false
	}
	body := t.splice(baseText)
	d := &Document{Body: body, Digest: content.Sum(body), gzipLevel: sharedGzipLevel}
	c.shared.add(lk, d)
	return d, true
}

// template returns the template of an absolute document, rendered once.
func (f *Feed) template(key DocKey) (*template, bool) {
	c := f.docs
	return cached(c, c.templates, key, func() (*template, bool) {
		v, ok := f.render(c.sentinel, key)
		if !ok {
			return nil, false
		}
		return c.split(f.encode(v), jsonText(c.sentinel)), true
	})
}

// split makes body a template, cut at each sentinel, counted in c.bytes.
func (c *docCache) split(body []byte, sentinel string) *template {
	t := &template{segs: bytes.Split(body, []byte(sentinel)), size: len(body)}
	t.size -= (len(t.segs) - 1) * len(sentinel)
	c.bytes.Add(int64(len(body)) + docOverhead)
	return t
}

// encode is encodeDocument, counted.
func (f *Feed) encode(v any) []byte {
	f.docs.renders.Add(1)
	return encodeDocument(v).Body
}

// Encode renders v in the published JSON style: two-space indent,
// trailing newline, no HTML escaping. Every JSON body the server writes,
// documents, search results and errors alike, goes through it.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeDocument is Encode for a document of the feed.
func encodeDocument(v any) *Document {
	b, err := Encode(v)
	if err != nil {
		// Every document is built from strings, numbers and slices the
		// snapshot owns; failing to encode one is a programming error.
		panic(fmt.Sprintf("encode document: %v", err))
	}
	return &Document{Body: b, Digest: content.Sum(b)}
}

// HTML pages of the catalogue (internal/page renders them) are cached
// like documents: once per snapshot and view, as a template split where
// the base URL goes, spliced per base. Their keys are apart from the
// documents' (cacheKey), in the view's caches and in the shared one.

// PageKey names one HTML page of a view.
type PageKey struct {
	Kind    string // the page's kind, as internal/page names them
	Name    string
	Version string
	N       int // a page number
}

// Page returns the page key of this view for base. render makes its bytes
// given the base URL to write (a sentinel the bytes are split at, which it
// must write as it is); it runs once per snapshot and view, and ok is
// false when it finds nothing to show. The base is HTML-escaped where it
// is spliced in.
func (f *Feed) Page(base Base, key PageKey, render func(base string) ([]byte, bool)) (*Document, bool) {
	c := f.docs
	return f.forBase(base, cacheKey{page: key}, html.EscapeString(base.URL), func() (*template, bool) {
		return cached(c, c.pages, key, func() (*template, bool) {
			b, ok := render(c.htmlSentinel)
			if !ok {
				return nil, false
			}
			return c.split(b, c.htmlSentinel), true
		})
	})
}

// NewDocument wraps bytes made for one request (a page of search
// results) as a Document, compressed fast when a client asks for gzip.
func NewDocument(body []byte) *Document {
	d := &Document{Body: body, Digest: content.Sum(body), gzipLevel: sharedGzipLevel}
	d.served.Store(true)
	return d
}

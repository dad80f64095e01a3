package feed

import (
	"html"

	"github.com/skillserver/skillserver/internal/content"
)

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

// encode is encodeDocument, counted.
func (f *Feed) encode(v any) []byte {
	f.docs.renders.Add(1)
	return encodeDocument(v).Body
}

// HTML pages of the catalogue (internal/page renders them) are cached
// like documents: once per snapshot and view, as a template split where
// the base URL goes, spliced per base. Their keys are apart from the
// documents' (cacheKey), in the view's caches and in the shared one.

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

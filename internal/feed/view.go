package feed

import (
	"strconv"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// A view is the feed as one class of reader sees it: only the items its
// scope allows, every root-relative href under its path prefix. Each view
// is a Feed of its own, with its own document cache, made once per
// snapshot for each distinct scope and prefix: the views of a snapshot
// are bounded by the read tokens the operator configured, never by
// requests.

// View returns the view of s for readers who see the items allow lets
// through (scope names that set: equal scopes must allow the same names;
// "" is every item, and allow is then not called) and whose every
// root-relative href starts with prefix ("" for none; absolute URLs take
// it from the base URL).
func (f *Feed) View(scope, prefix string, allow func(name string) bool) *Feed {
	if scope == "" && prefix == "" {
		return f
	}
	if scope == "" {
		allow = nil
	}
	return f.view(viewKey{scope: scope, prefix: prefix}, allow)
}

// Static returns the feed as a static export publishes it (every item,
// no prefix): the same documents, except for the links to the routes
// only a running server answers (search, the read API, the update check,
// the health probe). Without api they are left out; with it they are
// apiBase + path: "" for a server behind the same origin (root-relative
// links, as the server itself publishes), else its absolute base URL.
func (f *Feed) Static(api bool, apiBase string) *Feed {
	return f.view(viewKey{static: true, api: api, apiBase: apiBase}, nil)
}

// StaticUnder returns the static view f (Static) with every
// root-relative href under prefix: the pages of an export served below a
// path (https://owner.github.io/repo), whose links are root-relative.
// Any other view, or prefix "", is f itself.
func (f *Feed) StaticUnder(prefix string) *Feed {
	if !f.static || prefix == "" {
		return f
	}
	return f.view(viewKey{static: true, api: f.api, apiBase: f.apiBase, prefix: prefix}, nil)
}

// IsStatic reports whether the view is an export's (Static): nothing
// but files, so nothing a running server answers per request.
func (f *Feed) IsStatic() bool { return f.static }

func (f *Feed) view(k viewKey, allow func(string) bool) *Feed {
	f.views.mu.Lock()
	defer f.views.mu.Unlock()
	if v, ok := f.views.m[k]; ok {
		return v
	}
	id := k.scope + "\x00" + k.prefix
	if k.static {
		id += "\x00static\x00" + strconv.FormatBool(k.api) + "\x00" + k.apiBase
	}
	v := &Feed{published: f.published,
		viewSettings: viewSettings{prefix: k.prefix, allow: allow, viewID: id, static: k.static, api: k.api, apiBase: k.apiBase},
		renderings:   renderings{docs: newDocCache(f.docs.shared)}}
	if allow != nil {
		v.Skills, v.Agents = allowed(f.Skills, allow), allowed(f.Agents, allow)
	}
	if f.views.m == nil {
		f.views.m = map[viewKey]*Feed{}
	}
	f.views.m[k] = v
	return v
}

// apiLink is the href of the dynamic route at path; ok is false when
// the view names no server that answers it.
func (f *Feed) apiLink(path string) (string, bool) {
	switch {
	case !f.static:
		return f.prefix + path, true
	case !f.api:
		return "", false
	}
	return f.apiBase + path, true
}

func allowed[V item.Version](items []*item.Item[V], allow func(string) bool) []*item.Item[V] {
	out := make([]*item.Item[V], 0, len(items))
	for _, it := range items {
		if allow(it.Name) {
			out = append(out, it)
		}
	}
	return out
}

// Scoped reports whether the view holds only some items.
func (f *Feed) Scoped() bool { return f.allow != nil }

// HasBlob reports whether d is the bytes of a file of an item of the
// view: the blob route of a scoped view serves only those.
func (f *Feed) HasBlob(d content.Digest) bool {
	if f.allow == nil {
		return true
	}
	f.blobsOnce.Do(func() {
		f.blobs = map[content.Digest]bool{}
		for _, sk := range f.Skills {
			for _, v := range sk.Versions {
				for _, d := range v.Blobs() {
					f.blobs[d] = true
				}
			}
		}
		for _, a := range f.Agents {
			for _, v := range a.Versions {
				f.blobs[v.Digest] = true
			}
		}
	})
	return f.blobs[d]
}

// viewBytes is what the views of s hold.
func (f *Feed) viewBytes() int64 {
	f.views.mu.Lock()
	defer f.views.mu.Unlock()
	var n int64
	for _, v := range f.views.m {
		n += v.docs.bytes.Load()
	}
	return n
}

// href is the root-relative href of the document k in this view.
func (f *Feed) href(k DocKey) string { return f.prefix + k.Path() }

// Bytes is what the feed's own documents and templates hold (documents in
// the shared cache are counted there).
func (f *Feed) Bytes() int64 { return f.docs.bytes.Load() + f.viewBytes() }

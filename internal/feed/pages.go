package feed

import (
	"html"
	"strings"

	"github.com/skillserver/skillserver/internal/content"
)

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
func (s *Feed) Page(base Base, key PageKey, render func(base string) ([]byte, bool)) (*Document, bool) {
	c := s.docs
	return s.forBase(base, cacheKey{page: key}, html.EscapeString(base.URL), func() (*template, bool) {
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

// AgentArtifactType is the artifact type of every sub-agent version.
const AgentArtifactType = agentType

// Prefix is the path prefix of every root-relative href of the view ("",
// or /t/<token> for a path token).
func (s *Feed) Prefix() string { return s.prefix }

// Server describes the server the view is published by.
func (s *Feed) Server() ServerInfo { return s.server }

// ScopedFeedHref is the root-relative URL of the one-skill feed of name:
// the URL a client that appends the RFC index path to it (the skills CLI)
// installs exactly that skill from.
func ScopedFeedHref(name string) string {
	return strings.TrimSuffix(DocKey{Kind: DocScopedIndex, Name: name}.Path(), docPaths[DocRFCIndex][0])
}

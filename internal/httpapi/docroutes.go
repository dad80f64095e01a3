package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/transport"
)

// The documents of the feed: JSON, per view and base URL, with their
// ETags, gzip-compressed when asked, answered from a retired snapshot
// while a walk of the tree that began on it lasts.

// handleDocument answers a document route: resolve names the document.
func (s *Server) handleDocument(resolve docKeyFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		snap, base := s.documentSource(w, r)
		if snap == nil {
			return
		}
		key, ok := resolve(r)
		var found catalog.Found
		if ok {
			// A client that began walking the tree before a reload may
			// follow an href the new snapshot no longer has: it finishes
			// from the snapshot it started on (Locate).
			found, ok = s.cat.Locate(snap, catalog.Lookup{Asks: catalog.AsksDocument, View: readerView(r), Doc: key, Base: base})
		}
		if !ok {
			s.fail(w, r, fmt.Errorf("%w: no document at %s", errNotFound, r.URL.Path))
			return
		}
		s.serveDocument(w, r, found.Doc, docContentTypes[key.Kind])
	}
}

// serveDocument writes a document of the feed, or a page, as
// contentType: its digest as ETag, gzip-compressed when the client
// accepts it, revalidated with 304.
func (s *Server) serveDocument(w http.ResponseWriter, r *http.Request, doc *feed.Document, contentType []string) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = cacheShorts
	if vary := h["Vary"]; len(vary) > 0 {
		h["Vary"] = append(vary, "Accept-Encoding")
	} else {
		h["Vary"] = varyAcceptEncoding
	}
	body, digest := doc.Body, doc.Digest
	if acceptsGzip(r) {
		if gz, gzDigest, ok := doc.Gzip(); ok {
			body, digest = gz, gzDigest
			h["Content-Encoding"] = gzipEncoding
		}
	}
	h["Etag"] = transport.ETagValue(w, digest.ETag())
	s.serveBytes(w, r, body)
}

// documentSource is the current snapshot and the documents' base URL for
// r, or an answer (503, 400, 421) and nil.
func (s *Server) documentSource(w http.ResponseWriter, r *http.Request) (*catalog.Snapshot, feed.Base) {
	snap := s.snapshotFor(w, r)
	if snap == nil {
		return nil, feed.Base{}
	}
	base, err := s.documentBase(r)
	if err != nil {
		s.fail(w, r, err)
		return nil, feed.Base{}
	}
	return snap, base
}

// documentBase is the base URL of the documents in this response: the
// configured one, or one derived from the request, whose host must be
// listed when allowed_hosts is set. Bases the operator named are Known:
// their documents are kept for the snapshot's lifetime. A path token
// stays in the base, so absolute URLs keep it.
func (s *Server) documentBase(r *http.Request) (feed.Base, error) {
	base, ok := s.baseURL(r)
	base += tokenPrefix(r)
	switch {
	case !ok:
		return feed.Base{}, fmt.Errorf("%w: the Host header is not a valid host name; configure base_url", errBadRequest)
	case s.opts.BaseURL != "":
		return feed.Base{URL: base, Known: true}, nil
	case len(s.opts.AllowedHosts) == 0:
		return feed.Base{URL: base}, nil
	}
	_, host, _ := strings.Cut(base, "://")
	if !slices.Contains(s.opts.AllowedHosts, host) {
		return feed.Base{}, fmt.Errorf("%w: this server does not serve host %q (allowed_hosts)", errMisdirected, host)
	}
	return feed.Base{URL: base, Known: true}, nil
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
// Only JSON documents are ever compressed: an artifact decoded in transit
// would fail its digest check.
func acceptsGzip(r *http.Request) bool {
	ae := r.Header["Accept-Encoding"]
	if len(ae) == 0 {
		return false
	}
	for part := range strings.SplitSeq(ae[0], ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// docKeyFunc resolves a request to the document it names; ok is false when
// the path cannot name one.
type docKeyFunc func(*http.Request) (key feed.DocKey, ok bool)

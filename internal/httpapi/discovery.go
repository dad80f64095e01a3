package httpapi

import (
	"net/http"

	"github.com/skillserver/skillserver/api"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
)

const (
	linksetContentType = feed.APICatalogContentType
	yamlContentType    = feed.OpenAPIContentType
)

// openAPIDigest is the ETag of the embedded description, which changes
// only with the binary.
var openAPIDigest = content.Sum(api.OpenAPI)

// handleAPICatalog answers the RFC 9727 API catalog for the request's base.
// It depends on the base alone, not on the snapshot, so it answers before
// the first scan too.
func (s *Server) handleAPICatalog(w http.ResponseWriter, r *http.Request) {
	base, err := s.documentBase(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := feed.Encode(feed.APICatalog(base.URL, base.URL))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", linksetContentType)
	h.Set("Cache-Control", cacheShort)
	h.Set("ETag", content.Sum(b).ETag())
	s.serveBytes(w, r, b)
}

// handleOpenAPI serves api/openapi.yaml as built into the binary.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", yamlContentType)
	h.Set("Cache-Control", cacheShort)
	h.Set("ETag", openAPIDigest.ETag())
	s.serveBytes(w, r, api.OpenAPI)
}

// rootLinks and rootBody answer PathRoot without a path token, the same
// for every such request; a request with one gets its own (rootAnswer).
var rootLinks, rootBody = rootAnswer("")

// rootAnswer is the Link header and the text of PathRoot for a request
// whose root-relative URLs start with prefix.
func rootAnswer(prefix string) (string, []byte) {
	return feed.RootLinks(prefix), []byte("skillserver: the API catalog is at " + prefix + feed.PathAPICatalog + " (see the Link header)\n")
}

// handleRoot answers / with the HTML catalogue to a client that prefers
// HTML (a browser), and to every other client with Link headers to the
// API catalog, the OpenAPI description and the entry points, and a line
// of text saying so. Under a path token every link keeps the prefix, so
// a client that follows one needs no header.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	links, body := rootLinks, rootBody
	if prefix := tokenPrefix(r); prefix != "" {
		links, body = rootAnswer(prefix)
	}
	h := w.Header()
	h.Set("Link", links)
	if prefersHTML(r) {
		s.handleCatalogue(w, r)
		return
	}
	h.Add("Vary", "Accept")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", cacheShort)
	s.serveBytes(w, r, body)
}

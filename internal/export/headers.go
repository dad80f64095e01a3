package export

import (
	"strings"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/page"
)

// HeadersFile is the headers file of the static hosts that read one
// (Netlify, Cloudflare Pages): the headers serve sends, by path, which a
// folder cannot carry. Other hosts serve it as a file; the documented
// nginx configuration refuses it.
const HeadersFile = "_headers"

// HeadersContentType is the type a bucket stores HeadersFile with.
const HeadersContentType = "text/plain; charset=utf-8"

// inertPaths are the paths of everything an export writes but the
// catalogue's pages. A host that joins the headers of every rule a path
// matches (Netlify does) would join two policies, and a browser enforces
// both; so the rules do not overlap.
var inertPaths = []string{"/api/*", "/.well-known/*", "/skill/*", "/skills/*", "/subagents/*", "/manifest.json", "/openapi.yaml"}

// hostHeaders is HeadersFile: the inert policy on every path of the
// feeds, and, with the catalogue, the pages' policy and framing and
// referrer rules on the pages, as serve sends them.
func hostHeaders(catalogue bool) []byte {
	var b strings.Builder
	b.WriteString("# Written by skillserver export: the headers serve sends, for hosts that read this file.\n")
	for _, p := range inertPaths {
		b.WriteString(p + "\n  Content-Security-Policy: " + feed.InertPolicy + "\n  X-Content-Type-Options: nosniff\n")
	}
	if catalogue {
		for _, p := range []string{"/", "/index.html", "/ui/*"} {
			b.WriteString(p + "\n")
			for _, h := range page.SecurityHeaders {
				b.WriteString("  " + h.Name + ": " + h.Value + "\n")
			}
		}
	}
	return []byte(b.String())
}

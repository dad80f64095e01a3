package httpapi

import "github.com/skillserver/skillserver/internal/feed"

// The media types and cache policies of the responses (their one home is
// feed, which the export writes with too).
const (
	jsonContentType     = feed.JSONContentType
	markdownContentType = feed.MarkdownContentType
	cacheImmutable      = feed.CacheImmutable
	cacheShort          = feed.CacheShort
)

// Header values every response of a kind gets, shared by all of them:
// each is a slice with no room to grow, so an append to one copies it,
// and nothing writes into one.
var (
	jsonContentTypes     = []string{jsonContentType}
	markdownContentTypes = []string{markdownContentType}
	octetStream          = []string{"application/octet-stream"}
	cacheShorts          = []string{cacheShort}
	cacheImmutables      = []string{cacheImmutable}
	varyAcceptEncoding   = []string{"Accept-Encoding"}
	gzipEncoding         = []string{"gzip"}
	nosniff              = []string{"nosniff"}
	sandboxed            = []string{feed.InertPolicy}
	// docContentTypes holds each document kind's Content-Type value, by
	// kind: a slice, as every document request looks one up.
	docContentTypes = func() [][]string {
		kinds := feed.Kinds()
		out := make([][]string, kinds[len(kinds)-1]+1)
		for _, k := range kinds {
			if ct := k.ContentType(); ct == jsonContentType {
				out[k] = jsonContentTypes
			} else {
				out[k] = []string{ct}
			}
		}
		return out
	}()
)

package export

import (
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"strings"
)

// keyOf is the key of the file at the escaped URL path p: p unescaped,
// without its leading slash. Resource paths come from files that passed
// validation (skill.ValidResourcePath, skill.ResourcePathLength), so the
// key is a clean slash path inside the output that every target can
// store (FuzzKeys); one that is not is refused here rather than written.
func keyOf(p string) (string, error) {
	key, err := url.PathUnescape(strings.TrimPrefix(p, "/"))
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	if !validKey(key) {
		return "", fmt.Errorf("path %q is not a path inside the output", p)
	}
	return key, nil
}

// validKey reports whether key names a file inside the output, the same
// one in a folder and in gocloud.dev's file:// driver (which escapes
// control characters): a clean relative slash path, with no backslash
// and no control character, other than the state file. Keys read from
// the state file are checked too: a hand-edited one is never removed.
func validKey(key string) bool {
	if !fs.ValidPath(key) || key == "." || key == StateFile || strings.ContainsRune(key, '\\') {
		return false
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// InertContentType is the Content-Type an export stores a skill's file
// with when a browser would render its own type as a document that runs
// script (ArtifactType).
const InertContentType = "text/plain; charset=utf-8"

// inertTypes are the media types of internal/feed's table that no
// browser runs script in when it opens them: text it shows as text,
// images it shows as images, archives and binaries it downloads, PDF in
// a viewer of its own origin. Everything else (text/html, image/svg+xml,
// application/xml, and whatever the table learns later) is stored as
// InertContentType.
var inertTypes = map[string]bool{
	"text/plain": true, "text/markdown": true, "text/csv": true, "text/css": true,
	"text/javascript": true, "text/x-shellscript": true, "text/x-python": true,
	"application/json": true, "application/yaml": true, "application/toml": true,
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
	"application/pdf": true, "application/zip": true, "application/gzip": true,
	"application/x-tar": true, "application/wasm": true, "application/octet-stream": true,
}

// ArtifactType is the Content-Type and Content-Disposition an export
// stores a skill's file (an artifact or a latest-version file) with, for
// the Content-Type contentType serve sends it with. serve sends every
// such file with "Content-Security-Policy: default-src 'none'; sandbox"
// and "X-Content-Type-Options: nosniff", so an HTML or SVG file runs no
// script on its origin; a bucket stores no such headers, and S3, GCS or
// Azure serving the object would let it run. So a type a browser renders
// as a document that can run script is stored as InertContentType, which
// browsers show as text (text/plain is never sniffed as HTML), and
// "attachment", which makes them download it instead. The bytes, and so
// the digests and URLs, are the same.
func ArtifactType(contentType string) (string, string) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil && inertTypes[mt] {
		return contentType, ""
	}
	return InertContentType, "attachment"
}

// activeExts are the extensions static hosts commonly serve as a type a
// browser renders as a document that runs script (nginx's mime.types,
// the mime-db GitHub Pages uses): a folder has no Content-Type of its
// own, so these are what a host without the headers of
// docs/operations.md would let run.
var activeExts = map[string]bool{
	".html": true, ".htm": true, ".shtml": true, ".xhtml": true, ".xht": true,
	".svg": true, ".svgz": true, ".xml": true, ".xsl": true, ".xslt": true,
	".rss": true, ".atom": true, ".rdf": true, ".mml": true, ".mht": true, ".mhtml": true,
}

// StateFile is the export's own record, at the root of the output: every
// path an export wrote and when an export last named it. It is how
// pruning knows an artifact's age (bucket objects keep no such time: an
// unchanged object is never uploaded again). It is not part of the
// published surface; hosts may refuse to serve it.
const StateFile = ".skillserver-export.json"

package feed

import (
	"path"
	"strings"
	"time"
)

// Media types of what the feed publishes.
const (
	JSONContentType     = "application/json; charset=utf-8"
	MarkdownContentType = "text/markdown; charset=utf-8"
)

// InertPolicy is the Content-Security-Policy of everything served but the
// catalogue's pages: nothing in it runs, whatever its type.
const InertPolicy = "default-src 'none'; sandbox"

// Cache lifetimes. Content-addressed and pinned URLs name their bytes, so
// caches may keep them forever; documents and unpinned paths change on
// reload and are revalidated soon.
const (
	CacheImmutable = "public, max-age=31536000, immutable"
	CacheShort     = "public, max-age=30"
	// ShortLifetime is CacheShort's max-age: how long a client may keep
	// a document that a reload can change (the MCP listings' ttlMs too).
	ShortLifetime = 30 * time.Second
)

// contentTypes is a fixed table, not the host's mime database, so every
// replica sends the same headers.
var contentTypes = map[string]string{
	".md":       MarkdownContentType,
	".markdown": MarkdownContentType,
	".txt":      "text/plain; charset=utf-8",
	".json":     JSONContentType,
	".yaml":     "application/yaml; charset=utf-8",
	".yml":      "application/yaml; charset=utf-8",
	".toml":     "application/toml; charset=utf-8",
	".csv":      "text/csv; charset=utf-8",
	".html":     "text/html; charset=utf-8",
	".css":      "text/css; charset=utf-8",
	".xml":      "application/xml; charset=utf-8",
	".js":       "text/javascript; charset=utf-8",
	".mjs":      "text/javascript; charset=utf-8",
	".ts":       "text/plain; charset=utf-8",
	".sh":       "text/x-shellscript; charset=utf-8",
	".py":       "text/x-python; charset=utf-8",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
	".svg":      "image/svg+xml",
	".pdf":      "application/pdf",
	".zip":      "application/zip",
	".gz":       "application/gzip",
	".tar":      "application/x-tar",
	".wasm":     "application/wasm",
}

// ContentType is the media type a file named p is published with, by
// its extension.
func ContentType(p string) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(p))]; ok {
		return ct
	}
	return "application/octet-stream"
}

// AgentArtifactType is the artifact type of every sub-agent version.
const AgentArtifactType = "agent-md"

package catalog

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/skillserver/skillserver/internal/content"
)

// RFCSchema is the RFC discovery index's $schema; clients compare it byte
// for byte.
const RFCSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// DocKind names a JSON document the snapshot publishes.
type DocKind int

// Document kinds.
const (
	DocRFCIndex           DocKind = iota + 1 // /.well-known/agent-skills/index.json
	DocManifest                              // /manifest.json
	DocSkillIndex                            // /skills/v1/index.json
	DocSkillPage                             // /skills/v1/pages/{page}.json
	DocSkill                                 // /skills/v1/{name}/index.json
	DocSkillVersion                          // /skills/v1/{name}/versions/{version}.json
	DocSubagentIndex                         // /subagents/v1/index.json
	DocSubagentPage                          // /subagents/v1/pages/{page}.json
	DocSubagent                              // /subagents/v1/{name}/index.json
	DocSubagentVersion                       // /subagents/v1/{name}/versions/{version}.json
	DocAPISkill                              // /api/v1/skills/{name}
	DocAPISkillVersion                       // /api/v1/skills/{name}/{version|latest}
	DocAPISkillResources                     // /api/v1/skills/{name}/{version|latest}/resources
	DocAPISubagent                           // /api/v1/subagents/{name}
	DocAPISubagentVersion                    // /api/v1/subagents/{name}/{version|latest}
	DocAgentCard                             // /.well-known/agent-card.json and agent.json
	DocLegacyIndex                           // /.well-known/skills/index.json
	DocScopedIndex                           // /skill/{name}/.well-known/agent-skills/index.json
)

// Retainable reports whether a client may still fetch a document of kind
// k from a retired snapshot: the per-item documents it reaches by href
// while walking the tree. Indexes always exist and are always current.
func (k DocKind) Retainable() bool {
	switch k {
	case DocSkillPage, DocSkill, DocSkillVersion, DocSubagentPage, DocSubagent, DocSubagentVersion:
		return true
	}
	return false
}

// absolute reports whether documents of kind k hold absolute URLs, and so
// depend on the client's base URL.
func (k DocKind) absolute() bool {
	switch k {
	case DocRFCIndex, DocSkillVersion, DocSubagentVersion, DocAPISkillVersion, DocAPISkillResources,
		DocAPISubagentVersion, DocAgentCard, DocScopedIndex:
		return true
	}
	return false
}

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

	gzipOnce   sync.Once
	gzipBody   []byte
	gzipDigest content.Digest
}

// minGzip is the smallest document worth compressing.
const minGzip = 1024

// Gzip returns the document gzip-compressed and that representation's
// digest, computed once; ok is false for documents too small to gain.
// The bytes are deterministic (no name, no time in the header).
func (d *Document) Gzip() (body []byte, digest content.Digest, ok bool) {
	if len(d.Body) < minGzip {
		return nil, "", false
	}
	d.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(d.Body)
		_ = zw.Close()
		d.gzipBody = buf.Bytes()
		d.gzipDigest = content.Sum(d.gzipBody)
	})
	return d.gzipBody, d.gzipDigest, true
}

// maxCachedBases bounds how many distinct base URLs a snapshot keeps
// rendered documents for. With a configured base URL there is one; when the
// base comes from the Host header a client could send many, and those past
// the bound are rendered per request instead of growing memory.
const maxCachedBases = 8

// docCache holds documents rendered for a snapshot, per base URL. Each
// document is encoded at most once per base for the snapshot's lifetime.
type docCache struct {
	mu    sync.Mutex
	bases map[string]map[DocKey]*Document
}

func newDocCache() *docCache { return &docCache{bases: make(map[string]map[DocKey]*Document)} }

// Document returns the document key for a client whose public base URL is
// base (scheme://host[/prefix], no trailing slash). ok is false when the
// snapshot has no such document.
func (s *Snapshot) Document(base string, key DocKey) (*Document, bool) {
	if !key.Kind.absolute() {
		base = "" // one copy, whatever the client's base URL
	}
	c := s.docs
	c.mu.Lock()
	if d, ok := c.bases[base][key]; ok {
		c.mu.Unlock()
		return d, true
	}
	c.mu.Unlock()

	v, ok := s.render(base, key)
	if !ok {
		return nil, false
	}
	d := encodeDocument(v)

	c.mu.Lock()
	defer c.mu.Unlock()
	m, known := c.bases[base]
	if !known {
		if len(c.bases) >= maxCachedBases {
			return d, true
		}
		m = make(map[DocKey]*Document)
		c.bases[base] = m
	}
	if prev, ok := m[key]; ok {
		return prev, true // another request rendered the same bytes first
	}
	m[key] = d
	return d, true
}

// encodeDocument renders v in the published JSON style: two-space indent,
// trailing newline, no HTML escaping.
func encodeDocument(v any) *Document {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every document is built from strings, numbers and slices the
		// snapshot owns; failing to encode one is a programming error.
		panic(fmt.Sprintf("encode document: %v", err))
	}
	b := buf.Bytes()
	return &Document{Body: b, Digest: content.Sum(b)}
}

func (s *Snapshot) render(base string, key DocKey) (any, bool) {
	switch key.Kind {
	case DocRFCIndex:
		return s.rfcIndex(base), true
	case DocManifest:
		return s.manifest(), true
	case DocSkillIndex:
		return s.tree(false).index(s.pageSize), true
	case DocSkillPage:
		return s.tree(false).page(s.pageSize, key.Page)
	case DocSkill:
		return s.tree(false).identity(key.Name)
	case DocSkillVersion:
		return s.skillVersionDoc(base, key.Name, key.Version)
	case DocAPISkill:
		return s.apiSkill(key.Name)
	case DocAPISkillVersion:
		return s.apiSkillVersion(base, key.Name, key.Version)
	case DocAPISkillResources:
		_, v, ok := s.skillVersion(key.Name, key.Version)
		if !ok {
			return nil, false
		}
		return apiResources(base, v), true
	case DocAPISubagent:
		return s.apiAgent(key.Name)
	case DocAPISubagentVersion:
		return s.apiAgentVersion(base, key.Name, key.Version)
	case DocAgentCard:
		return s.agentCard(base), true
	case DocLegacyIndex:
		return s.legacyIndex(), true
	case DocScopedIndex:
		return s.scopedIndex(base, key.Name)
	}
	if !s.AgentsConfigured {
		return nil, false // no sub-agent source: the whole tree is 404
	}
	switch key.Kind {
	case DocSubagentIndex:
		return s.tree(true).index(s.pageSize), true
	case DocSubagentPage:
		return s.tree(true).page(s.pageSize, key.Page)
	case DocSubagent:
		return s.tree(true).identity(key.Name)
	case DocSubagentVersion:
		return s.agentVersionDoc(base, key.Name, key.Version)
	}
	return nil, false
}

// RFC discovery index (wire.md §1).

type rfcIndex struct {
	Schema string     `json:"$schema"`
	Skills []rfcEntry `json:"skills"`
}

type rfcEntry struct {
	Name        string        `json:"name"`
	Type        ArtifactType  `json:"type"`
	Description string        `json:"description"`
	URL         string        `json:"url"`
	Digest      string        `json:"digest"`
	Version     string        `json:"version"`
	Resources   []rfcResource `json:"resources,omitempty"`
}

type rfcResource struct {
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	URL      string `json:"url"`
	UnixMode uint32 `json:"unixMode,omitempty"`
}

func (s *Snapshot) rfcIndex(base string) rfcIndex {
	idx := rfcIndex{Schema: RFCSchema, Skills: make([]rfcEntry, 0, len(s.Skills))}
	for _, sk := range s.Skills {
		idx.Skills = append(idx.Skills, rfcEntryOf(base, sk.Latest, true))
	}
	return idx
}

func rfcEntryOf(base string, v *SkillVersion, withResources bool) rfcEntry {
	e := rfcEntry{
		Name:        v.Name,
		Type:        v.Type,
		Description: v.Description,
		URL:         ArtifactURL(base, v),
		Digest:      v.Digest().String(),
		Version:     v.Version,
	}
	if withResources {
		for _, r := range v.Resources {
			rr := rfcResource{Path: r.Path, Digest: r.Digest.String(), URL: ResourceURL(base, v, r)}
			if r.Mode != 0o644 {
				rr.UnixMode = r.Mode
			}
			e.Resources = append(e.Resources, rr)
		}
	}
	return e
}

// URLs. Every artifact URL is absolute and pinned to its digest.

// SkillVersionPath is the /api/v1 path prefix of a skill version's files.
func SkillVersionPath(name, version string) string {
	return "/api/v1/skills/" + url.PathEscape(name) + "/" + url.PathEscape(version)
}

// ArtifactURL is the pinned URL of v's artifact: its zip or its SKILL.md.
func ArtifactURL(base string, v *SkillVersion) string {
	file := skillFile
	if v.Type == TypeArchive {
		file = "archive.zip"
	}
	return base + SkillVersionPath(v.Name, v.Version) + "/" + file + "?digest=" + v.Digest().String()
}

// ResourceURL is the pinned URL of one resource file of v.
func ResourceURL(base string, v *SkillVersion, r Resource) string {
	return base + SkillVersionPath(v.Name, v.Version) + "/" + escapePath(r.Path) + "?digest=" + r.Digest.String()
}

// AgentURL is the pinned URL of an agent-md file.
func AgentURL(base string, v *AgentVersion) string {
	return base + "/api/v1/subagents/" + url.PathEscape(v.Name) + "/" + url.PathEscape(v.Version) + "/agent.md?digest=" + v.Digest.String()
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

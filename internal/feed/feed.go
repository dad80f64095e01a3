// Package feed owns every document the server publishes and every path
// in them: the URL space (paths.go), the table of document kinds and how
// each is rendered (kinds.go), the one JSON encoder, and the documents of
// one view of the catalogue, rendered once and spliced per base URL
// (documents.go, doccache.go).
//
// It renders from a Source, a read-only view of published items; it must
// not import internal/catalog (which builds a Feed for each snapshot),
// internal/scan, internal/httpapi or any router. It imports
// internal/item, internal/search, internal/skill, internal/content and
// internal/provenance (the type of a version's source).
package feed

import (
	"sync"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// Source looks up the items of the view a Feed renders.
// *catalog.Snapshot is one.
type Source interface {
	Skill(name string) (*item.Skill, bool)
	Agent(name string) (*item.Agent, bool)
}

// Input is what a Feed is made of.
type Input struct {
	Generation uint64 // of the snapshot, for the shared document cache
	Source     Source
	Skills     []*item.Skill // sorted by name
	Agents     []*item.Agent // sorted by name
	// AgentsConfigured is false when no sub-agent source is configured:
	// the sub-agent tree is then 404 rather than empty.
	AgentsConfigured bool
	PageSize         int // items per native-tree page; 0 means DefaultPageSize
	Server           ServerInfo
	Shared           *SharedCache // documents for bases nobody configured
	Origins          Origins      // where the versions came from
}

// Feed is every document of one immutable view of the catalogue. It
// renders each document when first asked for, once.
type Feed struct {
	src              Source
	Generation       uint64
	Skills           []*item.Skill
	Agents           []*item.Agent
	AgentsConfigured bool
	pageSize         int
	server           ServerInfo
	origins          Origins
	search           searchIndexes
	trees            sync.Once // builds skillTree and agentTree on first use
	skillTree        collection
	agentTree        collection
	docs             *docCache

	// The view this feed is (view.go): prefix starts every root-relative
	// href, allow (nil: every item) decides which items it holds, viewID
	// keeps its documents apart in the shared cache.
	prefix string
	allow  func(name string) bool
	viewID string
	// static views are an export's (Static): links to dynamic routes
	// are apiBase + path when api is set, else left out.
	static, api bool
	apiBase     string
	views       views
	blobsOnce   sync.Once
	blobs       map[content.Digest]bool
	filesOnce   sync.Once
	files       artifactFiles
}

// New returns the feed of in.
func New(in Input) *Feed {
	f := &Feed{src: in.Source, Generation: in.Generation, Skills: in.Skills, Agents: in.Agents,
		AgentsConfigured: in.AgentsConfigured, pageSize: in.PageSize, server: in.Server, origins: in.Origins, docs: newDocCache(in.Shared)}
	if f.pageSize <= 0 {
		f.pageSize = DefaultPageSize
	}
	return f
}

// Skill returns the named skill of the view.
func (s *Feed) Skill(name string) (*item.Skill, bool) {
	if !s.Allows(name) {
		return nil, false
	}
	return s.src.Skill(name)
}

// Agent returns the named sub-agent of the view.
func (s *Feed) Agent(name string) (*item.Agent, bool) {
	if !s.Allows(name) {
		return nil, false
	}
	return s.src.Agent(name)
}

// Bytes is what the feed's own documents and templates hold (documents in
// the shared cache are counted there).
func (s *Feed) Bytes() int64 { return s.docs.bytes.Load() + s.viewBytes() }

// Release drops what the shared document cache holds for this feed and
// its views (which share its generation), which nothing serves any more.
func (s *Feed) Release() { s.docs.shared.drop(s.Generation) }

// tree returns the native-tree view of skills or agents, built once per
// snapshot when a tree document is first asked for (a reload does not
// pay for it).
func (s *Feed) tree(agents bool) *collection {
	s.trees.Do(func() { s.skillTree, s.agentTree = s.skillCollection(), s.agentCollection() })
	if agents {
		return &s.agentTree
	}
	return &s.skillTree
}

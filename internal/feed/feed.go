// Package feed owns every document the server publishes and every path
// in them: the URL space (paths.go), the table of document kinds and how
// each is rendered (kinds.go), the one JSON encoder, and the documents of
// one view of the catalogue, rendered once and spliced per base URL
// (documents.go, doccache.go). The documents themselves are rendered in
// rfc.go (the RFC index), tree.go (the native tree), readapi.go (the read
// API, the agent card, the legacy index), apicatalog.go and find.go.
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
	PageSize         int // items per native-tree page; 0: one page holds all
	Server           ServerInfo
	Shared           *SharedCache // documents for bases nobody configured
	Origins          Origins      // where the versions came from
}

// Feed is every document of one immutable view of the catalogue. It
// renders each document when first asked for, once. Its fields fall in
// three parts: what it publishes, which view of the snapshot it is, and
// what it renders from them.
type Feed struct {
	published
	viewSettings
	renderings
}

// published is what a Feed publishes: the snapshot's items (those its
// view allows) and the facts documents state about them.
type published struct {
	src              Source
	Generation       uint64
	Skills           []*item.Skill
	Agents           []*item.Agent
	AgentsConfigured bool
	pageSize         int
	server           ServerInfo
	origins          Origins
}

// viewSettings say which view of the snapshot a Feed is (view.go):
// prefix starts every root-relative href, allow (nil: every item) decides
// which items it holds, viewID keeps its documents apart in the shared
// cache. A static view is an export's (Static): links to dynamic routes
// are apiBase + path when api is set, else left out.
type viewSettings struct {
	prefix      string
	allow       func(name string) bool
	viewID      string
	static, api bool
	apiBase     string
}

// renderings is what a Feed builds from the rest when first asked, once:
// its documents and pages, the search indexes, the native trees, its
// views, and the blob and file tables of the artifact routes.
type renderings struct {
	docs      *docCache
	search    searchIndexes
	trees     sync.Once // builds skillTree and agentTree on first use
	skillTree collection
	agentTree collection
	views     views
	blobsOnce sync.Once
	blobs     map[content.Digest]bool
	filesOnce sync.Once
	files     artifactFiles
}

// New returns the feed of in.
func New(in Input) *Feed {
	f := &Feed{published: published{src: in.Source, Generation: in.Generation, Skills: in.Skills, Agents: in.Agents,
		AgentsConfigured: in.AgentsConfigured, pageSize: in.PageSize, server: in.Server, origins: in.Origins},
		renderings: renderings{docs: newDocCache(in.Shared)}}
	return f
}

// Skill returns the named skill of the view.
func (f *Feed) Skill(name string) (*item.Skill, bool) {
	if !f.Allows(name) {
		return nil, false
	}
	return f.src.Skill(name)
}

// Agent returns the named sub-agent of the view.
func (f *Feed) Agent(name string) (*item.Agent, bool) {
	if !f.Allows(name) {
		return nil, false
	}
	return f.src.Agent(name)
}

// Bytes is what the feed's own documents and templates hold (documents in
// the shared cache are counted there).
func (f *Feed) Bytes() int64 { return f.docs.bytes.Load() + f.viewBytes() }

// Release drops what the shared document cache holds for this feed and
// its views (which share its generation), which nothing serves any more.
func (f *Feed) Release() { f.docs.shared.drop(f.Generation) }

// tree returns the native-tree view of skills or agents, built once per
// snapshot when a tree document is first asked for (a reload does not
// pay for it).
func (f *Feed) tree(agents bool) *collection {
	f.trees.Do(func() { f.skillTree, f.agentTree = f.skillCollection(), f.agentCollection() })
	if agents {
		return &f.agentTree
	}
	return &f.skillTree
}

// Prefix is the path prefix of every root-relative href of the view ("",
// or /t/<token> for a path token).
func (f *Feed) Prefix() string { return f.prefix }

// Server describes the server the view is published by.
func (f *Feed) Server() ServerInfo { return f.server }

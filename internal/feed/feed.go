// Package feed owns every document the server publishes and every path
// in them. Each file uses only files below it. From the top: a view's
// documents, rendered once and spliced per base URL (documents.go); the
// table of document kinds and how each is rendered (kinds.go); the
// renderers: the MCP skills extension's view (mcp.go), the AI catalogue
// (aicatalog.go), the ClawHub-compatible read API (clawhub.go), the read
// API, the agent card and the legacy and scoped
// indexes (readapi.go), search (find.go), the API catalogue
// (apicatalog.go), the native tree (tree.go), the RFC index (rfc.go),
// the artifact tables (artifacts.go), the views (view.go) and where each
// version came from (origin.go); the Feed and everything it holds
// (feed.go); the per-view and shared document caches (doccache.go); the
// URL space (paths.go); and at the ground the document kinds and keys
// (dockind.go), the one JSON encoder and the encoded Document
// (encoding.go), and the content-type table (contenttype.go).
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
	"github.com/skillserver/skillserver/internal/provenance"
	"github.com/skillserver/skillserver/internal/search"
)

// Source looks up the items of the view a Feed renders.
// *catalog.Snapshot is one.
type Source interface {
	Skill(name string) (*item.Skill, bool)
	Agent(name string) (*item.Agent, bool)
}

// Files reads the bytes of a published file by digest: the snapshot's
// store, read without filling its hot cache (content.Store.Read). A
// version's front matter, which the MCP entries carry whole, is made from
// its SKILL.md when a document needs it rather than kept in memory.
type Files interface {
	Read(d content.Digest) ([]byte, bool)
}

// Input is what a Feed is made of.
type Input struct {
	Generation uint64 // of the snapshot, for the shared document cache
	Source     Source
	Files      Files
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
	stored           Files
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
	mcp       mcpView
}

// New returns the feed of in.
func New(in Input) *Feed {
	f := &Feed{published: published{src: in.Source, stored: in.Files, Generation: in.Generation, Skills: in.Skills, Agents: in.Agents,
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

// readStored reads the published file d; a feed of items made without a
// scan (Input.Files nil) has none.
func (f *Feed) readStored(d content.Digest) ([]byte, bool) {
	if f.stored == nil {
		return nil, false
	}
	return f.stored.Read(d)
}

// Release drops what the shared document cache holds for this feed and
// its views (which share its generation), which nothing serves any more.
func (f *Feed) Release() { f.docs.shared.drop(f.Generation) }

// Prefix is the path prefix of every root-relative href of the view ("",
// or /t/<token> for a path token).
func (f *Feed) Prefix() string { return f.prefix }

// Server describes the server the view is published by.
func (f *Feed) Server() ServerInfo { return f.server }

// ServerInfo describes the server in documents that speak for it (the
// agent card).
type ServerInfo struct {
	Name        string // lower-hyphen-case
	Description string
	Version     string // the binary's version
	// Publisher is the domain name the AI catalogue's urn:air
	// identifiers are minted under (catalog_publisher); "" is
	// Name.localhost, a name no one else can hold.
	Publisher string
	// Logo is the bytes of an SVG or PNG file the pages show before the
	// name (server_logo), LogoType its media type; nil for none.
	Logo     []byte
	LogoType string
}

// publisher is the publisher of the AI catalogue's identifiers.
func (s ServerInfo) publisher() string {
	if s.Publisher != "" {
		return s.Publisher
	}
	name := s.Name
	if name == "" {
		name = "skillserver"
	}
	return name + ".localhost"
}

// searchIndexes are built on the first search of a snapshot, once.
type searchIndexes struct {
	once          sync.Once
	skills, agent *search.Index
}

// Origins are the git checkouts the skills and sub-agents roots were read
// from; nil when provenance is off or a root is in no checkout.
type Origins struct {
	Skills, Agents *provenance.Source
}

// collection is what the tree needs of skills or sub-agents.
type collection struct {
	kind   item.Kind
	prefix string // of every href (Feed.prefix)
	// the kinds of its index, pages, identities and versions
	indexKind, pageKind, identityKind, versionKind DocKind
	items                                          []collectionItem
	byName                                         map[string]int
}

type collectionItem struct {
	name     string
	latest   string
	versions []collectionVersion // newest first
}

type collectionVersion struct {
	version     string
	publishedAt string
	digest      string
	source      *provenance.Source
}

type viewKey struct {
	scope, prefix string
	static, api   bool
	apiBase       string
}

type views struct {
	mu sync.Mutex
	m  map[viewKey]*Feed
}

// Allows reports whether the view holds items named name.
func (f *Feed) Allows(name string) bool { return f.allow == nil || f.allow(name) }

// An ArtifactFile is one file a view publishes at its content-addressed
// path (ArtifactPath): a version's SKILL.md or archive.zip, the SKILL.md
// or a resource of an archive version, or a sub-agent version's agent.md.
type ArtifactFile struct {
	Digest content.Digest
	// Name is the file's name in its URL: SKILL.md, archive.zip, agent.md
	// or a resource's slash path.
	Name string
	// Install names the skill a download of this file installs (its
	// SKILL.md or archive.zip); "" for resources and agent files.
	Install string
}

// Path is where the file is published.
func (a ArtifactFile) Path() string { return ArtifactPath(a.Digest, a.Name) }

// ContentType is the file's media type.
func (a ArtifactFile) ContentType() string { return ContentType(a.Name) }

type artifactFiles struct {
	list   []ArtifactFile // sorted by path
	byFile map[artifactKey]int
}

// artifactKey is what an artifact path names: its bytes and its name.
type artifactKey struct {
	d    content.Digest
	name string
}

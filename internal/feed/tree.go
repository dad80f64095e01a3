package feed

import (
	"strconv"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/provenance"
)

// The native manifest tree (docs/http-api.md, "Native manifest tree"): /manifest.json, then for skills
// and sub-agents an index of pages, pages of items, one identity document
// per item listing its versions, and one document per version.

// ManifestSchema is /manifest.json's $schema.
const ManifestSchema = "https://schemas.netclaw.dev/skillserver/manifest/0.1.0"

// AllPage names the single page of a collection that fits on one page.
const AllPage = "all"

type hrefLink struct {
	Href string `json:"href"`
}

type selfLinks struct {
	Self hrefLink `json:"self"`
}

type manifestDoc struct {
	Schema     string                `json:"$schema"`
	APIVersion string                `json:"apiVersion"`
	Versions   map[string]manifestV1 `json:"versions"`
}

type manifestV1 struct {
	Self           hrefLink  `json:"self"`
	Skills         hrefLink  `json:"skills"`
	Subagents      *hrefLink `json:"subagents,omitempty"`
	SkillSearch    *hrefLink `json:"skillSearch,omitempty"`
	SubagentSearch *hrefLink `json:"subagentSearch,omitempty"`
}

type treeIndexDoc struct {
	Kind  string    `json:"kind"`
	Links selfLinks `json:"links"`
	Pages []pageRef `json:"pages"`
}

type pageRef struct {
	Range string `json:"range"`
	Href  string `json:"href"`
}

type treePageDoc struct {
	Kind  string     `json:"kind"`
	Range string     `json:"range"`
	Items []treeItem `json:"items"`
	Links selfLinks  `json:"links"`
}

type treeItem struct {
	Name          string       `json:"name"`
	LatestVersion string       `json:"latestVersion"`
	VersionRange  versionRange `json:"versionRange"`
	Href          string       `json:"href"`
}

type versionRange struct {
	Min   string `json:"min"`
	Max   string `json:"max"`
	Count int    `json:"count"`
}

type identityDoc struct {
	Kind          string       `json:"kind"`
	Name          string       `json:"name"`
	LatestVersion string       `json:"latestVersion"`
	Versions      []versionRef `json:"versions"`
	Links         selfLinks    `json:"links"`
}

type versionRef struct {
	Version     string             `json:"version"`
	PublishedAt string             `json:"publishedAt"`
	Digest      string             `json:"digest"`
	Source      *provenance.Source `json:"source,omitempty"`
	Href        string             `json:"href"`
}

type skillVersionDoc struct {
	Kind             string             `json:"kind"`
	Artifact         rfcEntry           `json:"artifact"`
	RoutesToSubagent *subagentRoute     `json:"routesToSubagent,omitempty"`
	Source           *provenance.Source `json:"source,omitempty"`
	Links            selfLinks          `json:"links"`
}

type subagentRoute struct {
	Name string `json:"name"`
	Href string `json:"href"`
}

type subagentVersionDoc struct {
	Kind        string             `json:"kind"`
	Name        string             `json:"name"`
	Version     string             `json:"version"`
	Type        string             `json:"type"`
	Description string             `json:"description"`
	URL         string             `json:"url"`
	Digest      string             `json:"digest"`
	Source      *provenance.Source `json:"source,omitempty"`
	Links       selfLinks          `json:"links"`
}

// collectionOf is the native-tree view of items read from checkout; c
// names its kinds.
func collectionOf[V item.Version](c collection, items []*item.Item[V], checkout *provenance.Source) collection {
	c.items, c.byName = make([]collectionItem, 0, len(items)), make(map[string]int, len(items))
	for _, x := range items {
		it := collectionItem{name: x.Name, latest: x.Latest.Info().Version}
		for _, v := range x.Versions {
			src, published := origin(checkout, v.Info())
			it.versions = append(it.versions, collectionVersion{v.Info().Version, published, v.ArtifactDigest().String(), src})
		}
		c.byName[it.name] = len(c.items)
		c.items = append(c.items, it)
	}
	return c
}

func (f *Feed) skillCollection() collection {
	return collectionOf(collection{kind: item.KindSkill, prefix: f.prefix, indexKind: DocSkillIndex, pageKind: DocSkillPage, identityKind: DocSkill, versionKind: DocSkillVersion}, f.Skills, f.origins.Skills)
}

func (f *Feed) agentCollection() collection {
	return collectionOf(collection{kind: item.KindSubagent, prefix: f.prefix, indexKind: DocSubagentIndex, pageKind: DocSubagentPage, identityKind: DocSubagent, versionKind: DocSubagentVersion}, f.Agents, f.origins.Agents)
}

// pageSpan is one server-owned pageSpan of a collection.
type pageSpan struct {
	name       string
	rangeLabel string
	lo, hi     int // items[lo:hi]
}

// pageList splits n items into pageList of at most size: one page named "all"
// while everything fits, else pageList "1", "2", ... labelled by the first
// and last name they hold.
func (c collection) pageList(size int) []pageSpan {
	n := len(c.items)
	if size <= 0 || n <= size {
		return []pageSpan{{name: AllPage, rangeLabel: AllPage, lo: 0, hi: n}}
	}
	var out []pageSpan
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		out = append(out, pageSpan{
			name:       strconv.Itoa(len(out) + 1),
			rangeLabel: c.items[lo].name + ".." + c.items[hi-1].name,
			lo:         lo, hi: hi,
		})
	}
	return out
}

func (c collection) indexDoc(size int) treeIndexDoc {
	d := treeIndexDoc{Kind: c.kind.String() + "-index", Links: selfLinks{hrefLink{c.prefix + DocKey{Kind: c.indexKind}.Path()}}}
	for _, p := range c.pageList(size) {
		d.Pages = append(d.Pages, pageRef{Range: p.rangeLabel, Href: c.prefix + DocKey{Kind: c.pageKind, Page: p.name}.Path()})
	}
	return d
}

func (c collection) pageDoc(size int, name string) (treePageDoc, bool) {
	for _, p := range c.pageList(size) {
		if p.name != name {
			continue
		}
		d := treePageDoc{Kind: c.kind.String() + "-page", Range: p.rangeLabel, Items: make([]treeItem, 0, p.hi-p.lo),
			Links: selfLinks{hrefLink{c.prefix + DocKey{Kind: c.pageKind, Page: p.name}.Path()}}}
		for _, it := range c.items[p.lo:p.hi] {
			d.Items = append(d.Items, treeItem{
				Name:          it.name,
				LatestVersion: it.latest,
				VersionRange: versionRange{
					Min:   it.versions[len(it.versions)-1].version,
					Max:   it.versions[0].version,
					Count: len(it.versions),
				},
				Href: c.prefix + DocKey{Kind: c.identityKind, Name: it.name}.Path(),
			})
		}
		return d, true
	}
	return treePageDoc{}, false
}

func (c collection) itemIdentity(name string) (identityDoc, bool) {
	i, ok := c.byName[name]
	if !ok {
		return identityDoc{}, false
	}
	it := c.items[i]
	d := identityDoc{Kind: c.kind.String(), Name: it.name, LatestVersion: it.latest,
		Links: selfLinks{hrefLink{c.prefix + DocKey{Kind: c.identityKind, Name: it.name}.Path()}}}
	for _, v := range it.versions {
		d.Versions = append(d.Versions, versionRef{
			Version:     v.version,
			PublishedAt: v.publishedAt,
			Digest:      v.digest,
			Source:      v.source,
			Href:        c.prefix + DocKey{Kind: c.versionKind, Name: it.name, Version: v.version}.Path(),
		})
	}
	return d, true
}

func (f *Feed) nativeManifest() manifestDoc {
	v1 := manifestV1{
		Self:   hrefLink{f.href(DocKey{Kind: DocManifest})},
		Skills: hrefLink{f.href(DocKey{Kind: DocSkillIndex})},
	}
	if href, ok := f.apiLink(PathSkillSearch); ok {
		v1.SkillSearch = &hrefLink{href}
	}
	// Every advertised href answers 200: without a sub-agent source, both
	// sub-agent links would be 404s.
	if f.AgentsConfigured {
		v1.Subagents = &hrefLink{f.href(DocKey{Kind: DocSubagentIndex})}
		if href, ok := f.apiLink(PathSubagentSearch); ok {
			v1.SubagentSearch = &hrefLink{href}
		}
	}
	return manifestDoc{Schema: ManifestSchema, APIVersion: "v1", Versions: map[string]manifestV1{"v1": v1}}
}

func (f *Feed) skillVersionDoc(base, name, version string) (skillVersionDoc, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return skillVersionDoc{}, false
	}
	v, ok := sk.Version(version)
	if !ok {
		return skillVersionDoc{}, false
	}
	src, _ := origin(f.origins.Skills, &v.VersionInfo)
	d := skillVersionDoc{Kind: "skill-version", Artifact: rfcEntryOf(base, v, false), Source: src,
		Links: selfLinks{hrefLink{f.href(DocKey{Kind: DocSkillVersion, Name: name, Version: version})}}}
	if v.Subagent != "" {
		if _, ok := f.Agent(v.Subagent); ok {
			d.RoutesToSubagent = &subagentRoute{Name: v.Subagent, Href: f.href(DocKey{Kind: DocSubagent, Name: v.Subagent})}
		}
	}
	return d, true
}

func (f *Feed) agentVersionDoc(base, name, version string) (subagentVersionDoc, bool) {
	a, ok := f.Agent(name)
	if !ok {
		return subagentVersionDoc{}, false
	}
	v, ok := a.Version(version)
	if !ok {
		return subagentVersionDoc{}, false
	}
	src, _ := origin(f.origins.Agents, &v.VersionInfo)
	return subagentVersionDoc{
		Kind: "subagent-version", Name: v.Name, Version: v.Version, Type: AgentArtifactType,
		Description: v.Description, URL: AgentURL(base, v), Digest: v.Digest.String(), Source: src,
		Links: selfLinks{hrefLink{f.href(DocKey{Kind: DocSubagentVersion, Name: name, Version: version})}},
	}, true
}

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

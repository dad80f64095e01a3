package feed

import (
	"strings"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/provenance"
	"github.com/skillserver/skillserver/internal/search"
	"github.com/skillserver/skillserver/internal/skill"
)

// The read API (docs/http-api.md, "Search and read API"), the agent card (§5), the legacy v0.1 index
// and the one-skill scoped index. Item documents go through the same
// per-snapshot document cache as the feeds; search results depend on the
// query and are encoded per request by the caller.

// Summary is one search result.
type Summary struct {
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	LatestVersion string   `json:"latestVersion"`
	VersionCount  int      `json:"versionCount"`
	Tags          []string `json:"tags"`
	Href          string   `json:"href"`
}

type apiItem struct {
	Name          string           `json:"name"`
	Description   string           `json:"description"`
	LatestVersion string           `json:"latestVersion"`
	Versions      []apiVersionLink `json:"versions"`
}

type apiVersionLink struct {
	Version     string             `json:"version"`
	Type        string             `json:"type"`
	Digest      string             `json:"digest"`
	PublishedAt string             `json:"publishedAt"`
	Source      *provenance.Source `json:"source,omitempty"`
	Href        string             `json:"href"`
}

type apiVersion struct {
	Name             string             `json:"name"`
	Version          string             `json:"version"`
	Type             string             `json:"type"`
	Description      string             `json:"description"`
	Digest           string             `json:"digest"`
	URL              string             `json:"url"`
	PublishedAt      string             `json:"publishedAt"`
	Source           *provenance.Source `json:"source,omitempty"`
	Latest           bool               `json:"latest"`
	Metadata         skill.Meta         `json:"metadata,omitempty"`
	Resources        []apiResource      `json:"resources,omitempty"`
	RoutesToSubagent *subagentRoute     `json:"routesToSubagent,omitempty"`
}

type apiResource struct {
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	Size     int64  `json:"size"`
	UnixMode uint32 `json:"unixMode"`
	URL      string `json:"url"`
}

func (f *Feed) indexed() *searchIndexes {
	f.search.once.Do(func() {
		f.search.skills, f.search.agent = searchIndex(f.Skills), searchIndex(f.Agents)
	})
	return &f.search
}

func searchIndex[V item.Version](items []*item.Item[V]) *search.Index {
	docs := make([]search.Doc, len(items))
	for i, it := range items {
		l := it.Latest.Info()
		docs[i] = search.Doc{Name: it.Name, Description: l.Description, Tags: l.List("tags")}
	}
	return search.New(docs)
}

// SearchSkills ranks skills for q (all, by name, when q is empty).
func (f *Feed) SearchSkills(q string) []Summary {
	if strings.TrimSpace(q) == "" {
		return summaries(f.prefix, nameOrder(f.Skills), DocAPISkill, f.Skills)
	}
	return summaries(f.prefix, f.indexed().skills.Search(q), DocAPISkill, f.Skills)
}

// SearchAgents ranks sub-agents for q.
func (f *Feed) SearchAgents(q string) []Summary {
	if strings.TrimSpace(q) == "" {
		return summaries(f.prefix, nameOrder(f.Agents), DocAPISubagent, f.Agents)
	}
	return summaries(f.prefix, f.indexed().agent.Search(q), DocAPISubagent, f.Agents)
}

// nameOrder is every item in the order an empty query ranks them, by name:
// the order the items already have, so listing them builds no index
// (the first listing of 10,000 skills took 0.6 s for it).
func nameOrder[V item.Version](items []*item.Item[V]) []int {
	all := make([]int, len(items))
	for i := range all {
		all[i] = i
	}
	return all
}

// summaries are the search results hits (indexes of items), linking to
// documents of kind.
func summaries[V item.Version](prefix string, hits []int, kind DocKind, items []*item.Item[V]) []Summary {
	out := make([]Summary, len(hits))
	for i, h := range hits {
		it := items[h]
		l := it.Latest.Info()
		out[i] = Summary{Name: it.Name, Description: l.Description, LatestVersion: l.Version, VersionCount: len(it.Versions),
			Tags: l.List("tags"), Href: prefix + DocKey{Kind: kind, Name: it.Name}.Path()}
	}
	return out
}

func (f *Feed) apiSkill(name string) (apiItem, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return apiItem{}, false
	}
	return apiItemOf(f.prefix, sk, f.origins.Skills, DocAPISkillVersion, func(v *item.SkillVersion) string { return string(v.Type) }), true
}

func (f *Feed) apiAgent(name string) (apiItem, bool) {
	a, ok := f.Agent(name)
	if !ok {
		return apiItem{}, false
	}
	return apiItemOf(f.prefix, a, f.origins.Agents, DocAPISubagentVersion, func(*item.AgentVersion) string { return AgentArtifactType }), true
}

// apiItemOf is the read API's document of it, linking to its versions'
// documents of kind versionKind; typ says a version's artifact type.
func apiItemOf[V item.Version](prefix string, it *item.Item[V], checkout *provenance.Source, versionKind DocKind, typ func(V) string) apiItem {
	l := it.Latest.Info()
	d := apiItem{Name: it.Name, Description: l.Description, LatestVersion: l.Version}
	for _, v := range it.Versions {
		info := v.Info()
		src, published := origin(checkout, info)
		d.Versions = append(d.Versions, apiVersionLink{Version: info.Version, Type: typ(v), Digest: v.ArtifactDigest().String(),
			PublishedAt: published, Source: src, Href: prefix + DocKey{Kind: versionKind, Name: it.Name, Version: info.Version}.Path()})
	}
	return d
}

func (f *Feed) apiSkillVersion(base, name, version string) (apiVersion, bool) {
	sk, v, ok := f.skillVersion(name, version)
	if !ok {
		return apiVersion{}, false
	}
	src, published := origin(f.origins.Skills, &v.VersionInfo)
	d := apiVersion{Name: v.Name, Version: v.Version, Type: string(v.Type), Description: v.Description,
		Digest: v.Digest().String(), URL: ArtifactURL(base, v), PublishedAt: published, Source: src,
		Latest: sk.Latest == v, Metadata: v.Metadata, Resources: apiResources(base, v)}
	if v.Subagent != "" {
		if _, ok := f.Agent(v.Subagent); ok {
			d.RoutesToSubagent = &subagentRoute{Name: v.Subagent, Href: f.href(DocKey{Kind: DocSubagent, Name: v.Subagent})}
		}
	}
	return d, true
}

func apiResources(base string, v *item.SkillVersion) []apiResource {
	out := make([]apiResource, 0, len(v.Resources))
	for _, r := range v.Resources {
		out = append(out, apiResource{Path: r.Path, Digest: r.Digest.String(), Size: r.Size, UnixMode: r.Mode, URL: ResourceURL(base, r)})
	}
	return out
}

// skillVersion resolves a version string, or "latest".
func (f *Feed) skillVersion(name, version string) (*item.Skill, *item.SkillVersion, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return nil, nil, false
	}
	if version == item.LatestAlias {
		return sk, sk.Latest, true
	}
	v, ok := sk.Version(version)
	return sk, v, ok
}

func (f *Feed) apiAgentVersion(base, name, version string) (apiVersion, bool) {
	a, ok := f.Agent(name)
	if !ok {
		return apiVersion{}, false
	}
	v := a.Latest
	if version != item.LatestAlias {
		if v, ok = a.Version(version); !ok {
			return apiVersion{}, false
		}
	}
	src, published := origin(f.origins.Agents, &v.VersionInfo)
	return apiVersion{Name: v.Name, Version: v.Version, Type: AgentArtifactType, Description: v.Description,
		Digest: v.Digest.String(), URL: AgentURL(base, v), PublishedAt: published, Source: src,
		Latest: a.Latest == v, Metadata: v.Metadata}, true
}

// UpdateCheck is one answer of POST /api/v1/skills/check-updates.
type UpdateCheck struct {
	Name           string `json:"name"`
	CurrentVersion string `json:"currentVersion"`
	CurrentDigest  string `json:"currentDigest,omitempty"`
	Known          bool   `json:"known"`
	LatestVersion  string `json:"latestVersion,omitempty"`
	LatestDigest   string `json:"latestDigest,omitempty"`
	HasUpdate      bool   `json:"hasUpdate"`
}

// CheckUpdate compares a client's version of a skill, and optionally the
// digest of what it holds ("" when not given), with the latest. An
// unknown name is reported, not an error.
//
// Semver precedence decides first. Where it ties (the same version
// edited in place, 1.0 against 1.0.0, or two digest-derived
// 0.0.0+<digest> versions), the digest decides when the client gave one,
// else the version string: anything but exactly the latest is an update.
// Ordering ties by string instead would answer at random between edits.
func (f *Feed) CheckUpdate(name, current string, digest content.Digest) UpdateCheck {
	c := UpdateCheck{Name: name, CurrentVersion: current, CurrentDigest: string(digest)}
	sk, ok := f.Skill(name)
	if !ok {
		return c
	}
	latest := sk.Latest
	c.Known, c.LatestVersion, c.LatestDigest = true, latest.Version, latest.Digest().String()
	c.HasUpdate = item.IsUpdate(latest.Version, latest.Digest(), current, digest)
	return c
}

// Agent card (A2A v0.3.0 AgentCard plus the agent-harness fields).

type agentCard struct {
	Name               string           `json:"name"`
	Version            string           `json:"version"`
	Description        string           `json:"description"`
	URL                string           `json:"url"`
	ProtocolVersion    string           `json:"protocolVersion"`
	DefaultInputModes  []string         `json:"defaultInputModes"`
	DefaultOutputModes []string         `json:"defaultOutputModes"`
	Capabilities       cardCapabilities `json:"capabilities"`
	Skills             []cardSkill      `json:"skills"`
}

type cardCapabilities struct {
	Streaming      bool            `json:"streaming"`
	Conversational bool            `json:"conversational"`
	DirectAPI      bool            `json:"direct_api"`
	Extensions     []cardExtension `json:"extensions,omitempty"`
}

// cardExtension is an A2A AgentExtension. The card carries one, the
// provenance extension, whose params name the skills' checkout.
type cardExtension struct {
	URI         string             `json:"uri"`
	Description string             `json:"description"`
	Required    bool               `json:"required"`
	Params      *provenance.Source `json:"params"`
}

type cardSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// cardInfo is the server as the documents that speak for it (the agent
// card, the AI catalogue) name it, with defaults for what is unset.
func (f *Feed) cardInfo() ServerInfo {
	info := f.server
	if info.Name == "" {
		info.Name = "skillserver"
	}
	// Agent registries require a semver version; a build without a
	// release version says 0.0.0-dev.
	info.Version = item.Semver(info.Version)
	if info.Description == "" {
		info.Description = "Publishes agent skills and sub-agents."
	}
	return info
}

func (f *Feed) agentCard(base string) agentCard {
	info := f.cardInfo()
	c := agentCard{
		Name: info.Name, Version: info.Version, Description: info.Description, URL: base + "/",
		ProtocolVersion: "0.3.0", DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/markdown"},
		Capabilities: cardCapabilities{DirectAPI: true}, Skills: make([]cardSkill, 0, len(f.Skills)),
	}
	if src := f.origins.Skills; src != nil {
		c.Capabilities.Extensions = []cardExtension{{URI: provenanceExtensionURI, Params: src,
			Description: "Where the skills came from: the git repository, the commit and the skills root's path in it."}}
	}
	for _, sk := range f.Skills {
		v := sk.Latest
		c.Skills = append(c.Skills, cardSkill{
			ID: strings.ReplaceAll(sk.Name, "-", "_"), Name: titleCase(sk.Name), Description: v.Description,
			Tags: v.List("tags"), Examples: v.List("examples"),
		})
	}
	return c
}

// titleCase turns "code-review" into "Code Review".
func titleCase(name string) string {
	words := strings.Split(name, "-")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// Legacy v0.1 index, for readers that know only /.well-known/skills/.

type legacyIndex struct {
	Skills []legacySkill `json:"skills"`
}

type legacySkill struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
}

func (f *Feed) legacyIndex() legacyIndex {
	idx := legacyIndex{Skills: make([]legacySkill, 0, len(f.Skills))}
	for _, sk := range f.Skills {
		files := []string{skill.FileName}
		for _, r := range sk.Latest.Resources {
			files = append(files, r.Path)
		}
		idx.Skills = append(idx.Skills, legacySkill{Name: sk.Name, Description: sk.Latest.Description, Files: files})
	}
	return idx
}

// scopedIndex is the RFC index holding one skill, so a client given
// https://host/skill/<name> installs exactly it.
func (f *Feed) scopedIndex(base, name string) (rfcIndex, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return rfcIndex{}, false
	}
	return rfcIndex{Schema: RFCSchema, Skills: []rfcEntry{rfcEntryOf(base, sk.Latest, true)}}, true
}

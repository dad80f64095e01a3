package catalog

import (
	"strings"
	"sync"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/search"
	"github.com/skillserver/skillserver/internal/skill"
)

// The read API (wire.md §4), the agent card (§5), the legacy v0.1 index
// and the one-skill scoped index. Item documents go through the same
// per-snapshot document cache as the feeds; search results depend on the
// query and are encoded per request by the caller.

// ServerInfo describes the server in documents that speak for it (the
// agent card).
type ServerInfo struct {
	Name        string // lower-hyphen-case
	Description string
	Version     string // the binary's version
}

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
	Version     string `json:"version"`
	Type        string `json:"type"`
	Digest      string `json:"digest"`
	PublishedAt string `json:"publishedAt"`
	Href        string `json:"href"`
}

type apiVersion struct {
	Name             string            `json:"name"`
	Version          string            `json:"version"`
	Type             string            `json:"type"`
	Description      string            `json:"description"`
	Digest           string            `json:"digest"`
	URL              string            `json:"url"`
	PublishedAt      string            `json:"publishedAt"`
	Latest           bool              `json:"latest"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	Resources        []apiResource     `json:"resources,omitempty"`
	RoutesToSubagent *subagentRoute    `json:"routesToSubagent,omitempty"`
}

type apiResource struct {
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	Size     int64  `json:"size"`
	UnixMode uint32 `json:"unixMode"`
	URL      string `json:"url"`
}

// APISkillsRoot and APISubagentsRoot prefix the read API.
const (
	APISkillsRoot    = "/api/v1/skills"
	APISubagentsRoot = "/api/v1/subagents"
)

// metaList reads a metadata value that holds a list: a YAML list as it
// was written, else a string split at commas ("a, b").
func metaList(meta map[string]string, lists map[string][]string, key string) []string {
	if l, ok := lists[key]; ok {
		return l
	}
	return skill.ListItems(meta[key])
}

func (v *SkillVersion) list(key string) []string { return metaList(v.Metadata, v.MetadataLists, key) }
func (v *AgentVersion) list(key string) []string { return metaList(v.Metadata, v.MetadataLists, key) }

// searchIndexes are built on the first search of a snapshot, once.
type searchIndexes struct {
	once          sync.Once
	skills, agent *search.Index
}

func (s *Snapshot) indexes() *searchIndexes {
	s.search.once.Do(func() {
		docs := make([]search.Doc, len(s.Skills))
		for i, sk := range s.Skills {
			docs[i] = search.Doc{Name: sk.Name, Description: sk.Latest.Description, Tags: sk.Latest.list("tags")}
		}
		s.search.skills = search.New(docs)
		docs = make([]search.Doc, len(s.Agents))
		for i, a := range s.Agents {
			docs[i] = search.Doc{Name: a.Name, Description: a.Latest.Description, Tags: a.Latest.list("tags")}
		}
		s.search.agent = search.New(docs)
	})
	return &s.search
}

// SearchSkills ranks skills for q (all, by name, when q is empty).
func (s *Snapshot) SearchSkills(q string) []Summary {
	return summaries(s.indexes().skills.Search(q), func(i int) Summary {
		sk := s.Skills[i]
		return summary(APISkillsRoot, sk.Name, len(sk.Versions), sk.Latest.Description, sk.Latest.Version, sk.Latest.list("tags"))
	})
}

// SearchAgents ranks sub-agents for q.
func (s *Snapshot) SearchAgents(q string) []Summary {
	return summaries(s.indexes().agent.Search(q), func(i int) Summary {
		a := s.Agents[i]
		return summary(APISubagentsRoot, a.Name, len(a.Versions), a.Latest.Description, a.Latest.Version, a.Latest.list("tags"))
	})
}

func summary(root, name string, versions int, description, latest string, tags []string) Summary {
	return Summary{Name: name, Description: description, LatestVersion: latest, VersionCount: versions, Tags: tags, Href: root + "/" + name}
}

func summaries(hits []int, of func(int) Summary) []Summary {
	out := make([]Summary, len(hits))
	for i, h := range hits {
		out[i] = of(h)
	}
	return out
}

func (s *Snapshot) apiSkill(name string) (apiItem, bool) {
	sk, ok := s.Skill(name)
	if !ok {
		return apiItem{}, false
	}
	d := apiItem{Name: sk.Name, Description: sk.Latest.Description, LatestVersion: sk.Latest.Version}
	for _, v := range sk.Versions {
		d.Versions = append(d.Versions, apiVersionLink{Version: v.Version, Type: string(v.Type), Digest: v.Digest().String(),
			PublishedAt: v.PublishedAt.Format(time.RFC3339), Href: APISkillsRoot + "/" + sk.Name + "/" + v.Version})
	}
	return d, true
}

func (s *Snapshot) apiSkillVersion(base, name, version string) (apiVersion, bool) {
	sk, v, ok := s.skillVersion(name, version)
	if !ok {
		return apiVersion{}, false
	}
	d := apiVersion{Name: v.Name, Version: v.Version, Type: string(v.Type), Description: v.Description,
		Digest: v.Digest().String(), URL: ArtifactURL(base, v), PublishedAt: v.PublishedAt.Format(time.RFC3339),
		Latest: sk.Latest == v, Metadata: v.Metadata, Resources: apiResources(base, v)}
	if v.Subagent != "" {
		if _, ok := s.Agent(v.Subagent); ok {
			d.RoutesToSubagent = &subagentRoute{Name: v.Subagent, Href: identityHref(SubagentTreeRoot, v.Subagent)}
		}
	}
	return d, true
}

func apiResources(base string, v *SkillVersion) []apiResource {
	out := make([]apiResource, 0, len(v.Resources))
	for _, r := range v.Resources {
		out = append(out, apiResource{Path: r.Path, Digest: r.Digest.String(), Size: r.Size, UnixMode: r.Mode, URL: ResourceURL(base, v, r)})
	}
	return out
}

// skillVersion resolves a version string, or "latest".
func (s *Snapshot) skillVersion(name, version string) (*Skill, *SkillVersion, bool) {
	sk, ok := s.Skill(name)
	if !ok {
		return nil, nil, false
	}
	if version == LatestAlias {
		return sk, sk.Latest, true
	}
	v, ok := sk.Version(version)
	return sk, v, ok
}

// LatestAlias names the latest version in read API paths; no version may
// be called that.
const LatestAlias = "latest"

func (s *Snapshot) apiAgent(name string) (apiItem, bool) {
	a, ok := s.Agent(name)
	if !ok {
		return apiItem{}, false
	}
	d := apiItem{Name: a.Name, Description: a.Latest.Description, LatestVersion: a.Latest.Version}
	for _, v := range a.Versions {
		d.Versions = append(d.Versions, apiVersionLink{Version: v.Version, Type: "agent-md", Digest: v.Digest.String(),
			PublishedAt: v.PublishedAt.Format(time.RFC3339), Href: APISubagentsRoot + "/" + a.Name + "/" + v.Version})
	}
	return d, true
}

func (s *Snapshot) apiAgentVersion(base, name, version string) (apiVersion, bool) {
	a, ok := s.Agent(name)
	if !ok {
		return apiVersion{}, false
	}
	v := a.Latest
	if version != LatestAlias {
		if v, ok = a.Version(version); !ok {
			return apiVersion{}, false
		}
	}
	return apiVersion{Name: v.Name, Version: v.Version, Type: "agent-md", Description: v.Description,
		Digest: v.Digest.String(), URL: AgentURL(base, v), PublishedAt: v.PublishedAt.Format(time.RFC3339),
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
func (s *Snapshot) CheckUpdate(name, current string, digest content.Digest) UpdateCheck {
	c := UpdateCheck{Name: name, CurrentVersion: current, CurrentDigest: string(digest)}
	sk, ok := s.Skill(name)
	if !ok {
		return c
	}
	latest := sk.Latest
	c.Known, c.LatestVersion, c.LatestDigest = true, latest.Version, latest.Digest().String()
	lk, ck := parseVersionKey(latest.Version), parseVersionKey(current)
	switch cmp := comparePrecedence(lk, ck); {
	case cmp != 0:
		c.HasUpdate = cmp > 0
	case digest != "":
		c.HasUpdate = digest != latest.Digest()
	case lk.sv != nil && ck.sv != nil:
		// Spellings of one version (1.0, v1.0.0) are not an update;
		// build metadata is what tells undeclared versions
		// (0.0.0+<digest prefix>) apart, so a different one is.
		c.HasUpdate = lk.sv.Metadata() != ck.sv.Metadata()
	default:
		c.HasUpdate = current != latest.Version
	}
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
	Streaming      bool `json:"streaming"`
	Conversational bool `json:"conversational"`
	DirectAPI      bool `json:"direct_api"`
}

type cardSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

func (s *Snapshot) agentCard(base string) agentCard {
	info := s.server
	if info.Name == "" {
		info.Name = "skillserver"
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Description == "" {
		info.Description = "Publishes agent skills and sub-agents."
	}
	c := agentCard{
		Name: info.Name, Version: info.Version, Description: info.Description, URL: base + "/",
		ProtocolVersion: "0.3.0", DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/markdown"},
		Capabilities: cardCapabilities{DirectAPI: true}, Skills: make([]cardSkill, 0, len(s.Skills)),
	}
	for _, sk := range s.Skills {
		v := sk.Latest
		c.Skills = append(c.Skills, cardSkill{
			ID: strings.ReplaceAll(sk.Name, "-", "_"), Name: titleCase(sk.Name), Description: v.Description,
			Tags: v.list("tags"), Examples: v.list("examples"),
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

func (s *Snapshot) legacyIndex() legacyIndex {
	idx := legacyIndex{Skills: make([]legacySkill, 0, len(s.Skills))}
	for _, sk := range s.Skills {
		files := []string{skillFile}
		for _, r := range sk.Latest.Resources {
			files = append(files, r.Path)
		}
		idx.Skills = append(idx.Skills, legacySkill{Name: sk.Name, Description: sk.Latest.Description, Files: files})
	}
	return idx
}

// scopedIndex is the RFC index holding one skill, so a client given
// https://host/skill/<name> installs exactly it.
func (s *Snapshot) scopedIndex(base, name string) (rfcIndex, bool) {
	sk, ok := s.Skill(name)
	if !ok {
		return rfcIndex{}, false
	}
	return rfcIndex{Schema: RFCSchema, Skills: []rfcEntry{rfcEntryOf(base, sk.Latest, true)}}, true
}

package feed

import (
	"time"

	"github.com/skillserver/skillserver/internal/item"
)

// The AI catalogue of Agentic Resource Discovery (ARD v0.9 and the AI
// Catalog it builds on; docs/http-api.md, "AI catalogue"): one entry for
// each skill, each sub-agent and the A2A agent card, with absolute
// content-addressed URLs, rendered like every base-dependent document.

// AI catalogue format facts.
const (
	// AICatalogContentType is the AI Catalog's media type.
	AICatalogContentType = "application/ai-catalog+json"
	// AICatalogSpecVersion is the catalogue format ARD v0.9 defines.
	AICatalogSpecVersion = "1.0"

	// Entry types. ARD's examples name application/ai-skill and
	// application/ai-skill+md without defining them: the +md suffix is
	// for a skill that is its Markdown file, a lone SKILL.md; a skill
	// with resources is its archive, the type without a suffix. ARD
	// defines no type for a sub-agent: its bytes are Markdown.
	aiTypeSkillArchive = "application/ai-skill"
	aiTypeSkillMD      = "application/ai-skill+md"
	aiTypeSubagent     = "text/markdown"
	aiTypeAgentCard    = "application/a2a-agent-card+json"
)

type aiCatalog struct {
	SpecVersion string    `json:"specVersion"`
	Host        aiHost    `json:"host"`
	Entries     []aiEntry `json:"entries"`
}

type aiHost struct {
	DisplayName string `json:"displayName"`
	Identifier  string `json:"identifier"`
}

type aiEntry struct {
	Identifier            string   `json:"identifier"`
	DisplayName           string   `json:"displayName"`
	Type                  string   `json:"type"`
	URL                   string   `json:"url"`
	Description           string   `json:"description,omitempty"`
	Tags                  []string `json:"tags,omitempty"`
	RepresentativeQueries []string `json:"representativeQueries,omitempty"`
	Version               string   `json:"version,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
}

// aiIdentifier is the urn:air identifier of an item of kind ("skills",
// "subagents", "agent") named name.
func (f *Feed) aiIdentifier(kind, name string) string {
	return "urn:air:" + f.server.publisher() + ":" + kind + ":" + name
}

func (f *Feed) aiCatalog(base string) aiCatalog {
	card := f.cardInfo()
	c := aiCatalog{SpecVersion: AICatalogSpecVersion,
		Host:    aiHost{DisplayName: card.Name, Identifier: f.server.publisher()},
		Entries: make([]aiEntry, 0, 1+len(f.Skills)+len(f.Agents))}
	c.Entries = append(c.Entries, aiEntry{Identifier: f.aiIdentifier("agent", card.Name), DisplayName: card.Name,
		Type: aiTypeAgentCard, URL: base + docPaths[DocAgentCard][0], Description: card.Description, Version: card.Version})
	for _, sk := range f.Skills {
		v := sk.Latest
		typ := aiTypeSkillMD
		if v.Type == item.TypeArchive {
			typ = aiTypeSkillArchive
		}
		c.Entries = append(c.Entries, aiEntry{Identifier: f.aiIdentifier("skills", sk.Name), DisplayName: titleCase(sk.Name),
			Type: typ, URL: ArtifactURL(base, v), Description: v.Description, Tags: v.List("tags"),
			RepresentativeQueries: representativeQueries(v.List("examples")), Version: v.Version,
			UpdatedAt: f.SkillPublished(&v.VersionInfo).UTC().Format(time.RFC3339)})
	}
	for _, a := range f.Agents {
		v := a.Latest
		c.Entries = append(c.Entries, aiEntry{Identifier: f.aiIdentifier("subagents", a.Name), DisplayName: titleCase(a.Name),
			Type: aiTypeSubagent, URL: AgentURL(base, v), Description: v.Description, Tags: v.List("tags"),
			RepresentativeQueries: representativeQueries(v.List("examples")), Version: v.Version,
			UpdatedAt: f.AgentPublished(&v.VersionInfo).UTC().Format(time.RFC3339)})
	}
	return c
}

// representativeQueries are a skill's examples as ARD takes them: 2 to 5,
// the first five of more, none of fewer than two.
func representativeQueries(examples []string) []string {
	if len(examples) < 2 {
		return nil
	}
	return examples[:min(len(examples), 5)]
}

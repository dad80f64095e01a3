package feed

import "github.com/skillserver/skillserver/internal/item"

// The RFC discovery index (docs/http-api.md, "RFC discovery feed"): the
// document RFC clients install from, and the entries the one-skill
// indexes are made of.

// RFCSchema is the RFC discovery index's $schema; clients compare it byte
// for byte.
const RFCSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

type rfcIndex struct {
	Schema string     `json:"$schema"`
	Skills []rfcEntry `json:"skills"`
}

type rfcEntry struct {
	Name        string            `json:"name"`
	Type        item.ArtifactType `json:"type"`
	Description string            `json:"description"`
	URL         string            `json:"url"`
	Digest      string            `json:"digest"`
	Version     string            `json:"version"`
	Resources   []rfcResource     `json:"resources,omitempty"`
}

type rfcResource struct {
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	URL      string `json:"url"`
	UnixMode uint32 `json:"unixMode,omitempty"`
}

func (f *Feed) rfcIndex(base string) rfcIndex {
	idx := rfcIndex{Schema: RFCSchema, Skills: make([]rfcEntry, 0, len(f.Skills))}
	for _, sk := range f.Skills {
		idx.Skills = append(idx.Skills, rfcEntryOf(base, sk.Latest, true))
	}
	return idx
}

func rfcEntryOf(base string, v *item.SkillVersion, withResources bool) rfcEntry {
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
			rr := rfcResource{Path: r.Path, Digest: r.Digest.String(), URL: ResourceURL(base, r)}
			if r.Mode != 0o644 {
				rr.UnixMode = r.Mode
			}
			e.Resources = append(e.Resources, rr)
		}
	}
	return e
}

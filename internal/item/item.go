// Package item owns the domain model: a published skill or sub-agent,
// its versions, their resources, and the order of versions (which one is
// latest, which two strings name the same version).
//
// It must not import the scan, catalog, feed or HTTP packages; they all
// build on it. Below it are only internal/skill (problems) and
// internal/content (digests).
package item

import (
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// ArtifactType says how a skill version is downloaded.
type ArtifactType string

// Artifact types; nothing else is ever published.
const (
	TypeSkillMD ArtifactType = "skill-md" // a lone SKILL.md
	TypeArchive ArtifactType = "archive"  // SKILL.md plus resources, as one zip
)

// Skill is every published version of one skill.
type Skill struct {
	Name     string
	Versions []*SkillVersion // newest first
	Latest   *SkillVersion
	byVer    map[string]*SkillVersion
}

// Version returns the named version of s.
func (s *Skill) Version(v string) (*SkillVersion, bool) {
	sv, ok := s.byVer[v]
	return sv, ok
}

// SkillVersion is one immutable, validated version of a skill.
type SkillVersion struct {
	Name        string
	Version     string
	Declared    bool // the version string came from the tree, not the digest
	Description string
	Type        ArtifactType
	SkillMD     content.Digest
	Archive     content.Digest // empty for TypeSkillMD
	Resources   []Resource     // sorted by path; excludes SKILL.md
	Metadata    map[string]string
	// MetadataLists holds the metadata values that were YAML lists.
	MetadataLists map[string][]string
	// Subagent is metadata.subagent when it is a valid name: the sub-agent
	// this skill routes to (routesToSubagent in the native tree).
	Subagent    string
	PublishedAt time.Time // UTC, whole seconds
	Source      string    // folder the version was read from, for reports
	Generation  uint64    // snapshot generation that read it from disk
	resByPath   map[string]*Resource
}

// Digest is the digest of the version's artifact: the archive when it has
// resources, else the SKILL.md.
func (v *SkillVersion) Digest() content.Digest {
	if v.Type == TypeArchive {
		return v.Archive
	}
	return v.SkillMD
}

// Blobs lists the digests of every blob v serves: its SKILL.md, its
// archive and its resources.
func (v *SkillVersion) Blobs() []content.Digest {
	out := make([]content.Digest, 0, 2+len(v.Resources))
	out = append(out, v.SkillMD)
	if v.Type == TypeArchive {
		out = append(out, v.Archive)
	}
	for _, r := range v.Resources {
		out = append(out, r.Digest)
	}
	return out
}

// Resource returns the resource file at slash path p.
func (v *SkillVersion) Resource(p string) (*Resource, bool) {
	r, ok := v.resByPath[p]
	return r, ok
}

// Resource is one non-SKILL.md file of a skill version.
type Resource struct {
	Path   string // relative, slash-separated
	Digest content.Digest
	Size   int64
	Mode   uint32 // 0644 or 0755, as recorded in the archive
}

// Agent is every published version of one sub-agent.
type Agent struct {
	Name     string
	Versions []*AgentVersion // newest first
	Latest   *AgentVersion
	byVer    map[string]*AgentVersion
}

// Version returns the named version of a.
func (a *Agent) Version(v string) (*AgentVersion, bool) {
	av, ok := a.byVer[v]
	return av, ok
}

// AgentVersion is one immutable, validated agent-md file.
type AgentVersion struct {
	Name          string
	Version       string
	Declared      bool
	Description   string
	Digest        content.Digest
	Metadata      map[string]string
	MetadataLists map[string][]string
	PublishedAt   time.Time
	Source        string
	Generation    uint64 // snapshot generation that read it from disk
}

// Blobs lists the digest of the one blob v serves.
func (v *AgentVersion) Blobs() []content.Digest { return []content.Digest{v.Digest} }

// List reads the metadata value key as a list: a YAML list as it was
// written, else a string split at commas ("a, b").
func (v *SkillVersion) List(key string) []string { return metaList(v.Metadata, v.MetadataLists, key) }

// List reads the metadata value key as a list (see SkillVersion.List).
func (v *AgentVersion) List(key string) []string { return metaList(v.Metadata, v.MetadataLists, key) }

func metaList(meta map[string]string, lists map[string][]string, key string) []string {
	if l, ok := lists[key]; ok {
		return l
	}
	return skill.ListItems(meta[key])
}

// NewSkill orders versions newest first and picks the latest.
func NewSkill(name string, versions []*SkillVersion) *Skill {
	latest := OrderVersions(versions, func(v *SkillVersion) string { return v.Version })
	sk := &Skill{Name: name, Versions: versions, Latest: latest, byVer: make(map[string]*SkillVersion, len(versions))}
	for _, v := range versions {
		sk.byVer[v.Version] = v
	}
	return sk
}

// NewAgent orders versions newest first and picks the latest.
func NewAgent(name string, versions []*AgentVersion) *Agent {
	latest := OrderVersions(versions, func(v *AgentVersion) string { return v.Version })
	a := &Agent{Name: name, Versions: versions, Latest: latest, byVer: make(map[string]*AgentVersion, len(versions))}
	for _, v := range versions {
		a.byVer[v.Version] = v
	}
	return a
}

// IndexResources makes v.Resource find v.Resources; call it once they
// are final.
func (v *SkillVersion) IndexResources() {
	v.resByPath = make(map[string]*Resource, len(v.Resources))
	for i := range v.Resources {
		v.resByPath[v.Resources[i].Path] = &v.Resources[i]
	}
}

// LatestAlias names the latest version in read API paths; no version may
// be called that.
const LatestAlias = "latest"

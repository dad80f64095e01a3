package catalog

import (
	"time"

	"github.com/skillserver/skillserver/internal/content"
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

func newAgent(name string, versions []*AgentVersion) *Agent {
	latest := orderVersions(versions, func(v *AgentVersion) string { return v.Version })
	a := &Agent{Name: name, Versions: versions, Latest: latest, byVer: make(map[string]*AgentVersion, len(versions))}
	for _, v := range versions {
		a.byVer[v.Version] = v
	}
	return a
}

func (s *Skill) name() string { return s.Name }
func (a *Agent) name() string { return a.Name }

// item returns the entry's skill; nil for a missing entry too.
func (e *skillEntry) item() *Skill {
	if e == nil {
		return nil
	}
	return e.skill
}

// item returns the entry's agent; nil for a missing entry too.
func (e *agentEntry) item() *Agent {
	if e == nil {
		return nil
	}
	return e.agent
}

// Package item owns the domain model: a published skill or sub-agent,
// its versions, their resources, and the order of versions (which one is
// latest, which two strings name the same version).
//
// It must not import the scan, catalog, feed or HTTP packages; they all
// build on it. Below it are only internal/skill (problems) and
// internal/content (digests).
package item

import (
	"slices"
	"strings"
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

// Item is every published version of one skill or sub-agent.
type Item[V Version] struct {
	Name     string
	Versions []V // newest first
	Latest   V
	byVer    map[string]V // by version, for an item of more than versionsScanned
}

// Skill and Agent are the two kinds of item.
type (
	Skill = Item[*SkillVersion]
	Agent = Item[*AgentVersion]
)

// Version returns the named version of it.
func (it *Item[V]) Version(v string) (V, bool) {
	if it.byVer != nil {
		iv, ok := it.byVer[v]
		return iv, ok
	}
	for _, iv := range it.Versions {
		if iv.Info().Version == v {
			return iv, true
		}
	}
	var none V
	return none, false
}

// versionsScanned is how many versions an item looks through for one by
// name, rather than keeping a map of them: most items have one or two,
// and a map costs several hundred bytes for every item published.
const versionsScanned = 8

// New orders versions newest first, picks the latest and returns the item.
func New[V Version](name string, versions []V) *Item[V] {
	latest := OrderVersions(versions, func(v V) string { return v.Info().Version })
	it := &Item[V]{Name: name, Versions: versions, Latest: latest}
	if len(versions) > versionsScanned {
		it.byVer = make(map[string]V, len(versions))
		for _, v := range versions {
			it.byVer[v.Info().Version] = v
		}
	}
	return it
}

// Version is a version of either kind: what the rules shared by skills
// and sub-agents (order, last good, fingerprint, the feeds) need of it.
type Version interface {
	*SkillVersion | *AgentVersion
	Info() *VersionInfo
	// ArtifactDigest is the digest of what a client downloads.
	ArtifactDigest() content.Digest
	// Blobs lists the digests of every blob the version serves.
	Blobs() []content.Digest
	// AppendStrings appends the version's own strings to refs (see
	// PackStrings).
	AppendStrings(refs []*string) []*string
}

// VersionInfo is what every version has, of a skill or a sub-agent.
type VersionInfo struct {
	Name        string
	Version     string
	Declared    bool // the version string came from the tree, not the digest
	Description string
	Metadata    skill.Meta
	PublishedAt time.Time // UTC, whole seconds
	// PublishedDeclared is true when PublishedAt came from
	// metadata.published rather than the files' modification times.
	PublishedDeclared bool
	// Path is the version's folder (a skill) or file (a sub-agent)
	// relative to its root, with forward slashes; problems name it as
	// scan.Report does.
	Path       string
	Generation uint64 // snapshot generation that read it from disk
}

// Info returns v itself, for code that serves both kinds of version.
func (v *VersionInfo) Info() *VersionInfo { return v }

// AppendStrings appends what the version's front matter and folder gave
// it: the version, the description, the path and the metadata.
func (v *VersionInfo) AppendStrings(refs []*string) []*string {
	refs = append(refs, &v.Version, &v.Description, &v.Path)
	for i := range v.Metadata {
		e := &v.Metadata[i]
		refs = append(refs, &e.Key, &e.Value)
		for j := range e.List {
			refs = append(refs, &e.List[j])
		}
	}
	return refs
}

// PackStrings copies the strings refs point to into one allocation and
// points each there. A scan makes a version's strings one at a time,
// among the YAML parser's nodes and the listings' names it drops at once
// and in the same size classes; kept there, a few strings pin spans of
// free slots the runtime can neither reuse for anything else nor give
// back. Packed after the scan, the strings of all the versions it built
// are one block, and those spans empty.
func PackStrings(refs []*string) {
	n := 0
	for _, r := range refs {
		n += len(*r)
	}
	var b strings.Builder
	b.Grow(n)
	for _, r := range refs {
		b.WriteString(*r)
	}
	block := b.String()
	for _, r := range refs {
		*r, block = block[:len(*r)], block[len(*r):]
	}
}

// List reads the metadata value key as a list: a YAML list as it was
// written, else a string split at commas ("a, b").
func (v *VersionInfo) List(key string) []string {
	if l, ok := v.Metadata.Items(key); ok {
		return l
	}
	s, _ := v.Metadata.Get(key)
	return skill.ListItems(s)
}

// SkillVersion is one immutable, validated version of a skill.
type SkillVersion struct {
	VersionInfo
	Type    ArtifactType
	SkillMD content.Digest
	// SkillMDSize is the length of the SKILL.md in bytes.
	SkillMDSize int64
	Archive     content.Digest // empty for TypeSkillMD
	Resources   []Resource     // sorted by path (strings.Compare: Resource searches them); excludes SKILL.md
	// Subagent is metadata.subagent when it is a valid name: the sub-agent
	// this skill routes to (routesToSubagent in the native tree).
	Subagent string
}

// Digest is the digest of the version's artifact: the archive when it has
// resources, else the SKILL.md.
func (v *SkillVersion) Digest() content.Digest {
	if v.Type == TypeArchive {
		return v.Archive
	}
	return v.SkillMD
}

// ArtifactDigest is Digest.
func (v *SkillVersion) ArtifactDigest() content.Digest { return v.Digest() }

// AppendStrings is VersionInfo.AppendStrings with the resource paths.
func (v *SkillVersion) AppendStrings(refs []*string) []*string {
	refs = v.VersionInfo.AppendStrings(refs)
	for i := range v.Resources {
		refs = append(refs, &v.Resources[i].Path)
	}
	return refs
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

// Files lists every file of v: its SKILL.md first, then its resources
// by path.
func (v *SkillVersion) Files() []Resource {
	out := make([]Resource, 0, 1+len(v.Resources))
	out = append(out, Resource{Path: skill.FileName, Digest: v.SkillMD, Size: v.SkillMDSize, Mode: 0o644})
	return append(out, v.Resources...)
}

// Resource returns the resource file at slash path p.
func (v *SkillVersion) Resource(p string) (*Resource, bool) {
	i, ok := slices.BinarySearchFunc(v.Resources, p, func(r Resource, p string) int { return strings.Compare(r.Path, p) })
	if !ok {
		return nil, false
	}
	return &v.Resources[i], true
}

// Resource is one non-SKILL.md file of a skill version.
type Resource struct {
	Path   string // relative, slash-separated
	Digest content.Digest
	Size   int64
	Mode   uint32 // 0644 or 0755, as recorded in the archive
}

// AgentVersion is one immutable, validated agent-md file.
type AgentVersion struct {
	VersionInfo
	Digest content.Digest
}

// ArtifactDigest is the digest of the agent-md file.
func (v *AgentVersion) ArtifactDigest() content.Digest { return v.Digest }

// Blobs lists the digest of the one blob v serves.
func (v *AgentVersion) Blobs() []content.Digest { return []content.Digest{v.Digest} }

// LatestAlias names the latest version in read API paths; no version may
// be called that.
const LatestAlias = "latest"

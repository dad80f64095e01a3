package feed

import (
	"slices"
	"strings"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// ArtifactFiles lists every file of every version the view holds, each
// once, sorted by path: the artifact of each skill version (archive.zip,
// or SKILL.md for a lone SKILL.md), the SKILL.md and the resources of
// archive versions and
// the agent.md of each sub-agent version. Every artifact URL a document
// of the view advertises is the path of one of them.
func (f *Feed) ArtifactFiles() []ArtifactFile { return f.artifactFiles().list }

// ArtifactFile returns the file published at ArtifactPath(d, name), if the
// view has one.
func (f *Feed) ArtifactFile(d content.Digest, name string) (ArtifactFile, bool) {
	files := f.artifactFiles()
	i, ok := files.byFile[artifactKey{d, name}]
	if !ok {
		return ArtifactFile{}, false
	}
	return files.list[i], true
}

func (f *Feed) artifactFiles() *artifactFiles {
	f.filesOnce.Do(func() {
		type entry struct {
			path string
			file ArtifactFile
		}
		seen := map[artifactKey]bool{}
		var entries []entry
		add := func(af ArtifactFile) {
			if k := (artifactKey{af.Digest, af.Name}); !seen[k] {
				seen[k] = true
				entries = append(entries, entry{af.Path(), af})
			}
		}
		for _, sk := range f.Skills {
			for _, v := range sk.Versions {
				if v.Type == item.TypeArchive {
					add(ArtifactFile{Digest: v.Archive, Name: ArchiveFile, Install: sk.Name})
					// The archive's SKILL.md, which the pages link to
					// (SkillMDURL).
					add(ArtifactFile{Digest: v.SkillMD, Name: skill.FileName})
				} else {
					add(ArtifactFile{Digest: v.SkillMD, Name: skill.FileName, Install: sk.Name})
				}
				for _, r := range v.Resources {
					add(ArtifactFile{Digest: r.Digest, Name: r.Path})
				}
			}
		}
		for _, a := range f.Agents {
			for _, v := range a.Versions {
				add(ArtifactFile{Digest: v.Digest, Name: AgentFile})
			}
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.path, b.path) })
		f.files.list, f.files.byFile = make([]ArtifactFile, len(entries)), make(map[artifactKey]int, len(entries))
		for i, e := range entries {
			f.files.list[i] = e.file
			f.files.byFile[artifactKey{e.file.Digest, e.file.Name}] = i
		}
	})
	return &f.files
}

// A LatestFile is a file of a skill's latest version at a path that
// follows the latest version, not its bytes: the RFC's
// /.well-known/agent-skills/{name}/SKILL.md and the legacy v0.1 layout's
// /.well-known/skills/{name}/{file}. Like the indexes, what such a path
// answers changes with the tree.
type LatestFile struct {
	Path   string // escaped URL path
	Name   string // SKILL.md or a resource's slash path
	Digest content.Digest
}

// LatestFiles lists the latest-version files of every skill of the view,
// sorted by path.
func (f *Feed) LatestFiles() []LatestFile {
	var out []LatestFile
	for _, sk := range f.Skills {
		v := sk.Latest
		out = append(out, LatestFile{Path: Href(PathLatestSkillMD, sk.Name), Name: skill.FileName, Digest: v.SkillMD},
			LatestFile{Path: Href(PathLegacyFile, sk.Name, skill.FileName), Name: skill.FileName, Digest: v.SkillMD})
		for _, r := range v.Resources {
			out = append(out, LatestFile{Path: Href(PathLegacyFile, sk.Name, r.Path), Name: r.Path, Digest: r.Digest})
		}
	}
	slices.SortFunc(out, func(a, b LatestFile) int { return strings.Compare(a.Path, b.Path) })
	return out
}

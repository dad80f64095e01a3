package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

const skillFile = "SKILL.md"

// reservedPaths are resource paths that would shadow an artifact route.
var reservedPaths = map[string]bool{"archive.zip": true}

// textExts are resources clients require to be strict UTF-8 (netclaw
// rejects an archive whose text files are not).
var textExts = map[string]bool{
	".md": true, ".markdown": true, ".txt": true, ".json": true, ".yaml": true,
	".yml": true, ".toml": true, ".csv": true, ".sh": true, ".py": true,
	".js": true, ".mjs": true, ".ts": true, ".html": true, ".css": true, ".xml": true,
}

// skillScanner turns a skills root into validated skills.
type skillScanner struct {
	t      *treeRoot
	lim    Limits
	blobs  *content.Builder
	probs  []skill.Problem
	skills []*Skill
}

func (s *skillScanner) problem(p skill.Problem) { s.probs = append(s.probs, p) }

func (s *skillScanner) scan(ctx context.Context) error {
	entries, err := fs.ReadDir(s.t.fsys, ".")
	if err != nil {
		return fmt.Errorf("read skills root %s: %w", s.t.display, err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if isHidden(name) {
			continue
		}
		info, err := s.t.stat(name)
		if err != nil {
			s.problem(skill.Errorf(s.t.report(name), skill.RuleSymlink, "%s", symlinkProblem(err)))
			continue
		}
		if !info.IsDir() {
			continue // README.md and friends beside the skills
		}
		if !skill.ValidName(name) {
			s.problem(skill.Errorf(s.t.report(name), skill.RuleName, "skill folder %q is not a valid skill name (1-%d lowercase letters, digits and single hyphens); rename the folder", name, skill.MaxNameLen))
			continue
		}
		if sk := s.scanSkill(name); sk != nil {
			s.skills = append(s.skills, sk)
		}
	}
	return nil
}

// scanSkill reads one skill folder, flat or versioned.
func (s *skillScanner) scanSkill(name string) *Skill {
	if isRegularFile(s.t, path.Join(name, skillFile)) {
		v := s.scanVersion(name, name, "")
		if v == nil {
			return nil
		}
		return newSkill(name, []*SkillVersion{v})
	}
	entries, err := fs.ReadDir(s.t.fsys, name)
	if err != nil {
		s.problem(skill.Errorf(s.t.report(name), skill.RuleRead, "cannot list folder: %s", describeErr(err)))
		return nil
	}
	var versions []*SkillVersion
	var ignored []skill.Problem
	found := false
	for _, e := range entries {
		child := path.Join(name, e.Name())
		if isHidden(e.Name()) {
			continue
		}
		info, err := s.t.stat(child)
		if err != nil {
			s.problem(skill.Errorf(s.t.report(child), skill.RuleSymlink, "%s", symlinkProblem(err)))
			continue
		}
		if !info.IsDir() || !isRegularFile(s.t, path.Join(child, skillFile)) {
			ignored = append(ignored, skill.Warnf(s.t.report(child), skill.RuleLayout, "ignored: a versioned skill folder holds only version folders, each with a SKILL.md"))
			continue
		}
		found = true
		if !skill.ValidVersion(e.Name()) {
			s.problem(skill.Errorf(s.t.report(child), skill.RuleVersion, "version folder %q must be 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0)", e.Name(), skill.MaxVersionLen))
			continue
		}
		if v := s.scanVersion(name, child, e.Name()); v != nil {
			versions = append(versions, v)
		}
	}
	if found {
		s.probs = append(s.probs, ignored...)
	} else {
		s.problem(skill.Errorf(s.t.report(name), skill.RuleLayout, "no SKILL.md: put one in the folder (flat) or in each version folder such as %s/1.0.0/SKILL.md", name))
	}
	if len(versions) == 0 {
		return nil
	}
	return newSkill(name, versions)
}

func isRegularFile(t *treeRoot, p string) bool {
	info, err := t.stat(p)
	return err == nil && info.Mode().IsRegular()
}

// scanVersion validates and stores one version folder. folderVersion is the
// version folder's name, or "" for a flat skill.
func (s *skillScanner) scanVersion(name, dir, folderVersion string) *SkillVersion {
	files, ps := s.t.listFiles(dir, s.lim)
	mdPath := s.t.report(path.Join(dir, skillFile))

	data := make(map[string][]byte, len(files))
	if !skill.HasError(ps) {
		for _, f := range files {
			b, err := fs.ReadFile(s.t.fsys, f.full)
			if err != nil {
				ps = append(ps, skill.Errorf(s.t.report(f.full), skill.RuleRead, "cannot read: %s", describeErr(err)))
				continue
			}
			data[f.rel] = b
		}
	}
	md, haveMD := data[skillFile]
	var sk skill.Skill
	if haveMD {
		var mdProbs []skill.Problem
		sk, mdProbs = skill.ParseSkill(mdPath, name, md)
		ps = append(ps, mdProbs...)
	}
	if folderVersion != "" && sk.Version != "" && sk.Version != folderVersion {
		ps = append(ps, skill.Errorf(mdPath, skill.RuleVersion, "declared version %q must equal its folder name %q; fix one of them", sk.Version, folderVersion))
	}
	ps = append(ps, s.checkResources(dir, files, data)...)
	s.probs = append(s.probs, ps...)
	if skill.HasError(ps) || !haveMD {
		return nil
	}

	v := &SkillVersion{
		Name:        name,
		Description: sk.Description,
		Metadata:    sk.Metadata,
		Source:      s.t.report(dir),
		SkillMD:     s.blobs.Put(md),
		Type:        TypeSkillMD,
	}
	var newest time.Time
	archive := make([]content.ArchiveFile, 0, len(files))
	for _, f := range files {
		if f.modTime.After(newest) {
			newest = f.modTime
		}
		exec := f.mode&0o111 != 0
		archive = append(archive, content.ArchiveFile{Path: f.rel, Data: data[f.rel], Executable: exec})
		if f.rel == skillFile {
			continue
		}
		mode := uint32(0o644)
		if exec {
			mode = 0o755
		}
		v.Resources = append(v.Resources, Resource{Path: f.rel, Digest: s.blobs.Put(data[f.rel]), Size: f.size, Mode: mode})
	}
	if len(v.Resources) > 0 {
		zipped, err := content.BuildZip(archive)
		if err != nil {
			s.problem(skill.Errorf(s.t.report(dir), skill.RuleRead, "cannot build archive: %s", err))
			return nil
		}
		v.Type = TypeArchive
		v.Archive = s.blobs.Put(zipped)
	}
	v.resByPath = make(map[string]*Resource, len(v.Resources))
	for i := range v.Resources {
		v.resByPath[v.Resources[i].Path] = &v.Resources[i]
	}

	switch {
	case folderVersion != "":
		v.Version, v.Declared = folderVersion, true
	case sk.Version != "":
		v.Version, v.Declared = sk.Version, true
	default:
		v.Version = "0.0.0+" + v.Digest().Hex()[:12]
	}
	if sub, ok := sk.Metadata["subagent"]; ok {
		if skill.ValidName(sub) {
			v.Subagent = sub
		} else {
			s.problem(skill.Warnf(mdPath, skill.RuleMetadata, "metadata.subagent %q is not a valid sub-agent name; routesToSubagent is omitted", sub))
		}
	}
	v.PublishedAt = newest.UTC().Truncate(time.Second)
	if p, ok := sk.Metadata["published"]; ok {
		t, err := time.Parse(time.RFC3339, p)
		if err != nil {
			s.problem(skill.Warnf(mdPath, skill.RuleMetadata, "metadata.published %q is not an RFC 3339 time such as 2026-11-29T10:00:00Z; using the files' modification time", p))
		} else {
			v.PublishedAt = t.UTC().Truncate(time.Second)
		}
	}
	return v
}

// checkResources applies the rules every client needs of an archive's
// paths and text files.
func (s *skillScanner) checkResources(dir string, files []file, data map[string][]byte) []skill.Problem {
	var ps []skill.Problem
	seen := make(map[string]string, len(files))
	for _, f := range files {
		report := s.t.report(f.full)
		folded := strings.ToLower(f.rel)
		if other, dup := seen[folded]; dup {
			ps = append(ps, skill.Errorf(report, skill.RuleResourcePath, "path differs from %q only in letter case; clients on case-insensitive filesystems cannot hold both; rename one", other))
		}
		seen[folded] = f.rel
		if reservedPaths[f.rel] {
			ps = append(ps, skill.Errorf(report, skill.RuleResourcePath, "%q is reserved for the version's archive; move the file into a subfolder", f.rel))
		}
		if f.rel != skillFile && textExts[strings.ToLower(path.Ext(f.rel))] {
			if b, ok := data[f.rel]; ok && !utf8.Valid(b) {
				ps = append(ps, skill.Errorf(report, skill.RuleEncoding, "text file is not valid UTF-8; clients reject the archive; save it as UTF-8"))
			}
		}
	}
	return ps
}

// newSkill orders versions newest first and picks the latest.
func newSkill(name string, versions []*SkillVersion) *Skill {
	latest := orderVersions(versions, func(v *SkillVersion) string { return v.Version })
	sk := &Skill{Name: name, Versions: versions, Latest: latest, byVer: make(map[string]*SkillVersion, len(versions))}
	for _, v := range versions {
		sk.byVer[v.Version] = v
	}
	return sk
}

package scan

import (
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// reservedPaths are resource paths that would shadow an artifact route.
var reservedPaths = map[string]bool{"archive.zip": true, "resources": true}

// textExts are resources clients require to be strict UTF-8 (netclaw
// rejects an archive whose text files are not).
var textExts = map[string]bool{
	".md": true, ".markdown": true, ".txt": true, ".json": true, ".yaml": true,
	".yml": true, ".toml": true, ".csv": true, ".sh": true, ".py": true,
	".js": true, ".mjs": true, ".ts": true, ".html": true, ".css": true, ".xml": true,
}

// skillScanner scans one top-level entry of the skills root.
type skillScanner struct {
	entryScanner[*item.SkillVersion]
}

// scanSkillEntry scans one skill folder (job.claims holds it, or nothing
// when it is gone) into an entry, or nil when there is nothing to keep.
func scanSkillEntry(base scanBase, last map[string]*SkillEntry, job entryJob) *SkillEntry {
	s := &skillScanner{newEntryScanner[*item.SkillVersion](base)}
	if claims := s.t.lookupClaims(job); len(claims) > 0 {
		s.cur.Item = s.scanEntry(claims[0])
	}
	return s.finish(last, job.key)
}

// scanEntry reads one top-level entry of the skills root.
func (s *skillScanner) scanEntry(e entry) *item.Skill {
	name := e.name
	s.cur.Linked = s.cur.Linked || e.st.isSymlink()
	st, err := s.t.resolve(s.t.top, e)
	if err != nil {
		s.problem(s.t.resolveProblem(s.t.top, e, err))
		return nil
	}
	if !st.isDir() {
		if !st.isRegular() {
			s.problem(fileTypeProblem(s.t.report(name), st.mode))
		}
		return nil // README.md and friends beside the skills
	}
	if !skill.ValidName(name) {
		s.problem(skill.Errorf(s.t.report(name), skill.RuleName, "skill folder %q is not a valid skill name (1-%d lowercase letters, digits and single hyphens); rename the folder", name, skill.MaxNameLen))
		return nil
	}
	d, entries, ok := s.openFolder(s.t.top, e)
	if !ok {
		return nil
	}
	defer d.close()
	return s.scanSkill(name, d, st, entries)
}

// openFolder opens and lists the folder e of d; a failure is a problem.
func (s *skillScanner) openFolder(d *dir, e entry) (*dir, []entry, bool) {
	sub, entries, p := s.t.openFolder(d, e)
	if p != nil {
		s.problem(*p)
	}
	return sub, entries, p == nil
}

// scanSkill reads one skill folder d (whose stat is st), flat or
// versioned. Each folder is opened and listed once; the listing also
// tells where SKILL.md files are.
func (s *skillScanner) scanSkill(name string, d *dir, st stat, entries []entry) *item.Skill {
	if e, found, p := s.t.findFile(d, entries, skill.FileName); found {
		s.cur.Linked = s.cur.Linked || e.st.isSymlink()
		if p != nil {
			s.problem(*p)
			return nil
		}
		v := s.scanVersion(name, d, st, entries, "")
		if v == nil {
			return nil
		}
		return item.New(name, []*item.SkillVersion{v})
	}
	// Version folders that may name the same version as another are
	// scanned only once it is known whether both are versions.
	var names []string
	for _, e := range entries {
		if skill.ValidVersion(e.name) {
			names = append(names, e.name)
		}
	}
	suspect := item.SameVersions(names)
	type version struct {
		e   entry
		vst stat
	}
	var versions []*item.SkillVersion
	var ignored []skill.Problem
	var deferred []version
	found := false
	for _, e := range entries {
		child := d.join(e.name)
		s.cur.Linked = s.cur.Linked || e.st.isSymlink()
		vst, err := s.t.resolve(d, e)
		if err != nil {
			s.problem(s.t.resolveProblem(d, e, err))
			continue
		}
		if !vst.isDir() {
			ignored = append(ignored, ignoredInVersioned(s.t.report(child)))
			continue
		}
		vd, ventries, ok := s.openFolder(d, e)
		if !ok {
			continue
		}
		md, hasMD, p := s.t.findFile(vd, ventries, skill.FileName)
		if !hasMD {
			vd.close()
			ignored = append(ignored, ignoredInVersioned(s.t.report(child)))
			continue
		}
		found = true
		s.cur.Linked = s.cur.Linked || md.st.isSymlink()
		switch {
		case p != nil:
			s.problem(*p)
		case !skill.ValidVersion(e.name):
			s.problem(skill.Errorf(s.t.report(child), skill.RuleVersion, "version folder %q must be 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0)", e.name, skill.MaxVersionLen))
		case suspect[e.name] != "":
			deferred = append(deferred, version{e, vst})
		default:
			if v := s.scanVersion(name, vd, vst, ventries, e.name); v != nil {
				versions = append(versions, v)
			}
		}
		vd.close()
	}
	names = names[:0]
	for _, v := range deferred {
		names = append(names, v.e.name)
	}
	same := item.SameVersions(names)
	for _, v := range deferred {
		if other := same[v.e.name]; other != "" {
			s.problem(item.SameVersionProblem(s.t.report(d.join(v.e.name)), v.e.name, other))
			continue
		}
		vd, ventries, ok := s.openFolder(d, v.e)
		if !ok {
			continue
		}
		if v := s.scanVersion(name, vd, v.vst, ventries, v.e.name); v != nil {
			versions = append(versions, v)
		}
		vd.close()
	}
	if found {
		s.cur.Problems = append(s.cur.Problems, ignored...)
	} else {
		s.problem(skill.Errorf(s.t.report(name), skill.RuleLayout, "no SKILL.md: put one in the folder (flat) or in each version folder such as %s/1.0.0/SKILL.md", name))
	}
	if len(versions) == 0 {
		return nil
	}
	return item.New(name, versions)
}

func collisionProblem(report, other string) skill.Problem {
	return skill.Errorf(report, skill.RuleResourcePath, "path collides with %q on case-insensitive or Unicode-normalising filesystems (macOS, Windows); clients cannot hold both; rename one", other)
}

func ignoredInVersioned(report string) skill.Problem {
	return skill.Warnf(report, skill.RuleLayout, "ignored: a versioned skill folder holds only version folders, each with a SKILL.md")
}

// scanVersion validates and stores one version folder d (whose stat is
// st, listed as entries). folderVersion is the version folder's name, or
// "" for a flat skill.
func (s *skillScanner) scanVersion(name string, d *dir, st stat, entries []entry, folderVersion string) *item.SkillVersion {
	dir := d.path
	files, ps, linked := s.t.listFiles(d, st, entries, s.lim, s.cachedRead)
	s.cur.Linked = s.cur.Linked || linked
	mdPath := s.t.report(path.Join(dir, skill.FileName))

	var md *versionFile
	for i := range files {
		if files[i].rel == skill.FileName && files[i].read {
			md = &files[i]
		}
	}
	var sk skill.SkillMD
	if md != nil {
		var mdProbs []skill.Problem
		sk, mdProbs = s.ec.parseSkill(md.full, mdPath, name, md.digest, func() ([]byte, error) { return s.bytesOf(md) }, s.lim.Frontmatter)
		ps = append(ps, mdProbs...)
	}
	if folderVersion != "" && sk.Version != "" && sk.Version != folderVersion {
		ps = append(ps, skill.Errorf(mdPath, skill.RuleVersion, "declared version %q must equal its folder name %q; fix one of them", sk.Version, folderVersion))
	}
	if folderVersion == item.LatestAlias || sk.Version == item.LatestAlias {
		ps = append(ps, skill.Errorf(s.t.report(dir), skill.RuleVersion, "%q names the latest version in the read API and cannot be a version; use a version number", item.LatestAlias))
	}
	ps = append(ps, s.checkResources(dir, files)...)
	s.cur.Problems = append(s.cur.Problems, ps...)
	if skill.HasError(ps) || md == nil {
		return nil
	}

	v := &item.SkillVersion{VersionInfo: item.VersionInfo{
		Name:        name,
		Description: sk.Description,
		Metadata:    sk.Metadata,
		Path:        dir,
		Generation:  s.generation,
	}, SkillMD: md.digest, SkillMDSize: md.size, Type: item.TypeSkillMD}
	var newest time.Time
	archive := make([]content.ArchiveFile, 0, len(files))
	archiveDigests := make([]content.Digest, 0, len(files))
	for i := range files {
		f := &files[i]
		if f.st.modTime.After(newest) {
			newest = f.st.modTime
		}
		archive = append(archive, content.ArchiveFile{Path: f.rel, Data: f.data, Executable: f.st.executable()})
		archiveDigests = append(archiveDigests, f.digest)
		if err := s.put(f); err != nil {
			s.problem(openProblem(s.t.report(f.full), "cannot read", err))
			return nil
		}
		if f.rel == skill.FileName {
			continue
		}
		mode := uint32(0o644)
		if f.st.executable() {
			mode = 0o755
		}
		v.Resources = append(v.Resources, item.Resource{Path: f.rel, Digest: f.digest, Size: f.size, Mode: mode})
	}
	if len(v.Resources) > 0 {
		zd, err := s.archive(files, archive, archiveDigests)
		if err != nil {
			s.problem(skill.Errorf(s.t.report(dir), skill.RuleRead, "cannot build archive: %s", err))
			return nil
		}
		v.Type = item.TypeArchive
		v.Archive = zd
	}

	switch {
	case folderVersion != "":
		v.Version, v.Declared = folderVersion, true
	case sk.Version != "":
		v.Version, v.Declared = sk.Version, true
	default:
		v.Version = "0.0.0+" + v.Digest().Hex()[:12]
	}
	if sub, ok := sk.Metadata.Get("subagent"); ok {
		if skill.ValidName(sub) {
			v.Subagent = sub
		} else {
			s.problem(skill.Warnf(mdPath, skill.RuleMetadata, "metadata.subagent %q is not a valid sub-agent name; routesToSubagent is omitted", sub))
		}
	}
	v.PublishedAt = newest.UTC().Truncate(time.Second)
	if p, ok := sk.Metadata.Get("published"); ok {
		t, err := time.Parse(time.RFC3339, p)
		if err != nil {
			s.problem(skill.Warnf(mdPath, skill.RuleMetadata, "metadata.published %q is not an RFC 3339 time such as 2026-11-29T10:00:00Z; using the files' modification time", p))
		} else {
			v.PublishedAt, v.PublishedDeclared = t.UTC().Truncate(time.Second), true
		}
	}
	return v
}

// checkResources applies the rules every client needs of an archive's
// paths and text files, for the files of the version folder dir.
func (s *skillScanner) checkResources(dir string, files []versionFile) []skill.Problem {
	var ps []skill.Problem
	// Every file path and every folder above one, by foldName: a file
	// "notes" and a folder "Notes/" collide on a case-insensitive
	// filesystem too. Both paths of a collision get a problem.
	claims := make(map[string]string, 2*len(files)) // foldName -> first path
	var reported map[string]bool                    // paths with a collision problem; rare
	report := func(p, other string) {
		if !reported[p] {
			if reported == nil {
				reported = map[string]bool{}
			}
			reported[p] = true
			ps = append(ps, collisionProblem(s.t.report(path.Join(dir, p)), other))
		}
	}
	collide := func(p string) bool {
		key := item.FoldName(p)
		first, ok := claims[key]
		switch {
		case !ok:
			claims[key] = p
		case first != p: // else a folder seen above another file
			report(p, first)
			report(first, p)
			return true
		}
		return false
	}
	for _, f := range files {
		report := s.t.report(f.full)
		for i := range len(f.rel) { // the folders above f, outermost first
			if f.rel[i] == '/' && collide(f.rel[:i]) {
				break
			}
		}
		collide(f.rel)
		if reservedPaths[f.rel] {
			ps = append(ps, skill.Errorf(report, skill.RuleResourcePath, "%q is reserved for an API route of the version; move the file into a subfolder", f.rel))
		}
		ps = append(ps, f.problems...)
	}
	return ps
}

// fileChecks applies the rules of one resource's bytes (rel is its path
// in the version folder; SKILL.md and agent files, rel "", have rules of
// their own): text files must be UTF-8, and no file may hold what
// skill.CheckText refuses. The scan cache keeps what they find, so an
// unchanged file is not read to check it again.
func fileChecks(report, rel string, data []byte) []skill.Problem {
	if rel == "" || rel == skill.FileName {
		return nil
	}
	var ps []skill.Problem
	if textExts[strings.ToLower(path.Ext(rel))] && !utf8.Valid(data) {
		ps = append(ps, skill.Errorf(report, skill.RuleEncoding, "text file is not valid UTF-8; clients reject the archive; save it as UTF-8"))
	}
	return append(ps, skill.CheckText(report, data)...)
}

// archive returns the digest of the version's archive of files (listed as
// archive, with their digests), built or reused, and in the store.
func (s *skillScanner) archive(files []versionFile, archive []content.ArchiveFile, digests []content.Digest) (content.Digest, error) {
	zd, size, err := s.ec.zip(archive, digests, func(i int) ([]byte, error) { return s.bytesOf(&files[i]) }, s.have, s.stored, s.blobs.PutDigested)
	if err != nil {
		return "", err
	}
	if !s.blobs.Reuse(zd, size, s.prevStore()) {
		return "", fmt.Errorf("archive %s vanished from the store", zd)
	}
	return zd, nil
}

package scan

import (
	"strings"
	"time"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// agentScanner scans everything that claims one agent name:
// agents/<name>.md (flat) and agents/<name>/<version>.md (versioned).
type agentScanner struct {
	entryScanner[*item.AgentVersion]
}

// scanAgentEntry scans the names that claim one agent into an entry, or
// nil when there is nothing to keep.
func scanAgentEntry(base scanBase, last map[string]*AgentEntry, job entryJob) *AgentEntry {
	s := &agentScanner{newEntryScanner[*item.AgentVersion](base)}
	s.cur.Item = s.scanClaims(job.key, s.t.lookupClaims(job))
	return s.finish(last, job.key)
}

// scanClaims reads the top-level entries that claim one agent name.
func (s *agentScanner) scanClaims(name string, entries []entry) *item.Agent {
	type claim struct {
		entry
		resolved stat
	}
	var valid []claim
	for _, e := range entries {
		s.cur.Linked = s.cur.Linked || e.st.isSymlink()
		st, err := s.t.resolve(s.t.top, e)
		switch {
		case err != nil:
			s.problem(s.t.resolveProblem(s.t.top, e, err))
			continue
		case !st.isDir() && !st.isRegular():
			s.problem(fileTypeProblem(s.t.report(e.name), st.mode))
			continue
		case st.isRegular() && !strings.HasSuffix(e.name, agentExt):
			continue // notes beside the agents
		case st.isDir() && e.name != name:
			s.problem(skill.Errorf(s.t.report(e.name), skill.RuleLayout, "a versioned sub-agent folder is named after the agent, without .md (agents/%s/1.0.0.md)", name))
			continue
		case !skill.ValidName(name):
			s.problem(skill.Errorf(s.t.report(e.name), skill.RuleName, "%q is not a valid sub-agent name (1-%d lowercase letters, digits and single hyphens); rename it", name, skill.MaxNameLen))
			continue
		}
		valid = append(valid, claim{entry: e, resolved: st})
	}
	switch len(valid) {
	case 0:
		return nil
	case 1:
	default:
		// Deterministic and safe: neither is published, both are named.
		for _, c := range valid {
			s.problem(skill.Errorf(s.t.report(c.name), skill.RuleDuplicate, "sub-agent %q is defined both as %s.md and as folder %s/; keep one", name, name, name))
		}
		return nil
	}
	var versions []*item.AgentVersion
	if c := valid[0]; c.resolved.isDir() {
		versions = s.scanVersioned(name, c.entry)
	} else if v := s.scanFile(name, s.t.top, c.entry, ""); v != nil {
		versions = []*item.AgentVersion{v}
	}
	if len(versions) == 0 {
		return nil
	}
	return item.New(name, versions)
}

// scanVersioned reads the folder e (agents/<name>/) of versions.
func (s *agentScanner) scanVersioned(name string, e entry) []*item.AgentVersion {
	d, entries, p := s.t.openFolder(s.t.top, e)
	if p != nil {
		s.problem(*p)
		return nil
	}
	defer d.close()
	var versions []*item.AgentVersion
	var names []string
	for _, e := range entries {
		if ver, ok := strings.CutSuffix(e.name, agentExt); ok && skill.ValidVersion(ver) {
			names = append(names, ver)
		}
	}
	same := item.SameVersions(names)
	found := false
	for _, e := range entries {
		if !strings.HasSuffix(e.name, agentExt) {
			continue
		}
		s.cur.Linked = s.cur.Linked || e.st.isSymlink()
		found = true
		ver := strings.TrimSuffix(e.name, agentExt)
		report := s.t.report(d.join(e.name))
		if !skill.ValidVersion(ver) {
			s.problem(skill.Errorf(report, skill.RuleVersion, "version file %q must be named <version>.md with 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0.md)", e.name, skill.MaxVersionLen))
			continue
		}
		if other := same[ver]; other != "" {
			s.problem(item.SameVersionProblem(report, ver, other))
			continue
		}
		if v := s.scanFile(name, d, e, ver); v != nil {
			versions = append(versions, v)
		}
	}
	if !found {
		s.problem(skill.Errorf(s.t.report(d.path), skill.RuleLayout, "no agent files: a versioned sub-agent folder holds <version>.md files such as %s/1.0.0.md", name))
	}
	return versions
}

// scanFile validates the agent-md file e of d. fileVersion is the version
// from the file name, or "" for a flat agent.
func (s *agentScanner) scanFile(name string, d *dir, e entry, fileVersion string) *item.AgentVersion {
	rel := d.join(e.name)
	report := s.t.report(rel)
	st, err := s.t.resolve(d, e)
	switch {
	case err != nil:
		s.problem(s.t.resolveProblem(d, e, err))
		return nil
	case !st.isRegular():
		s.problem(fileTypeProblem(report, st.mode))
		return nil
	case s.lim.MaxFileBytes > 0 && st.size > s.lim.MaxFileBytes:
		s.problem(skill.Errorf(report, skill.RuleLimit, "file is %d bytes; the limit is %d (max_file_bytes)", st.size, s.lim.MaxFileBytes))
		return nil
	}
	f := &versionFile{full: rel, st: st}
	if err := s.cachedRead(f, func() ([]byte, error) { return s.t.readFile(d, e, st.size) }); err != nil {
		s.problem(openProblem(report, "cannot read", err))
		return nil
	}
	digest := f.digest
	a, ps := s.ec.parseAgent(rel, report, name, digest, func() ([]byte, error) { return s.bytesOf(f) }, s.lim.Frontmatter)
	if fileVersion != "" && a.Version != "" && a.Version != fileVersion {
		ps = append(ps, skill.Errorf(report, skill.RuleVersion, "declared version %q must equal the file name's %q; fix one of them", a.Version, fileVersion))
	}
	if fileVersion == item.LatestAlias || a.Version == item.LatestAlias {
		ps = append(ps, skill.Errorf(report, skill.RuleVersion, "%q names the latest version in the read API and cannot be a version; use a version number", item.LatestAlias))
	}
	s.cur.Problems = append(s.cur.Problems, ps...)
	if skill.HasError(ps) {
		return nil
	}
	if err := s.put(f); err != nil {
		s.problem(openProblem(report, "cannot read", err))
		return nil
	}
	v := &item.AgentVersion{VersionInfo: item.VersionInfo{
		Name:        name,
		Description: a.Description,
		Metadata:    a.Metadata,
		Path:        rel,
		Generation:  s.generation,
		PublishedAt: st.modTime.UTC().Truncate(time.Second),
	}, Digest: digest}
	switch {
	case fileVersion != "":
		v.Version, v.Declared = fileVersion, true
	case a.Version != "":
		v.Version, v.Declared = a.Version, true
	default:
		v.Version = "0.0.0+" + v.Digest.Hex()[:12]
	}

	if p, ok := a.Metadata.Get("published"); ok {
		if t, err := time.Parse(time.RFC3339, p); err == nil {
			v.PublishedAt, v.PublishedDeclared = t.UTC().Truncate(time.Second), true
		} else {
			s.problem(skill.Warnf(report, skill.RuleMetadata, "metadata.published %q is not an RFC 3339 time such as 2026-11-29T10:00:00Z; using the file's modification time", p))
		}
	}
	return v
}

package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

const agentExt = ".md"

// agentScanner turns a sub-agents root into validated agents:
// agents/<name>.md (flat) and agents/<name>/<version>.md (versioned).
type agentScanner struct {
	t      *treeRoot
	lim    Limits
	blobs  *content.Builder
	probs  []skill.Problem
	agents []*Agent
}

func (s *agentScanner) problem(p skill.Problem) { s.probs = append(s.probs, p) }

func (s *agentScanner) scan(ctx context.Context) error {
	entries, err := fs.ReadDir(s.t.fsys, ".")
	if err != nil {
		return fmt.Errorf("read agents root %s: %w", s.t.display, err)
	}
	// Collect claims first: agents/x.md and agents/x/ both claim "x".
	type claim struct {
		entry string
		dir   bool
	}
	claims := map[string][]claim{}
	var names []string
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if isHidden(e.Name()) {
			continue
		}
		info, err := s.t.stat(e.Name())
		if err != nil {
			s.problem(skill.Errorf(s.t.report(e.Name()), skill.RuleSymlink, "%s", symlinkProblem(err)))
			continue
		}
		var name string
		switch {
		case info.IsDir():
			name = e.Name()
		case info.Mode().IsRegular() && strings.HasSuffix(e.Name(), agentExt):
			name = strings.TrimSuffix(e.Name(), agentExt)
		default:
			continue // README files and other notes beside the agents
		}
		if !skill.ValidName(name) {
			s.problem(skill.Errorf(s.t.report(e.Name()), skill.RuleName, "%q is not a valid sub-agent name (1-%d lowercase letters, digits and single hyphens); rename it", name, skill.MaxNameLen))
			continue
		}
		if _, seen := claims[name]; !seen {
			names = append(names, name)
		}
		claims[name] = append(claims[name], claim{entry: e.Name(), dir: info.IsDir()})
	}
	for _, name := range names {
		cs := claims[name]
		if len(cs) > 1 {
			// Deterministic and safe: neither is published, both are named.
			for _, c := range cs {
				s.problem(skill.Errorf(s.t.report(c.entry), skill.RuleDuplicate, "sub-agent %q is defined both as %s.md and as folder %s/; keep one", name, name, name))
			}
			continue
		}
		var versions []*AgentVersion
		if cs[0].dir {
			versions = s.scanVersioned(name)
		} else if v := s.scanFile(name, cs[0].entry, ""); v != nil {
			versions = []*AgentVersion{v}
		}
		if len(versions) > 0 {
			s.agents = append(s.agents, newAgent(name, versions))
		}
	}
	return nil
}

func (s *agentScanner) scanVersioned(name string) []*AgentVersion {
	entries, err := fs.ReadDir(s.t.fsys, name)
	if err != nil {
		s.problem(skill.Errorf(s.t.report(name), skill.RuleRead, "cannot list folder: %s", describeErr(err)))
		return nil
	}
	var versions []*AgentVersion
	found := false
	for _, e := range entries {
		if isHidden(e.Name()) || !strings.HasSuffix(e.Name(), agentExt) {
			continue
		}
		found = true
		ver := strings.TrimSuffix(e.Name(), agentExt)
		rel := path.Join(name, e.Name())
		if !skill.ValidVersion(ver) {
			s.problem(skill.Errorf(s.t.report(rel), skill.RuleVersion, "version file %q must be named <version>.md with 1-%d characters of A-Z a-z 0-9 . + - (e.g. 1.2.0.md)", e.Name(), skill.MaxVersionLen))
			continue
		}
		if v := s.scanFile(name, rel, ver); v != nil {
			versions = append(versions, v)
		}
	}
	if !found {
		s.problem(skill.Errorf(s.t.report(name), skill.RuleLayout, "no agent files: a versioned sub-agent folder holds <version>.md files such as %s/1.0.0.md", name))
	}
	return versions
}

// scanFile validates one agent-md file. fileVersion is the version from
// the file name, or "" for a flat agent.
func (s *agentScanner) scanFile(name, rel, fileVersion string) *AgentVersion {
	report := s.t.report(rel)
	info, err := s.t.stat(rel)
	switch {
	case err != nil:
		s.problem(skill.Errorf(report, skill.RuleSymlink, "%s", symlinkProblem(err)))
		return nil
	case !info.Mode().IsRegular():
		s.problem(skill.Errorf(report, skill.RuleFileType, "%s is not a regular file", fileKind(info.Mode())))
		return nil
	case s.lim.MaxFileBytes > 0 && info.Size() > s.lim.MaxFileBytes:
		s.problem(skill.Errorf(report, skill.RuleLimit, "file is %d bytes; the limit is %d (max_file_bytes)", info.Size(), s.lim.MaxFileBytes))
		return nil
	}
	data, err := fs.ReadFile(s.t.fsys, rel)
	if err != nil {
		s.problem(skill.Errorf(report, skill.RuleRead, "cannot read: %s", describeErr(err)))
		return nil
	}
	a, ps := skill.ParseAgent(report, name, data)
	if fileVersion != "" && a.Version != "" && a.Version != fileVersion {
		ps = append(ps, skill.Errorf(report, skill.RuleVersion, "declared version %q must equal the file name's %q; fix one of them", a.Version, fileVersion))
	}
	s.probs = append(s.probs, ps...)
	if skill.HasError(ps) {
		return nil
	}
	v := &AgentVersion{
		Name:        name,
		Description: a.Description,
		Metadata:    a.Metadata,
		Digest:      s.blobs.Put(data),
		Source:      report,
		PublishedAt: info.ModTime().UTC().Truncate(time.Second),
	}
	switch {
	case fileVersion != "":
		v.Version, v.Declared = fileVersion, true
	case a.Version != "":
		v.Version, v.Declared = a.Version, true
	default:
		v.Version = "0.0.0+" + v.Digest.Hex()[:12]
	}
	if p, ok := a.Metadata["published"]; ok {
		if t, err := time.Parse(time.RFC3339, p); err == nil {
			v.PublishedAt = t.UTC().Truncate(time.Second)
		} else {
			s.problem(skill.Warnf(report, skill.RuleMetadata, "metadata.published %q is not an RFC 3339 time such as 2026-11-29T10:00:00Z; using the file's modification time", p))
		}
	}
	return v
}

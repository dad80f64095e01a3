package check

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// artifact downloads and verifies one skill version's artifact: digest,
// type, archive rules, UTF-8 and the front matter name. It returns the
// version's files.
func (c *Client) artifact(ctx context.Context, itemName, name, typ, u, digest string) (map[string][]byte, error) {
	as := mediaMarkdown
	switch typ {
	case typeArchive:
		as = mediaZip
	case typeSkillMD:
	default:
		return nil, &Violation{Rule: RuleType, Item: itemName, URL: u, Msg: fmt.Sprintf("unknown type %q: want skill-md or archive", typ)}
	}
	body, err := c.download(ctx, itemName, u, digest, as)
	if err != nil {
		return nil, err
	}
	var files map[string][]byte
	if as == mediaZip {
		if files, err = CheckZip(body); err != nil {
			return nil, at(err, itemName, u)
		}
	} else {
		files = map[string][]byte{skill.FileName: body}
	}
	if err := checkSkillMD(name, files[skill.FileName]); err != nil {
		return nil, at(err, itemName, u)
	}
	return files, nil
}

// parseLimits are the front matter bounds of the files check parses, its
// own (a zero Limits field is no bound): the nesting and the problem list,
// so that a remote file can make no deep walk and no long report; the
// size limits are the server's own business.
var parseLimits = skill.Limits{MaxDepth: 16, MaxValueProblems: 10}

// checkSkillMD requires strict UTF-8 and front matter naming the skill
// as advertised.
func checkSkillMD(name string, b []byte) error {
	if !utf8.Valid(b) {
		return bad(RuleText, "SKILL.md is not valid UTF-8")
	}
	s, _ := skill.ParseSkill(skill.FileName, name, b, parseLimits)
	if s.Name != name {
		return bad(RuleFrontmatter, "SKILL.md front matter name is %q, the feed advertises %q", s.Name, name)
	}
	return nil
}

// Resource is one file of an archive skill, as the RFC entry lists it.
type Resource struct {
	Path     string `json:"path"`
	Digest   string `json:"digest"`
	URL      string `json:"url"`
	UnixMode int    `json:"unixMode"`
}

// RFCEntry is one skill of the RFC index.
type RFCEntry struct {
	Name        string     `json:"name"`
	Type        string     `json:"type"`
	Description string     `json:"description"`
	URL         string     `json:"url"`
	Digest      string     `json:"digest"`
	Version     string     `json:"version"`
	Resources   []Resource `json:"resources"`
}

func (e RFCEntry) item() string { return "skill " + e.Name + " " + e.Version }

// SyncSkills is netclaw's RFC pass: read the index, skip skills whose
// (version, digest) are unchanged, download and verify the rest.
func (c *Client) SyncSkills(ctx context.Context) ([]RFCEntry, error) {
	const itemName = "RFC index"
	u := c.entry(pathRFCIndex)
	var idx struct {
		Schema string     `json:"$schema"`
		Skills []RFCEntry `json:"skills"`
	}
	if err := c.getJSON(ctx, itemName, u, mediaEntry, &idx); err != nil {
		return nil, err
	}
	if idx.Schema != RFCSchema {
		return nil, &Violation{Rule: RuleSchema, Item: itemName, URL: u, Msg: fmt.Sprintf("$schema is %q, want %q byte for byte (the skills CLI drops the whole index)", idx.Schema, RFCSchema)}
	}
	if idx.Skills == nil {
		return nil, &Violation{Rule: RuleJSON, Item: itemName, URL: u, Msg: "skills is missing or null, want a list"}
	}
	errs := make([]error, len(idx.Skills))
	seen := map[string]bool{}
	var todo []int
	for i, e := range idx.Skills {
		if err := checkEntry(e, seen); err != nil {
			errs[i] = at(err, e.item(), u)
			continue
		}
		todo = append(todo, i)
	}
	c.each(len(todo), func(j int) {
		e := idx.Skills[todo[j]]
		errs[todo[j]] = c.syncSkill(ctx, e)
		if c.obs != nil {
			c.obs.itemDone()
		}
	})
	return idx.Skills, errors.Join(errs...)
}

// checkEntry applies the skills CLI's rules for an entry it keeps.
func checkEntry(e RFCEntry, seen map[string]bool) error {
	switch {
	case !skill.ValidName(e.Name):
		return bad(RuleName, "invalid name %q: want lower-case letters, digits and single hyphens, at most %d characters", e.Name, skill.MaxNameLen)
	case seen[e.Name]:
		return bad(RuleName, "listed twice")
	case skill.TextLen(e.Description) > skill.MaxDescriptionLen || strings.TrimSpace(e.Description) == "":
		return bad(RuleDescription, "description empty or over %d characters (UTF-16 units, as the skills CLI counts)", skill.MaxDescriptionLen)
	case e.Version == "":
		return bad(RuleVersion, "no version (netclaw's change detection needs it)")
	case e.Type == typeSkillMD && len(e.Resources) > 0:
		return bad(RuleType, "type skill-md, yet it lists resources: a skill with files besides SKILL.md is an archive")
	}
	seen[e.Name] = true
	return nil
}

func (c *Client) syncSkill(ctx context.Context, e RFCEntry) error {
	c.mu.Lock()
	prev, ok := c.Skills[e.Name]
	c.mu.Unlock()
	if ok && prev.Version == e.Version && prev.Digest == e.Digest {
		return nil
	}
	files, err := c.artifact(ctx, e.item(), e.Name, e.Type, e.URL, e.Digest)
	if err != nil {
		return err
	}
	if c.obs != nil {
		if err := c.checkResources(ctx, e, files); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.Skills[e.Name] = synced(e.Version, e.Digest, files, c.obs == nil)
	c.mu.Unlock()
	return nil
}

// checkResources downloads every resource an archive entry lists and
// requires it to be the archive's file of that path.
func (c *Client) checkResources(ctx context.Context, e RFCEntry, files map[string][]byte) error {
	if e.Type != typeArchive || e.Resources == nil {
		return nil // resources are an extension; a feed may leave them out
	}
	var errs []error
	listed := map[string]bool{}
	for _, r := range e.Resources {
		listed[r.Path] = true
		itemName := e.item() + " " + r.Path
		if _, err := c.download(ctx, itemName, r.URL, r.Digest, mediaFile); err != nil {
			errs = append(errs, err)
			continue
		}
		if f, ok := files[r.Path]; !ok || content.Sum(f).String() != r.Digest {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: itemName, URL: r.URL, Msg: "the resource is not the archive's file of that path"})
		}
	}
	for p := range files {
		if p != skill.FileName && !listed[p] {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: e.item(), URL: e.URL, Msg: fmt.Sprintf("the archive holds %s, which resources does not list", p)})
		}
	}
	return errors.Join(errs...)
}

// textExt are the files netclaw requires to be strict UTF-8 in an archive.
var textExt = map[string]bool{".md": true, ".txt": true, ".json": true, ".yaml": true, ".yml": true, ".sh": true, ".py": true}

// CheckZip applies netclaw's and the skills CLI's archive rules and
// returns the files.
func CheckZip(b []byte) (map[string][]byte, error) {
	if len(b) > MaxArchiveBytes {
		return nil, bad(RuleZipSize, "archive is %d bytes, over the %d clients accept", len(b), MaxArchiveBytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, bad(RuleZipSize, "archive is not a zip: %v", err)
	}
	if len(zr.File) > MaxArchiveFiles {
		return nil, bad(RuleZipSize, "archive has %d entries, over the %d clients accept", len(zr.File), MaxArchiveFiles)
	}
	files := map[string][]byte{}
	folded := map[string]bool{}
	var total int64
	for _, f := range zr.File {
		name := f.Name
		if err := checkPath("entry", name); err != nil {
			return nil, err
		}
		mode := f.Mode()
		if mode&^0o777 != 0 {
			return nil, bad(RuleZipEntry, "entry %q: mode %v is not a plain file within 0777 (clients refuse symlinks and devices)", name, mode)
		}
		low := strings.ToLower(name)
		if folded[low] {
			return nil, bad(RuleZipPath, "entry %q: two paths equal ignoring case", name)
		}
		folded[low] = true
		rc, err := f.Open()
		if err != nil {
			return nil, bad(RuleZipSize, "entry %q: %v", name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, MaxArchiveBytes-total+1))
		rc.Close()
		if err != nil {
			return nil, bad(RuleZipSize, "entry %q: %v", name, err)
		}
		if total += int64(len(data)); total > MaxArchiveBytes {
			return nil, bad(RuleZipSize, "archive expands to over %d bytes", MaxArchiveBytes)
		}
		if (name == skill.FileName || textExt[strings.ToLower(path.Ext(name))]) && !utf8.Valid(data) {
			return nil, bad(RuleZipContent, "entry %q: not valid UTF-8", name)
		}
		files[name] = data
	}
	if _, ok := files[skill.FileName]; !ok {
		return nil, bad(RuleZipContent, "no SKILL.md at the archive root")
	}
	return files, nil
}

// checkPath applies the rules for a path a client writes to disk.
func checkPath(what, name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") {
		return bad(RuleZipPath, "%s %q: absolute or malformed path", what, name)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return bad(RuleZipPath, "%s %q: empty, . or .. segment", what, name)
		}
	}
	return nil
}

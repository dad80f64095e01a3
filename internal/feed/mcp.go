package feed

import (
	"encoding/json"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// The view of a feed that the MCP skills extension publishes
// (docs/http-api.md, "Skills over MCP"): each skill version as a
// directory of skill:// URIs, and its entry for skills/list and
// skills/get, rendered once per view.
//
// The latest version of a skill is skill://<name>/, its SKILL.md
// skill://<name>/SKILL.md. Every version, the latest too, is also
// skill://_versions/<version>/<name>/: "_versions" can be no skill's
// name (names hold no "_"), and the segment before SKILL.md is the
// skill's name in both, as the extension requires. Paths are escaped
// segment by segment, as in artifact paths.

// URI scheme and names of the MCP skills extension.
const (
	SkillScheme = "skill://"
	// VersionsAuthority starts the URIs of a skill's versions by number.
	VersionsAuthority = "_versions"
	// DirectoryMIMEType is the media type of a folder's entry.
	DirectoryMIMEType = "inode/directory"
)

// MCPSkill is one skill version as the extension lists it.
type MCPSkill struct {
	Name, Version string
	URI           string // of its SKILL.md
	Description   string
	Size          int64 // of its SKILL.md
	Latest        bool
	// Entry is {"uri", "frontmatter", "resources"}, encoded once.
	Entry json.RawMessage
}

// MCPFile is one file of a skill version at a skill:// URI.
type MCPFile struct {
	URI    string
	Path   string // in the skill's folder, slash-separated
	Digest content.Digest
	Size   int64
}

// ContentType is the file's media type, as the HTTP routes send it.
func (m MCPFile) ContentType() string { return ContentType(m.Path) }

// MCPDirEntry is one child of a folder of a skill version.
type MCPDirEntry struct {
	URI, Name string
	Dir       bool
	File      MCPFile // when not Dir
}

// MCPVersion links to one version of a skill.
type MCPVersion struct {
	Version     string `json:"version"`
	URI         string `json:"uri"`
	PublishedAt string `json:"publishedAt"`
	Latest      bool   `json:"latest"`
}

type mcpEntryDoc struct {
	URI         string           `json:"uri"`
	Frontmatter json.RawMessage  `json:"frontmatter"`
	Resources   []mcpResourceDoc `json:"resources"`
}

type mcpResourceDoc struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// mcpView is what a feed renders for the extension, once it renders
// whole: a list with an entry whose SKILL.md could not be read is made
// again by the next call, not kept.
type mcpView struct {
	mu     sync.Mutex                 // held while the list renders
	latest atomic.Pointer[[]MCPSkill] // by name
}

// MCPSkills lists the latest version of every skill of the view, by name.
func (f *Feed) MCPSkills() []MCPSkill {
	if l := f.mcp.latest.Load(); l != nil {
		return *l
	}
	f.mcp.mu.Lock()
	defer f.mcp.mu.Unlock()
	if l := f.mcp.latest.Load(); l != nil {
		return *l
	}
	// Each entry reads and parses its SKILL.md's front matter (about
	// 80 µs): the entries are made on every core.
	latest := make([]MCPSkill, len(f.Skills))
	var whole atomic.Bool
	whole.Store(true)
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(f.Skills))
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(f.Skills); i += workers {
				sk := f.Skills[i]
				var ok bool
				if latest[i], ok = f.mcpSkill(sk, sk.Latest, mcpRoot(sk.Name, "")); !ok {
					whole.Store(false)
				}
			}
		})
	}
	wg.Wait()
	var n int64
	for _, s := range latest {
		n += int64(len(s.Entry)) + docOverhead
	}
	if whole.Load() {
		f.mcp.latest.Store(&latest)
		f.docs.bytes.Add(n) // counted with the documents (Bytes)
	}
	return latest
}

// MCPSkillsAfter is the skills of MCPSkills named after name, by name:
// where a page that ended at name continues, in whichever snapshot.
func (f *Feed) MCPSkillsAfter(name string) []MCPSkill {
	all := f.MCPSkills()
	i := sort.Search(len(all), func(i int) bool { return all[i].Name > name })
	return all[i:]
}

// MCPSkill returns the skill version whose SKILL.md is at uri.
func (f *Feed) MCPSkill(uri string) (MCPSkill, bool) {
	sk, v, rel, ok := f.mcpLocate(uri)
	if !ok || rel != skill.FileName {
		return MCPSkill{}, false
	}
	if root := mcpRoot(sk.Name, ""); uri == root+"/"+skill.FileName {
		all := f.MCPSkills()
		return all[sort.Search(len(all), func(i int) bool { return all[i].Name >= sk.Name })], true
	}
	s, _ := f.mcpSkill(sk, v, mcpRoot(sk.Name, v.Version))
	return s, true
}

// MCPVersions lists every version of the named skill, newest first.
func (f *Feed) MCPVersions(name string) []MCPVersion {
	sk, ok := f.Skill(name)
	if !ok {
		return nil
	}
	out := make([]MCPVersion, len(sk.Versions))
	for i, v := range sk.Versions {
		out[i] = MCPVersion{Version: v.Version, URI: mcpRoot(sk.Name, v.Version) + "/" + skill.FileName,
			PublishedAt: f.SkillPublished(&v.VersionInfo).UTC().Format(time.RFC3339), Latest: v == sk.Latest}
	}
	return out
}

// MCPFile returns the file at uri.
func (f *Feed) MCPFile(uri string) (MCPFile, bool) {
	_, v, rel, ok := f.mcpLocate(uri)
	if !ok || rel == "" {
		return MCPFile{}, false
	}
	if rel == skill.FileName {
		return MCPFile{URI: uri, Path: rel, Digest: v.SkillMD, Size: v.SkillMDSize}, true
	}
	r, ok := v.Resource(rel)
	if !ok {
		return MCPFile{}, false
	}
	return MCPFile{URI: uri, Path: rel, Digest: r.Digest, Size: r.Size}, true
}

// MCPDirectory lists the children of the folder at uri, by name: a skill
// version's root or a folder of its resources. ok is false when uri
// names no folder.
func (f *Feed) MCPDirectory(uri string) ([]MCPDirEntry, bool) {
	uri = strings.TrimSuffix(uri, "/")
	_, v, rel, ok := f.mcpLocate(uri)
	if !ok {
		return nil, false
	}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	var out []MCPDirEntry
	seen := map[string]bool{}
	for _, r := range v.Files() {
		file := MCPFile{Path: r.Path, Digest: r.Digest, Size: r.Size}
		rest, ok := strings.CutPrefix(file.Path, prefix)
		if !ok {
			continue
		}
		name, _, sub := strings.Cut(rest, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		e := MCPDirEntry{URI: uri + "/" + url.PathEscape(name), Name: name, Dir: sub}
		if !sub {
			file.URI = e.URI
			e.File = file
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, false // a file, or no folder of this version
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, true
}

// mcpLocate resolves uri to a skill version of the view and the slash
// path it names in the version's folder ("" for the folder itself).
func (f *Feed) mcpLocate(uri string) (*item.Skill, *item.SkillVersion, string, bool) {
	rest, ok := strings.CutPrefix(uri, SkillScheme)
	if !ok {
		return nil, nil, "", false
	}
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" || u == "." || u == ".." {
			return nil, nil, "", false
		}
		segs[i] = u
	}
	version := ""
	if segs[0] == VersionsAuthority {
		if len(segs) < 3 {
			return nil, nil, "", false
		}
		version, segs = segs[1], segs[2:]
	}
	sk, ok := f.Skill(segs[0])
	if !ok {
		return nil, nil, "", false
	}
	v := sk.Latest
	if version != "" {
		if v, ok = sk.Version(version); !ok {
			return nil, nil, "", false
		}
	}
	return sk, v, strings.Join(segs[1:], "/"), true
}

// mcpRoot is the URI of the folder of a skill version: its latest form
// when version is "", else by number.
func mcpRoot(name, version string) string {
	if version == "" {
		return SkillScheme + name
	}
	return SkillScheme + VersionsAuthority + "/" + version + "/" + name
}

// mcpSkill renders v of sk with its files under the folder URI root.
// The front matter is its SKILL.md's; when those bytes cannot be read
// (the state directory's file vanished or was tampered with, which the
// store logs and counts, and the next reload writes again), the entry
// carries an empty one and ok is false.
func (f *Feed) mcpSkill(sk *item.Skill, v *item.SkillVersion, root string) (s MCPSkill, ok bool) {
	doc := mcpEntryDoc{URI: root + "/" + skill.FileName, Resources: make([]mcpResourceDoc, 0, 1+len(v.Resources))}
	var md []byte
	if md, ok = f.readStored(v.SkillMD); ok {
		doc.Frontmatter = skill.FrontmatterJSON(md)
	}
	if doc.Frontmatter == nil {
		doc.Frontmatter = json.RawMessage("{}")
	}
	for _, r := range v.Files() { // the SKILL.md first: its URI is the entry's
		doc.Resources = append(doc.Resources, mcpResourceDoc{URI: root + "/" + escapePath(r.Path), Digest: r.Digest.String(), Size: r.Size})
	}
	body, err := json.Marshal(doc)
	if err != nil {
		panic("feed: MCP entry of " + sk.Name + ": " + err.Error()) // only strings, numbers and valid JSON
	}
	return MCPSkill{Name: sk.Name, Version: v.Version, URI: doc.URI, Description: v.Description, Size: v.SkillMDSize,
		Latest: v == sk.Latest, Entry: body}, ok
}

package feed

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/scan"
)

// Tree says what the feed of a test is made of: the roots a scan reads.
type Tree struct {
	SkillsDir, AgentsDir string
	PageSize             int
}

// scanTree scans src and returns its feed, as a snapshot's.
func scanTree(t *testing.T, src Tree) *Feed {
	t.Helper()
	f, _ := scanFeed(t, src)
	return f
}

// scanFeed is scanTree, and the scan's content store.
func scanFeed(t *testing.T, src Tree) (*Feed, *content.Store) {
	t.Helper()
	r, err := scan.Run(t.Context(), scan.Input{SkillsDir: src.SkillsDir, AgentsDir: src.AgentsDir, Generation: 1, Cache: scan.NewCache()})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return New(Input{Generation: 1, Source: r, Files: r.Store, Skills: r.Skills, Agents: r.Agents,
		AgentsConfigured: src.AgentsDir != "", PageSize: src.PageSize, Shared: NewSharedCache(testCacheBytes)}), r.Store
}

var writeFile = fixture.WriteFile

// testCacheBytes bounds the shared cache of the tests' feeds: enough for
// every document they render.
const testCacheBytes = 32 << 20

var skillMD = fixture.SkillMD

// itemSource is a Source of items a test made, without a scan.
type itemSource struct {
	skills []*item.Skill
	agents []*item.Agent
}

func (s itemSource) Skill(name string) (*item.Skill, bool) { return find(s.skills, name) }
func (s itemSource) Agent(name string) (*item.Agent, bool) { return find(s.agents, name) }

func find[V item.Version](items []*item.Item[V], name string) (*item.Item[V], bool) {
	i := slices.IndexFunc(items, func(it *item.Item[V]) bool { return it.Name == name })
	if i < 0 {
		return nil, false
	}
	return items[i], true
}

// feedOf is the feed of items a test made, sorted by name here.
func feedOf(skills []*item.Skill, agents []*item.Agent, agentsConfigured bool) *Feed {
	slices.SortFunc(skills, func(a, b *item.Skill) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(agents, func(a, b *item.Agent) int { return strings.Compare(a.Name, b.Name) })
	return New(Input{Generation: 1, Source: itemSource{skills, agents}, Skills: skills, Agents: agents,
		AgentsConfigured: agentsConfigured, Shared: NewSharedCache(testCacheBytes)})
}

// testPublished is the published time of the versions tests make.
var testPublished = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// resource is a file of a version a test makes: its path, bytes and mode.
type resource struct {
	path, body string
	mode       uint32
}

// skillVersion makes a version of skill name: a lone SKILL.md, or an
// archive when it has resources. Its digests are of made-up bytes.
func skillVersion(name, version string, files ...resource) *item.SkillVersion {
	v := &item.SkillVersion{VersionInfo: item.VersionInfo{Name: name, Version: version, Declared: true,
		Description: "Skill " + name + " " + version, PublishedAt: testPublished, Path: name + "/" + version},
		Type: item.TypeSkillMD, SkillMD: content.Sum([]byte("SKILL.md of " + name + " " + version))}
	if len(files) > 0 {
		v.Type, v.Archive = item.TypeArchive, content.Sum([]byte("archive of "+name+" "+version))
		for _, f := range files {
			v.Resources = append(v.Resources, item.Resource{Path: f.path, Digest: content.Sum([]byte(f.body)), Size: int64(len(f.body)), Mode: f.mode})
		}
		slices.SortFunc(v.Resources, func(a, b item.Resource) int { return strings.Compare(a.Path, b.Path) })
	}
	return v
}

// agentVersion makes a version of sub-agent name.
func agentVersion(name, version string) *item.AgentVersion {
	return &item.AgentVersion{VersionInfo: item.VersionInfo{Name: name, Version: version, Declared: true,
		Description: "Agent " + name + " " + version, PublishedAt: testPublished, Path: name + "/" + version + ".md"},
		Digest: content.Sum([]byte("agent.md of " + name + " " + version))}
}

// docPatterns match a root-relative path against every document kind's
// patterns, as a router would.
var docPatterns = func() (out []struct {
	kind DocKind
	re   *regexp.Regexp
}) {
	param := regexp.MustCompile(`\\\{(\w+)\\\}`)
	for _, k := range Kinds() {
		for _, p := range k.Patterns() {
			re := regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(p), `(?P<$1>[^/]+)`) + "$")
			out = append(out, struct {
				kind DocKind
				re   *regexp.Regexp
			}{k, re})
		}
	}
	return out
}()

// keyAt is the document key a router finds at the root-relative path p;
// ok is false when p is no document's path. Paths two patterns match
// (pages/index.json) must give one key.
func keyAt(t *testing.T, p string) (DocKey, bool) {
	t.Helper()
	var keys []DocKey
	for _, dp := range docPatterns {
		m := dp.re.FindStringSubmatch(p)
		if m == nil {
			continue
		}
		key, ok := dp.kind.KeyOf(func(name string) (string, bool) {
			v, err := url.PathUnescape(m[dp.re.SubexpIndex(name)])
			return v, err == nil
		})
		if ok && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	if len(keys) > 1 {
		t.Fatalf("%s names documents %+v", p, keys)
	}
	if len(keys) == 0 {
		return DocKey{}, false
	}
	return keys[0], true
}

// decode parses a document's JSON.
func decode(t *testing.T, d *Document) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(d.Body, &v); err != nil {
		t.Fatalf("%v:\n%s", err, d.Body)
	}
	return v
}

// eachObject calls fn with every JSON object in v, v itself included.
func eachObject(v any, fn func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(v)
		for _, x := range v {
			eachObject(x, fn)
		}
	case []any:
		for _, x := range v {
			eachObject(x, fn)
		}
	}
}

// walked is what walk found: each document by the href it was reached
// at, and the hrefs that named no document.
type walked struct {
	docs   map[string]map[string]any
	keys   map[string]DocKey
	routes []string // sorted
}

// walk fetches the document at the root-relative href start from f, for
// base, and every document its hrefs lead to, in turn. Every href must
// start with f's prefix; the rest is a document f has, or a route that
// is no document (a search). A document's links.self is the href it was
// reached at, and every artifact URL in it (an object's "url" beside its
// "digest") is a file of f at base.
func walk(t *testing.T, f *Feed, base Base, start string) walked {
	t.Helper()
	w := walked{docs: map[string]map[string]any{}, keys: map[string]DocKey{}}
	queue := []string{start}
	for len(queue) > 0 {
		href := queue[0]
		queue = queue[1:]
		if _, ok := w.docs[href]; ok || slices.Contains(w.routes, href) {
			continue
		}
		rest, ok := strings.CutPrefix(href, f.Prefix())
		if !ok || !strings.HasPrefix(rest, "/") {
			t.Errorf("href %q is not under the view's prefix %q", href, f.Prefix())
			continue
		}
		key, ok := keyAt(t, rest)
		if !ok {
			w.routes = append(w.routes, href)
			continue
		}
		d, ok := f.Document(base, key)
		if !ok {
			t.Errorf("href %q (%+v) names no document of the feed", href, key)
			continue
		}
		doc := decode(t, d)
		w.docs[href], w.keys[href] = doc, key
		if links, ok := doc["links"].(map[string]any); ok {
			if self := links["self"].(map[string]any)["href"]; self != href {
				t.Errorf("%s: links.self is %v", href, self)
			}
		}
		eachObject(doc, func(o map[string]any) {
			if h, ok := o["href"].(string); ok {
				queue = append(queue, h)
			}
			if u, ok := o["url"].(string); ok {
				checkArtifactURL(t, f, base, u, o["digest"])
			}
		})
	}
	slices.Sort(w.routes)
	return w
}

// checkArtifactURL: u is base's content-addressed URL of a file of f
// whose digest is digest.
func checkArtifactURL(t *testing.T, f *Feed, base Base, u string, digest any) {
	t.Helper()
	rest, ok := strings.CutPrefix(u, base.URL+"/api/v1/blobs/sha256/")
	hex, name, _ := strings.Cut(rest, "/")
	d := content.Digest("sha256:" + hex)
	if !ok || digest != d.String() {
		t.Errorf("url %s is not %s's content-addressed URL of digest %v", u, base.URL, digest)
		return
	}
	name, err := url.PathUnescape(name)
	if _, ok := f.ArtifactFile(d, name); err != nil || !ok {
		t.Errorf("url %s names no file of the view", u)
	}
	if want := base.URL + ArtifactPath(d, name); u != want {
		t.Errorf("url %s, want %s", u, want)
	}
}

// Package page owns the HTML catalogue people browse, search and install
// from: the catalogue of a feed view, a page per skill and per sub-agent,
// and the operator's view of a scan's problems, rendered on the server
// with html/template from a *feed.Feed (one reader's view), and the
// embedded assets those pages load. Markdown from a skill is rendered
// with goldmark and sanitised with bluemonday (markdown.go).
//
// Pages are cached like documents, once per snapshot and view
// (feed.Feed.Page); a page that depends on a search or filter is made
// per request. It imports internal/feed, internal/item, internal/skill
// and internal/content, and must not import internal/catalog, scan,
// httpapi or any router: the HTTP layer (internal/httpapi) calls it.
package page

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

//go:embed pages.html
var pagesHTML string

// ContentType is the media type of every page.
const ContentType = "text/html; charset=utf-8"

// kindCatalogue is the catalogue's page kind in feed.PageKey; an item's
// page is keyed by the item's kind (item.Kind's word).
const kindCatalogue = "catalogue"

// Options configures a Renderer.
type Options struct {
	// PageSize is how many items one catalogue page lists; 0: one page
	// lists all.
	PageSize int
	// Private marks a feed behind read tokens: its install lines switch
	// the skills CLI's telemetry off, which would report the feed's URLs,
	// path tokens included, to the CLI's vendor.
	Private bool
}

// Renderer renders the pages of any view.
type Renderer struct {
	opts Options
	tmpl *template.Template
}

// New returns a Renderer.
func New(opts Options) *Renderer {
	return &Renderer{opts: opts, tmpl: template.Must(template.New("pages").Parse(pagesHTML))}
}

// Blobs reads the bytes of a digest (*content.Store).
type Blobs interface {
	Get(d content.Digest) ([]byte, bool)
}

// site is what every page's frame shows.
type site struct {
	Name, Description, Version string
	Prefix                     string // every root-relative href starts with it
	CSS                        template.CSS
	Icon, Script               string
	ScriptIntegrity            string // the script's hash, which SecurityPolicy allows
	IndexHref, APIHref         string
	OpenAPIHref                string
}

func siteOf(f *feed.Feed) site {
	info := f.Server()
	return site{Name: orDefault(info.Name, "skillserver"), Description: info.Description, Version: orDefault(info.Version, "dev"),
		Prefix: f.Prefix(), CSS: template.CSS(styleCSS), Icon: assets.icon.href, Script: assets.script.href, ScriptIntegrity: assets.script.integrity,
		IndexHref: feed.DocKey{Kind: feed.DocRFCIndex}.Path(), APIHref: feed.PathSkillSearch, OpenAPIHref: feed.PathOpenAPI}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (p *Renderer) execute(name string, data any) []byte {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		// The templates are fixed and the data is strings and slices
		// the snapshot owns; failing to execute is a programming error.
		panic(fmt.Sprintf("render page %s: %v", name, err))
	}
	return buf.Bytes()
}

// installLine is one line a reader pastes into a shell or a config file.
type installLine struct {
	Label string
	Line  string
}

// Catalogue

// Query is what a request asks of the catalogue: search text, a tag,
// a kind (an item.Kind's word, or "" for both) and a page number from 1.
type Query struct {
	Text, Tag, Kind string
	N               int
}

// filtered reports whether the page depends on more than its number.
func (q Query) filtered() bool { return q.Text != "" || q.Tag != "" || q.Kind != "" }

type entry struct {
	Name, Kind, Href, Description, Version string
	Tags                                   []tagLink
}

type tagLink struct{ Name, Href string }

type catalogueData struct {
	Site             site
	Title            string
	Query, Tag, Kind string
	Agents           bool
	Items            []entry
	Total, N, Pages  int
	Prev, Next       string
	Install          *installLine
}

// Catalogue returns the page of the catalogue q asks for, in the view f,
// for clients whose base URL is base (without the view's prefix); ok is
// false for a page number past the last. Its items and their order are
// those of the read API's search (feed.Feed.SearchSkills): every item by
// name when q has no text.
func (p *Renderer) Catalogue(f *feed.Feed, base feed.Base, q Query) (*feed.Document, bool) {
	q.N = max(q.N, 1)
	if q.filtered() {
		items := p.entries(f, q)
		if q.N > p.pageCount(len(items)) {
			return nil, false
		}
		return feed.NewDocument(p.catalogue(f, base.URL, q, items)), true
	}
	// The whole catalogue is cached: count its pages without listing it.
	total := len(f.Skills)
	if f.AgentsConfigured {
		total += len(f.Agents)
	}
	if q.N > p.pageCount(total) {
		return nil, false
	}
	return f.Page(base, feed.PageKey{Kind: kindCatalogue, N: q.N}, func(base string) ([]byte, bool) {
		return p.catalogue(f, base, q, p.entries(f, q)), true
	})
}

// pageCount is how many catalogue pages list n items: one at least.
func (p *Renderer) pageCount(n int) int {
	if p.opts.PageSize <= 0 {
		return 1
	}
	return max(1, (n+p.opts.PageSize-1)/p.opts.PageSize)
}

// catalogue renders page q.N of items.
func (p *Renderer) catalogue(f *feed.Feed, base string, q Query, items []hit) []byte {
	pages, start, end := p.pageCount(len(items)), 0, len(items)
	if size := p.opts.PageSize; size > 0 {
		start, end = (q.N-1)*size, min(len(items), q.N*size)
	}
	d := catalogueData{Site: siteOf(f), Title: siteOf(f).Name, Query: q.Text, Tag: q.Tag, Kind: q.Kind, Agents: f.AgentsConfigured,
		Total: len(items), N: q.N, Pages: pages}
	for _, h := range items[start:end] {
		d.Items = append(d.Items, h.entry(f.Prefix()))
	}
	if q.Text != "" {
		d.Title = q.Text + " · " + d.Title
	}
	if q.N > 1 {
		d.Prev = catalogueHref(f.Prefix(), q, q.N-1)
	}
	if q.N < pages {
		d.Next = catalogueHref(f.Prefix(), q, q.N+1)
	}
	if len(f.Skills) > 0 {
		d.Install = &installLine{Label: "every skill of this feed", Line: p.skillsCLI(base + f.Prefix())}
	}
	return p.execute(kindCatalogue, d)
}

// hit is one item q finds, before it is shown.
type hit struct {
	feed.Summary
	kind, pattern string
}

// entries are the items q finds, skills first, each list in the search's
// order.
func (p *Renderer) entries(f *feed.Feed, q Query) []hit {
	var out []hit
	add := func(hits []feed.Summary, kind, pattern string) {
		for _, h := range hits {
			if q.Tag == "" || slices.Contains(h.Tags, q.Tag) {
				out = append(out, hit{h, kind, pattern})
			}
		}
	}
	if q.Kind != item.KindSubagent.String() {
		add(f.SearchSkills(q.Text), "skill", feed.PathUISkill)
	}
	if q.Kind != item.KindSkill.String() && f.AgentsConfigured {
		add(f.SearchAgents(q.Text), "sub-agent", feed.PathUIAgent)
	}
	return out
}

// entry is how the catalogue shows h; only the items of the page shown
// are made into entries.
func (h hit) entry(prefix string) entry {
	return entry{Name: h.Name, Kind: h.kind, Href: prefix + feed.Href(h.pattern, h.Name), Description: h.Description,
		Version: h.LatestVersion, Tags: tagLinks(prefix, h.Tags)}
}

func tagLinks(prefix string, tags []string) []tagLink {
	out := make([]tagLink, len(tags))
	for i, t := range tags {
		out[i] = tagLink{Name: t, Href: catalogueHref(prefix, Query{Tag: t}, 1)}
	}
	return out
}

// catalogueHref is the root-relative URL of page n of the catalogue for q.
func catalogueHref(prefix string, q Query, n int) string {
	v := url.Values{}
	if q.Text != "" {
		v.Set("q", q.Text)
	}
	if q.Tag != "" {
		v.Set("tag", q.Tag)
	}
	if q.Kind != "" {
		v.Set("kind", q.Kind)
	}
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	if len(v) == 0 {
		return prefix + feed.PathRoot
	}
	return prefix + feed.PathRoot + "?" + v.Encode()
}

// Item pages

type fileRow struct {
	Path, URL, Human, Short string
	Size                    int64
}

type versionRow struct {
	Version, Href, Published, Type string
	Latest, Current                bool
}

type itemData struct {
	Site                        site
	Title, Kind                 string
	Name, Description           string
	Tags                        []tagLink
	Version, Latest, LatestHref string
	IsLatest                    bool
	Published, Digest           string
	Subagent                    *tagLink
	Install                     []installLine
	Files                       []fileRow
	Versions                    []versionRow
	DocFile                     string
	Body                        template.HTML
}

// Skill returns the page of version (or of the latest, for "" or
// "latest") of the skill name in the view f; ok is false when the view
// has no such skill or version.
func (p *Renderer) Skill(f *feed.Feed, blobs Blobs, base feed.Base, name, version string) (*feed.Document, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return nil, false
	}
	v, ok := pick(sk, version)
	if !ok {
		return nil, false
	}
	return f.Page(base, feed.PageKey{Kind: item.KindSkill.String(), Name: name, Version: v.Version}, func(base string) ([]byte, bool) {
		md, _ := blobs.Get(v.SkillMD)
		d := itemPage(f, sk, v, feed.PathUISkillVersion, func(v *item.SkillVersion) string { return string(v.Type) }, f.SkillPublished)
		d.Kind, d.DocFile = "skill", skill.FileName
		feedURL := base + f.Prefix()
		d.Install = []installLine{
			{Label: "This skill, with the skills CLI (its one-skill feed)", Line: p.skillsCLI(feedURL + feed.ScopedFeedHref(name))},
			{Label: "Every skill of this feed, with the skills CLI", Line: p.skillsCLI(feedURL)},
			p.netclaw(f, base),
		}
		if v.Type == item.TypeArchive {
			zip, _ := blobs.Get(v.Archive)
			d.Files = append(d.Files, newFileRow(feed.ArchiveFile, feed.ArtifactURL(feedURL, v), v.Archive, int64(len(zip))))
			d.Files = append(d.Files, newFileRow(skill.FileName, feed.SkillMDURL(feedURL, v), v.SkillMD, int64(len(md))))
			d.Install = append(d.Install, installLine{Label: "The archive of " + v.Version + ", with curl",
				Line: curl(v.Name+"-"+v.Version+".zip", feed.ArtifactURL(feedURL, v))})
		} else {
			d.Files = append(d.Files, newFileRow(skill.FileName, feed.ArtifactURL(feedURL, v), v.SkillMD, int64(len(md))))
			d.Install = append(d.Install, installLine{Label: "The " + skill.FileName + " of " + v.Version + ", with curl",
				Line: curl(skill.FileName, feed.ArtifactURL(feedURL, v))})
		}
		for _, r := range v.Resources {
			d.Files = append(d.Files, newFileRow(r.Path, feed.ResourceURL(feedURL, r), r.Digest, r.Size))
		}
		if v.Subagent != "" {
			if _, ok := f.Agent(v.Subagent); ok {
				d.Subagent = &tagLink{Name: v.Subagent, Href: f.Prefix() + feed.Href(feed.PathUIAgent, v.Subagent)}
			}
		}
		resolve := func(dest string) (string, bool) {
			if r, ok := v.Resource(dest); ok {
				return feed.ResourceURL(feedURL, *r), true
			}
			return "", false
		}
		d.Body = renderMarkdown(skill.Body(md), resolve)
		return p.execute("item", d), true
	})
}

// Agent returns the page of version (or of the latest) of the sub-agent
// name in the view f.
func (p *Renderer) Agent(f *feed.Feed, blobs Blobs, base feed.Base, name, version string) (*feed.Document, bool) {
	a, ok := f.Agent(name)
	if !ok {
		return nil, false
	}
	v, ok := pick(a, version)
	if !ok {
		return nil, false
	}
	return f.Page(base, feed.PageKey{Kind: item.KindSubagent.String(), Name: name, Version: v.Version}, func(base string) ([]byte, bool) {
		md, _ := blobs.Get(v.Digest)
		d := itemPage(f, a, v, feed.PathUIAgentVersion, func(*item.AgentVersion) string { return feed.AgentArtifactType }, f.AgentPublished)
		d.Kind, d.DocFile = "sub-agent", feed.AgentFile
		feedURL := base + f.Prefix()
		d.Files = []fileRow{newFileRow(feed.AgentFile, feed.AgentURL(feedURL, v), v.Digest, int64(len(md)))}
		d.Install = []installLine{p.netclaw(f, base),
			{Label: "The " + feed.AgentFile + " of " + v.Version + ", with curl", Line: curl(v.Name+".md", feed.AgentURL(feedURL, v))}}
		d.Body = renderMarkdown(skill.Body(md), func(string) (string, bool) { return "", false })
		return p.execute("item", d), true
	})
}

// pick resolves a version string of it: "" and "latest" are the latest.
func pick[V item.Version](it *item.Item[V], version string) (V, bool) {
	if version == "" || version == item.LatestAlias {
		return it.Latest, true
	}
	return it.Version(version)
}

// itemPage fills what skill and sub-agent pages share; versionPattern
// is the path of a version's page, typ names a version's artifact type.
func itemPage[V item.Version](f *feed.Feed, it *item.Item[V], v V, versionPattern string, typ func(V) string, publishedAt func(*item.VersionInfo) time.Time) itemData {
	info, latest := v.Info(), it.Latest.Info()
	d := itemData{Site: siteOf(f), Title: it.Name + " · " + siteOf(f).Name, Name: it.Name, Description: info.Description,
		Tags: tagLinks(f.Prefix(), info.List("tags")), Version: info.Version, Latest: latest.Version,
		LatestHref: f.Prefix() + feed.Href(versionPattern, it.Name, latest.Version), IsLatest: info == latest,
		Published: published(publishedAt(info)), Digest: v.ArtifactDigest().String()}
	for _, ov := range it.Versions {
		oi := ov.Info()
		d.Versions = append(d.Versions, versionRow{Version: oi.Version, Href: f.Prefix() + feed.Href(versionPattern, it.Name, oi.Version),
			Published: published(publishedAt(oi)), Type: typ(ov), Latest: oi == latest, Current: oi == info})
	}
	return d
}

func published(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func newFileRow(path, u string, d content.Digest, size int64) fileRow {
	return fileRow{Path: path, URL: u, Size: size, Human: humanSize(size), Short: d.String()[:len("sha256:")+12] + "…"}
}

// humanSize writes n bytes for people: 512 B, 1.5 KiB, 2.0 MiB.
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := min(int(math.Log(float64(n))/math.Log(1024)), 3)
	return strconv.FormatFloat(float64(n)/math.Pow(1024, float64(exp)), 'f', 1, 64) + " " + [...]string{"", "KiB", "MiB", "GiB"}[exp]
}

// skillsCLI is the skills CLI's line that installs from the feed at u.
func (p *Renderer) skillsCLI(u string) string {
	line := "npx skills add " + u
	if p.opts.Private {
		line = "DISABLE_TELEMETRY=1 " + line
	}
	return line
}

// curl is the curl line that saves u as file.
func curl(file, u string) string {
	return "curl -fL -o " + file + " '" + u + "'"
}

// netclaw is the feed entry for netclaw's settings (SkillFeeds.Feeds):
// the server's base URL, never a path token (netclaw reads the sub-agent
// tree at the host's root), with the token as the feed's key.
func (p *Renderer) netclaw(f *feed.Feed, base string) installLine {
	name := orDefault(f.Server().Name, "skillserver")
	key := ""
	switch {
	case strings.HasPrefix(f.Prefix(), feed.PathTokenPrefix):
		key = `, "ApiKey": "` + strings.TrimPrefix(f.Prefix(), feed.PathTokenPrefix) + `"`
	case p.opts.Private:
		key = `, "ApiKey": "<your read token>"`
	}
	return installLine{Label: "Every skill and sub-agent of this feed, in netclaw's settings",
		Line: "{\n  \"SkillFeeds\": {\n    \"Feeds\": [\n      { \"Name\": \"" + name + "\", \"Url\": \"" + base + "\"" + key + " }\n    ]\n  }\n}"}
}

// Problems

type problemsData struct {
	Site             site
	Title            string
	Generation       uint64
	Errors, Warnings int
	Problems         []skill.Problem
}

// Problems is the operator's page of a snapshot's problems: every path,
// rule and message of the last scan. It is not cached: only the admin
// reads it.
func (p *Renderer) Problems(f *feed.Feed, generation uint64, problems []skill.Problem) []byte {
	d := problemsData{Site: siteOf(f), Title: "Problems · " + siteOf(f).Name, Generation: generation, Problems: problems}
	for _, pr := range problems {
		if pr.Severity == skill.SeverityWarning {
			d.Warnings++
		} else {
			d.Errors++
		}
	}
	return p.execute("problems", d)
}

// NotFound is the page of a miss, for a reader who asked for HTML.
func (p *Renderer) NotFound(f *feed.Feed, message string) []byte {
	return p.execute("notfound", struct {
		Site           site
		Title, Message string
	}{siteOf(f), "Not found · " + siteOf(f).Name, message})
}

// Package page owns the HTML catalogue people browse, search and install
// from: the catalogue of a feed view, a page per skill and per sub-agent,
// and the operator's view of a scan's problems, rendered on the server
// with html/template from a *feed.Feed (one reader's view), and the
// embedded assets those pages load. Markdown from a skill is rendered
// with goldmark and sanitised with bluemonday (markdown.go); diffs are
// go-udiff's.
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
	"net/url"
	"slices"
	"strconv"

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
	// MaxViewBytes is the largest file the file view shows and the
	// version comparison diffs; 0: no bound.
	MaxViewBytes int64
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

// Blobs holds the bytes of the snapshot's digests (*content.Store).
type Blobs interface {
	Get(d content.Digest) ([]byte, bool)
	Blob(d content.Digest) (content.Blob, bool)
}

// site is what every page's frame shows.
type site struct {
	Name, Description, Version string
	Prefix                     string // every root-relative href starts with it
	CSS                        template.CSS
	Icon, Script               string
	Logo                       string // server_logo's href; "" for none
	ScriptIntegrity            string // the script's hash, which SecurityPolicy allows
	Policy                     string // SecurityPolicy as a page's meta element may carry it
	IndexHref, APIHref         string
	OpenAPIHref                string
}

func siteOf(f *feed.Feed) site {
	info := f.Server()
	s := site{Name: orDefault(info.Name, "skillserver"), Description: info.Description, Version: orDefault(info.Version, "dev"),
		Prefix: f.Prefix(), CSS: template.CSS(styleCSS), Icon: assets.icon.href, Script: assets.script.href, ScriptIntegrity: assets.script.integrity,
		IndexHref: feed.DocKey{Kind: feed.DocRFCIndex}.Path(), APIHref: feed.PathSkillSearch, OpenAPIHref: feed.PathOpenAPI,
		Logo: logoHref(info), Policy: metaPolicy}
	if f.IsStatic() {
		s.APIHref = "" // an export holds no read API
	}
	return s
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
	Name, Kind, KindParam, Href, Description, Version string
	Tags                                              []tagLink
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
	// Filter is, on an export's catalogue (no server to search), the
	// JSON the page's script filters the list with: the RFC index.
	Filter string
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
	if f.IsStatic() {
		d.Filter = f.Prefix() + feed.DocKey{Kind: feed.DocRFCIndex}.Path()
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
	kindParam := item.KindSkill.String()
	if h.pattern == feed.PathUIAgent {
		kindParam = item.KindSubagent.String()
	}
	return entry{Name: h.Name, Kind: h.kind, KindParam: kindParam, Href: prefix + feed.Href(h.pattern, h.Name), Description: h.Description,
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

// Unauthorized is the page of a private feed for a reader without a read
// token: how to open it with one (the /t/<token>/ address under base, a
// URL or ""). It names the server, never an item.
func (p *Renderer) Unauthorized(f *feed.Feed, base string) []byte {
	s := siteOf(f)
	s.Prefix = ""
	return p.execute("unauthorized", struct {
		Site        site
		Title, Base string
		TokenPrefix string
	}{s, "Sign-in needed · " + s.Name, base, feed.PathTokenPrefix})
}

package page

import (
	"net/url"
	"strings"

	"github.com/skillserver/skillserver/internal/feed"
)

// StaticFile is one file of the catalogue as an export writes it: a page
// or an asset the pages load.
type StaticFile struct {
	// Path is the URL path the pages link, escaped ("/" for the
	// catalogue).
	Path string
	// File is where a static host finds it: Path itself for an asset,
	// Path + "/index.html" for a page (a page's path is also the folder
	// of the pages below it: /ui/skills/NAME and /ui/skills/NAME/VERSION).
	File        string
	Body        []byte
	ContentType string
	Immutable   bool // the URL names its bytes
}

// Static lists every page of the export's view f (feed.Feed.Static) for
// base: the catalogue (every item on one page; the
// reader filters it in the browser), each version's page of every skill
// and sub-agent and the latest's, each skill version's file views, the
// comparisons its page links (each version with the one before), and the
// assets. Each page is the bytes serve answers for the same view and
// base; the view leaves out what only a running server does (the live
// fetch count, the clawhub and MCP install lines, search by query).
func (p *Renderer) Static(f *feed.Feed, blobs Blobs, base feed.Base) []StaticFile {
	// A base with a path (a project's GitHub Pages) is the pages' link
	// prefix, as a path token is serve's: the links stay root-relative.
	if u, err := url.Parse(base.URL); err == nil && strings.Trim(u.Path, "/") != "" {
		f = f.StaticUnder(strings.TrimSuffix(u.EscapedPath(), "/"))
		base.URL = strings.TrimSuffix(base.URL, strings.TrimSuffix(u.EscapedPath(), "/"))
	}
	var out []StaticFile
	addPage := func(path string, doc *feed.Document, ok bool) {
		if !ok {
			return
		}
		file := strings.TrimSuffix(path, "/") + "/index.html"
		out = append(out, StaticFile{Path: path, File: file, Body: doc.Body, ContentType: ContentType})
	}
	doc, ok := p.Catalogue(f, base, Query{N: 1})
	addPage(feed.PathRoot, doc, ok)
	for _, sk := range f.Skills {
		doc, ok := p.Skill(f, blobs, base, sk.Name, "")
		addPage(feed.Href(feed.PathUISkill, sk.Name), doc, ok)
		for i, v := range sk.Versions {
			doc, ok := p.Skill(f, blobs, base, sk.Name, v.Version)
			addPage(feed.Href(feed.PathUISkillVersion, sk.Name, v.Version), doc, ok)
			for _, r := range v.Files() {
				if _, ok := p.text(blobs, r); ok {
					doc, ok := p.File(f, blobs, base, sk.Name, v.Version, r.Path)
					addPage(feed.Href(feed.PathUISkillFile, sk.Name, v.Version, r.Path), doc, ok)
				}
			}
			if i+1 < len(sk.Versions) { // newest first, as the page links them
				older := sk.Versions[i+1].Version
				doc, ok := p.Compare(f, blobs, base, sk.Name, v.Version, older)
				addPage(feed.Href(feed.PathUISkillCompare, sk.Name, v.Version, older), doc, ok)
			}
		}
	}
	if f.AgentsConfigured {
		for _, a := range f.Agents {
			doc, ok := p.Agent(f, blobs, base, a.Name, "")
			addPage(feed.Href(feed.PathUIAgent, a.Name), doc, ok)
			for _, v := range a.Versions {
				doc, ok := p.Agent(f, blobs, base, a.Name, v.Version)
				addPage(feed.Href(feed.PathUIAgentVersion, a.Name, v.Version), doc, ok)
			}
		}
	}
	for _, a := range []*asset{&assets.script, &assets.icon} {
		out = append(out, StaticFile{Path: a.href, File: a.href, Body: a.body, ContentType: a.contentType, Immutable: true})
	}
	if info := f.Server(); len(info.Logo) > 0 {
		href := logoHref(info)
		out = append(out, StaticFile{Path: href, File: href, Body: info.Logo, ContentType: info.LogoType, Immutable: true})
	}
	return out
}

package page

import (
	"encoding/json"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// Item pages: the rendered SKILL.md (or agent.md) is the main column;
// a side panel (a top block on a phone) holds what a reader looks for
// before installing: the version, the install line of the client they
// choose, the source, licence, compatibility, published date, fetches
// and tags.

type fileRow struct {
	Path, URL, Human, Short string
	ViewHref                string // the file view; "" for a binary or oversized file
	Size                    int64
}

type versionRow struct {
	Version, Href, Published, Type string
	CompareHref, Older             string // what changed from the next older version
	Latest, Current                bool
}

// sourceLink is where a version came from, as provenance knows it.
type sourceLink struct {
	Repository, Commit, Short, Path string
	Href                            string // the folder at the commit on a known forge; "" else
}

type itemData struct {
	Site                        site
	Title, Kind                 string
	Name, Description           string
	Tags                        []tagLink
	Version, Latest, LatestHref string
	IsLatest                    bool
	Published, PublishedISO     string
	Digest                      string
	License, Compatibility      string
	Source                      *sourceLink
	FetchesHref                 string // the live count's search URL; "" on an export
	Subagent                    *tagLink
	Clients                     []client
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
		if src := f.SkillSource(&v.VersionInfo); src != nil {
			d.Source = newSourceLink(src.Repository, src.Commit, src.Path)
		}
		fm := skill.FrontmatterJSON(md)
		d.License, d.Compatibility = frontmatterString(fm, "license"), frontmatterString(fm, "compatibility")
		if !f.IsStatic() {
			d.FetchesHref = f.Prefix() + feed.PathFind + "?q=" + url.QueryEscape(name)
		}
		feedURL := base + f.Prefix()
		d.Clients = p.skillClients(f, base, feedURL, v)
		if v.Type == item.TypeArchive {
			zip, _ := blobs.Blob(v.Archive)
			d.Files = append(d.Files, newFileRow(feed.ArchiveFile, feed.ArtifactURL(feedURL, v), v.Archive, zip.Size()))
		}
		for _, r := range v.Files() {
			row := newFileRow(r.Path, rawURL(feedURL, v, r), r.Digest, r.Size)
			if _, ok := p.text(blobs, r); ok {
				row.ViewHref = f.Prefix() + feed.Href(feed.PathUISkillFile, name, v.Version, r.Path)
			}
			d.Files = append(d.Files, row)
		}
		if v.Subagent != "" {
			if _, ok := f.Agent(v.Subagent); ok {
				d.Subagent = &tagLink{Name: v.Subagent, Href: f.Prefix() + feed.Href(feed.PathUIAgent, v.Subagent)}
			}
		}
		for i := range d.Versions {
			if row := &d.Versions[i]; row.Older != "" {
				row.CompareHref = f.Prefix() + feed.Href(feed.PathUISkillCompare, name, row.Version, row.Older)
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
		if src := f.AgentSource(&v.VersionInfo); src != nil {
			d.Source = newSourceLink(src.Repository, src.Commit, src.Path)
		}
		feedURL := base + f.Prefix()
		d.Files = []fileRow{newFileRow(feed.AgentFile, feed.AgentURL(feedURL, v), v.Digest, int64(len(md)))}
		d.Clients = p.agentClients(f, base, feedURL, v)
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
	at := publishedAt(info).UTC()
	d := itemData{Site: siteOf(f), Title: it.Name + " · " + siteOf(f).Name, Name: it.Name, Description: info.Description,
		Tags: tagLinks(f.Prefix(), info.List("tags")), Version: info.Version, Latest: latest.Version,
		LatestHref: f.Prefix() + feed.Href(versionPattern, it.Name, latest.Version), IsLatest: info == latest,
		Published: at.Format(time.DateOnly), PublishedISO: at.Format(time.RFC3339), Digest: v.ArtifactDigest().String()}
	for i, ov := range it.Versions {
		oi := ov.Info()
		row := versionRow{Version: oi.Version, Href: f.Prefix() + feed.Href(versionPattern, it.Name, oi.Version),
			Published: published(publishedAt(oi)), Type: typ(ov), Latest: oi == latest, Current: oi == info}
		if i+1 < len(it.Versions) { // newest first: the next is older
			row.Older = it.Versions[i+1].Info().Version
		}
		d.Versions = append(d.Versions, row)
	}
	return d
}

func published(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// frontmatterString is the string value of a top-level front matter key;
// "" when it is absent or not a string.
func frontmatterString(fm json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(fm, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// newSourceLink shows a version's source (provenance): the link goes to
// the folder at the commit on the forges whose URL layout is known, and
// nowhere else.
func newSourceLink(repository, commit, folder string) *sourceLink {
	l := &sourceLink{Repository: repository, Commit: commit, Short: commit[:min(12, len(commit))], Path: folder}
	repo := strings.TrimSuffix(repository, ".git")
	u, err := url.Parse(repo)
	if err != nil || u.Scheme != "https" || u.User != nil || u.RawQuery != "" || commit == "" {
		return l
	}
	tree := map[string]string{"github.com": "/tree/", "gitlab.com": "/-/tree/", "codeberg.org": "/src/commit/"}[u.Host]
	if tree != "" {
		l.Href = repo + tree + url.PathEscape(commit) + "/" + feed.Href("*", strings.TrimPrefix(folder, "/"))
	}
	return l
}

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

package page

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// The file view (a text file of a skill's version with line numbers and
// its pinned raw link) and the version comparison (the files added,
// removed and changed between two versions, with a unified diff of each
// changed text file). Both show at most Options.MaxViewBytes of a file:
// a larger one, or a binary one, offers its download instead.

const (
	kindFile    = "skill-file"
	kindCompare = "skill-compare"
)

// tooLarge reports whether a file of size bytes is over the bound of
// what the pages show (0: no bound).
func (p *Renderer) tooLarge(size int64) bool {
	return p.opts.MaxViewBytes > 0 && size > p.opts.MaxViewBytes
}

// text returns the bytes of the file r when the pages show it as text:
// within the size bound, valid UTF-8 without NUL bytes. A file over the
// bound is not read.
func (p *Renderer) text(blobs Blobs, r item.Resource) ([]byte, bool) {
	if p.tooLarge(r.Size) {
		return nil, false
	}
	b, ok := blobs.Get(r.Digest)
	return b, ok && utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

// codeLine is one numbered line of a file view.
type codeLine struct {
	N    int
	Text string
}

type fileData struct {
	Site                       site
	Title, Name, Version, Path string
	ItemHref, RawURL           string
	Human, Digest              string
	Size                       int64
	Text, TooLarge             bool
	Lines                      []codeLine
}

// File returns the view of the file at path (SKILL.md or a resource) of
// version of the skill name; ok is false when there is no such file.
func (p *Renderer) File(f *feed.Feed, blobs Blobs, base feed.Base, name, version, path string) (*feed.Document, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return nil, false
	}
	v, ok := pick(sk, version)
	if !ok {
		return nil, false
	}
	r, ok := versionFile(v, path)
	if !ok {
		return nil, false
	}
	return f.Page(base, feed.PageKey{Kind: kindFile, Name: name, Version: v.Version, Other: path}, func(base string) ([]byte, bool) {
		b, isText := p.text(blobs, r)
		feedURL := base + f.Prefix()
		d := fileData{Site: siteOf(f), Title: path + " · " + name + " " + v.Version + " · " + siteOf(f).Name, Name: name, Version: v.Version, Path: path,
			ItemHref: f.Prefix() + feed.Href(feed.PathUISkillVersion, name, v.Version), RawURL: rawURL(feedURL, v, r),
			Size: r.Size, Human: humanSize(r.Size), Digest: r.Digest.String(), Text: isText, TooLarge: p.tooLarge(r.Size)}
		if d.Text {
			for i, l := range splitLines(string(b)) {
				d.Lines = append(d.Lines, codeLine{N: i + 1, Text: l})
			}
		}
		return p.execute("file", d), true
	})
}

// versionFile finds path among v's files (SKILL.md and the resources).
func versionFile(v *item.SkillVersion, path string) (item.Resource, bool) {
	for _, r := range v.Files() {
		if r.Path == path {
			return r, true
		}
	}
	return item.Resource{}, false
}

// rawURL is the pinned URL of r, one of v's files.
func rawURL(feedURL string, v *item.SkillVersion, r item.Resource) string {
	if r.Path == skill.FileName && v.Type != item.TypeArchive {
		return feed.ArtifactURL(feedURL, v)
	}
	return feed.ResourceURL(feedURL, r)
}

// splitLines cuts s at newlines; a final newline ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLine is one line of a unified diff, with its class: add, del,
// hunk or ctx.
type diffLine struct{ Class, Text string }

type changedFile struct {
	Path, Note string
	Diff       []diffLine
	Old, New   fileRow
}

type compareData struct {
	Site                       site
	Title, Name, Version, From string
	ItemHref, FromHref         string
	Added, Removed             []fileRow
	Changed                    []changedFile
	Unchanged                  int
}

// Compare returns the page of what changed from version from to version
// to of the skill name; ok is false when the skill lacks either.
func (p *Renderer) Compare(f *feed.Feed, blobs Blobs, base feed.Base, name, to, from string) (*feed.Document, bool) {
	sk, ok := f.Skill(name)
	if !ok {
		return nil, false
	}
	newV, ok1 := pick(sk, to)
	oldV, ok2 := pick(sk, from)
	if !ok1 || !ok2 {
		return nil, false
	}
	render := func(base string) ([]byte, bool) {
		feedURL := base + f.Prefix()
		d := compareData{Site: siteOf(f), Title: oldV.Version + " → " + newV.Version + " · " + name + " · " + siteOf(f).Name,
			Name: name, Version: newV.Version, From: oldV.Version,
			ItemHref: f.Prefix() + feed.Href(feed.PathUISkillVersion, name, newV.Version), FromHref: f.Prefix() + feed.Href(feed.PathUISkillVersion, name, oldV.Version)}
		row := func(v *item.SkillVersion, r item.Resource) fileRow {
			fr := newFileRow(r.Path, rawURL(feedURL, v, r), r.Digest, r.Size)
			if _, ok := p.text(blobs, r); ok {
				fr.ViewHref = f.Prefix() + feed.Href(feed.PathUISkillFile, name, v.Version, r.Path)
			}
			return fr
		}
		oldFiles := oldV.Files()
		for _, r := range newV.Files() {
			i := slices.IndexFunc(oldFiles, func(o item.Resource) bool { return o.Path == r.Path })
			switch {
			case i < 0:
				d.Added = append(d.Added, row(newV, r))
			case oldFiles[i].Digest == r.Digest:
				d.Unchanged++
			default:
				d.Changed = append(d.Changed, p.changed(blobs, row(oldV, oldFiles[i]), row(newV, r), oldV.Version, newV.Version, oldFiles[i], r))
			}
		}
		for _, o := range oldFiles {
			if _, ok := versionFile(newV, o.Path); !ok {
				d.Removed = append(d.Removed, row(oldV, o))
			}
		}
		return p.execute("compare", d), true
	}
	// The comparisons the pages link (each version with the one before)
	// are cached per snapshot like the pages; any other pair is made per
	// request, so that requests cannot fill the cache with every pair of
	// every skill's versions.
	if i := slices.Index(sk.Versions, newV); i >= 0 && i+1 < len(sk.Versions) && sk.Versions[i+1] == oldV {
		return f.Page(base, feed.PageKey{Kind: kindCompare, Name: name, Version: newV.Version, Other: oldV.Version}, render)
	}
	b, _ := render(base.URL)
	return feed.NewDocument(b), true
}

// changed is the diff of a file both versions hold with other bytes.
func (p *Renderer) changed(blobs Blobs, oldRow, newRow fileRow, from, to string, o, n item.Resource) changedFile {
	c := changedFile{Path: n.Path, Old: oldRow, New: newRow}
	ob, oldText := p.text(blobs, o)
	nb, newText := p.text(blobs, n)
	if !oldText || !newText {
		c.Note = "Binary or larger than this server shows: compare the downloads."
		return c
	}
	text := udiff.Unified(from+"/"+o.Path, to+"/"+n.Path, string(ob), string(nb))
	for _, l := range splitLines(text) {
		cls := "ctx"
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
			cls = "hdr"
		case strings.HasPrefix(l, "@@"):
			cls = "hunk"
		case strings.HasPrefix(l, "+"):
			cls = "add"
		case strings.HasPrefix(l, "-"):
			cls = "del"
		}
		c.Diff = append(c.Diff, diffLine{Class: cls, Text: l})
	}
	return c
}

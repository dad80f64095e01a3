package page

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A skill's text is the author's, and a page shows it to every reader of
// the feed: nothing in it may run or load. Three layers see to that:
//
//  1. goldmark renders Markdown without raw HTML (it is dropped, as goldmark
//     does unless told it is safe), and the link pass below keeps an image
//     only when it names a file of the same version, rewritten to that
//     file's pinned URL on this server;
//  2. bluemonday's policy for user content then keeps only inert elements
//     and attributes, and links with http, https or mailto URLs or
//     relative ones: no script, style, event handler, javascript: or data:
//     URL survives;
//  3. the pages' Content-Security-Policy (SecurityPolicy) runs no script
//     but the pages' own, by its hash, and loads images from this origin
//     only.

var (
	markdown = goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkPass{}, 100))),
	)
	sanitizer = newSanitizer()
)

func newSanitizer() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(true)
	p.RequireNoReferrerOnLinks(true)
	// GFM task lists: disabled checkboxes, nothing else of a form.
	p.AllowAttrs("type").Matching(bluemonday.Paragraph).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	return p
}

// resolveKey carries a render's resolve function to the link pass.
var resolveKey = parser.NewContextKey()

// renderMarkdown renders md as sanitised HTML. resolve maps a relative
// link or image destination that names a file of the same version to
// that file's URL.
func renderMarkdown(md []byte, resolve func(dest string) (string, bool)) template.HTML {
	ctx := parser.NewContext()
	ctx.Set(resolveKey, resolve)
	var buf bytes.Buffer
	if err := markdown.Convert(md, &buf, parser.WithContext(ctx)); err != nil {
		// goldmark fails only when writing to buf fails, which it
		// cannot; show the text rather than nothing.
		return template.HTML(template.HTMLEscapeString(string(md)))
	}
	return template.HTML(sanitizer.SanitizeBytes(buf.Bytes())) //nolint:gosec // sanitised just now
}

// linkPass rewrites link and image destinations that name a file of the
// version to its pinned URL, and turns every other image into its
// alternative text: a skill's page loads no image from elsewhere.
type linkPass struct{}

func (linkPass) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	resolve, _ := pc.Get(resolveKey).(func(string) (string, bool))
	if resolve == nil {
		return
	}
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			// The page's own headings are h1 and h2; the file's go below.
			n.Level = min(n.Level+2, 6)
		case *ast.Link:
			if u, ok := resolveFile(resolve, string(n.Destination)); ok {
				n.Destination = []byte(u)
			}
		case *ast.Image:
			if u, ok := resolveFile(resolve, string(n.Destination)); ok {
				n.Destination = []byte(u)
			} else {
				images = append(images, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		parent := img.Parent()
		for c := img.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, img, c)
			c = next
		}
		parent.RemoveChild(parent, img)
	}
}

// resolveFile resolves a relative destination ("scripts/x.sh",
// "./x.sh", without query or fragment) to a file of the version.
func resolveFile(resolve func(string) (string, bool), dest string) (string, bool) {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	return resolve(strings.TrimPrefix(u.Path, "./"))
}

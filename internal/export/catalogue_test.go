package export_test

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/page"
)

// catalogueFiles is the export of the example tree, by key.
func catalogueFiles(t *testing.T, catalogue bool) map[string]export.File {
	t.Helper()
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: base, Catalogue: catalogue, ViewMaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]export.File{}
	for _, f := range files {
		out[f.Key] = f
	}
	return out
}

// links lists the href and src attributes of an HTML page.
func links(t *testing.T, body []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n := range doc.Descendants() {
		for _, a := range n.Attr {
			if a.Key == "href" || a.Key == "src" || a.Key == "data-filter" {
				out = append(out, a.Val)
			}
		}
	}
	return out
}

// TestExportCatalogue: with the catalogue, the export holds the
// catalogue at index.html, every page of every skill and sub-agent
// version, each text file's view (not the binary logo.png's), the
// comparison of each version with the one before, and the assets at
// their digest-named paths, cached for good; every link of every page
// leads to a file of the export (no page links a route only a running
// server answers); no page carries what needs a live server; the pages
// name their policy in a meta element; _headers gives the pages' policy
// to the pages and the inert one to every other path, never both to one.
func TestExportCatalogue(t *testing.T) {
	files := catalogueFiles(t, true)
	for _, key := range []string{
		"index.html", "ui/skills/k8s-deploy/index.html", "ui/skills/k8s-deploy/1.0.0/index.html", "ui/skills/k8s-deploy/2.0.0-rc.1/index.html",
		"ui/skills/k8s-deploy/1.2.0/files/scripts/deploy.sh/index.html", "ui/skills/k8s-deploy/1.2.0/files/SKILL.md/index.html",
		"ui/skills/k8s-deploy/1.2.0/compare/1.0.0/index.html", "ui/skills/k8s-deploy/2.0.0-rc.1/compare/1.2.0/index.html",
		"ui/subagents/technical-support-diagnostician/index.html", "ui/subagents/technical-support-diagnostician/0.9.0/index.html",
	} {
		f, ok := files[key]
		if !ok {
			t.Errorf("the export lacks %s", key)
			continue
		}
		if f.ContentType != page.ContentType || f.CacheControl != feed.CacheShort || !bytes.Contains(f.Body, []byte(`<meta http-equiv="Content-Security-Policy"`)) {
			t.Errorf("%s: %q, %q, or no policy in the page", key, f.ContentType, f.CacheControl)
		}
		if bytes.Contains(f.Body, []byte("data-live")) || bytes.Contains(f.Body, []byte(feed.PathFind)) {
			t.Errorf("%s carries what needs a live server", key)
		}
	}
	if _, ok := files["ui/skills/k8s-deploy/1.2.0/files/assets/logo.png/index.html"]; ok {
		t.Error("the export holds a text view of a PNG")
	}
	if _, ok := files["ui/skills/k8s-deploy/2.0.0-rc.1/compare/1.0.0/index.html"]; ok {
		t.Error("the export holds a comparison no page links")
	}
	if !bytes.Contains(files["index.html"].Body, []byte(`data-filter="/.well-known/agent-skills/index.json"`)) {
		t.Error("the exported catalogue does not filter over the RFC index")
	}

	for _, href := range page.AssetHrefs() {
		f, ok := files[strings.TrimPrefix(href, "/")]
		if !ok || f.CacheControl != feed.CacheImmutable {
			t.Errorf("asset %s: exported %v, Cache-Control %q", href, ok, f.CacheControl)
		}

	}
	for key, f := range files {
		if f.ContentType != page.ContentType {
			continue
		}
		for _, l := range links(t, f.Body) {
			u, err := url.Parse(l)
			if err != nil {
				t.Errorf("%s links %q: %v", key, l, err)
				continue
			}
			if u.IsAbs() {
				if !strings.HasPrefix(l, base+"/") {
					continue // the source repository, elsewhere
				}
				u, _ = url.Parse(strings.TrimPrefix(l, base))
			}
			if u.Path == "" { // a fragment
				continue
			}
			p, _ := url.PathUnescape(strings.TrimPrefix(u.Path, "/"))
			_, file := files[p]
			_, dir := files[strings.TrimPrefix(strings.TrimSuffix(p, "/")+"/index.html", "/")]
			if !file && !dir {
				t.Errorf("%s links %s, which the export does not hold", key, l)
			}
		}
	}
	headers := string(files[export.HeadersFile].Body)
	rules := map[string]string{}
	var path string
	for line := range strings.Lines(headers) {
		switch {
		case strings.HasPrefix(line, "/"):
			path = strings.TrimSpace(line)
			if _, dup := rules[path]; dup {
				t.Errorf("_headers has two rules for %s", path)
			}
			rules[path] = ""
		case strings.HasPrefix(line, "  Content-Security-Policy: "):
			rules[path] = strings.TrimSpace(strings.TrimPrefix(line, "  Content-Security-Policy: "))
		}
	}
	for p, want := range map[string]string{"/": page.SecurityPolicy, "/ui/*": page.SecurityPolicy, "/api/*": "default-src 'none'; sandbox", "/.well-known/*": "default-src 'none'; sandbox"} {
		if rules[p] != want {
			t.Errorf("_headers: %s gets policy %q, want %q", p, rules[p], want)
		}
	}

	plain := catalogueFiles(t, false)
	for key := range plain {
		if key == "index.html" || strings.HasPrefix(key, "ui/") {
			t.Errorf("without the catalogue the export holds %s", key)
		}
	}
	if h := string(plain[export.HeadersFile].Body); strings.Contains(h, "/ui/") || !strings.Contains(h, "/api/*") {
		t.Errorf("_headers without the catalogue:\n%s", h)
	}
	if n := len(files) - len(plain); n < 25 {
		t.Errorf("the catalogue adds %d files", n)
	}
}

// TestExportCatalogueUnderAPath: an export served below a path (a
// project's GitHub Pages) keeps its files at the same keys, and its pages
// link below that path, root-relative, as serve's pages link below a path
// token.
func TestExportCatalogueUnderAPath(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	snap := build(t, skills, agents)
	const under = "https://owner.github.io/team-skills"
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: under, Catalogue: true})
	if err != nil {
		t.Fatal(err)
	}
	var index []byte
	for _, f := range files {
		if f.Key == "index.html" {
			index = f.Body
		}
	}
	ls := links(t, index)
	if !slices.Contains(ls, "/team-skills/ui/skills/k8s-deploy") || !slices.Contains(ls, "/team-skills/.well-known/agent-skills/index.json") {
		t.Errorf("the catalogue under %s links %q", under, ls)
	}
	for _, l := range ls {
		if strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "/team-skills/") {
			t.Errorf("the catalogue under %s links %s, outside it", under, l)
		}
	}
	if !bytes.Contains(index, []byte("skills add "+under+"<")) {
		t.Error("the catalogue's install line does not name the export's base URL")
	}
}

package httpapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/fixture"
)

// browserAccept is what Chromium sends for a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"

func TestPrefersHTML(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"*/*", false},
		{"text/*", false},
		{"application/json", false},
		{"application/json, */*;q=0.5", false},
		{browserAccept, true},
		{"text/html", true},
		{"TEXT/HTML", true},
		{"application/xhtml+xml", true},
		{"text/html;q=0", false},
		{"text/html;q=0.5, application/json", false},
		{"application/json;q=0.5, text/html", true},
		{"text/html, application/json", true}, // a tie goes to HTML
		{"text/html;q=2", false},              // not a valid q
		{"text/html;q=abc, application/json;q=0.1", false},
		{"garbage;;, text/html", true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		if got := prefersHTML(r); got != tc.want {
			t.Errorf("Accept %q: prefersHTML = %v, want %v", tc.accept, got, tc.want)
		}
	}
}

// goldenPages names one example of every page, from the example tree.
var goldenPages = []struct{ file, path string }{
	{"page-catalogue.html", "/"},
	{"page-search.html", "/?q=review"},
	{"page-tag.html", "/?tag=deploy"},
	{"page-skill.html", "/ui/skills/k8s-deploy"},
	{"page-skill-version.html", "/ui/skills/k8s-deploy/1.0.0"},
	{"page-skill-md.html", "/ui/skills/release-notes"},
	{"page-subagent.html", "/ui/subagents/technical-support-diagnostician"},
	{"page-file.html", "/ui/skills/k8s-deploy/1.2.0/files/scripts/deploy.sh"},
	{"page-file-binary.html", "/ui/skills/k8s-deploy/1.2.0/files/assets/logo.png"},
	{"page-compare.html", "/ui/skills/k8s-deploy/1.2.0/compare/1.0.0"},
}

func TestPagesGolden(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	for _, g := range goldenPages {
		r := do(t, s, "GET", g.path, "Accept", browserAccept)
		if r.code != http.StatusOK || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%s: status %d, type %q: %s", g.path, r.code, r.header.Get("Content-Type"), r.body)
		}
		checkGolden(t, g.file, r.body)
	}
}

// TestRootNegotiation: / is the catalogue for a client that prefers
// HTML, the text and Link headers for every other; misses stay JSON
// outside the pages, and are HTML on them only for HTML readers.
func TestRootNegotiation(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	for _, tc := range []struct {
		name, path, accept string
		code               int
		ctype              string
	}{
		{"curl", "/", "*/*", 200, "text/plain; charset=utf-8"},
		{"no accept", "/", "", 200, "text/plain; charset=utf-8"},
		{"json", "/", "application/json", 200, "text/plain; charset=utf-8"},
		{"browser", "/", browserAccept, 200, "text/html; charset=utf-8"},
		{"browser miss", "/nope", browserAccept, 404, jsonContentType},
		{"browser API", "/api/v1/skills", browserAccept, 200, jsonContentType},
		{"browser document", "/manifest.json", browserAccept, 200, jsonContentType},
		{"page miss, browser", "/ui/skills/nope", browserAccept, 404, "text/html; charset=utf-8"},
		{"page miss, json", "/ui/skills/nope", "application/json", 404, jsonContentType},
		{"version miss", "/ui/skills/k8s-deploy/9.9.9", browserAccept, 404, "text/html; charset=utf-8"},
		{"page past the last", "/?page=2", browserAccept, 404, "text/html; charset=utf-8"},
		{"bad page", "/?page=x", browserAccept, 400, jsonContentType},
		{"filtered past the last", "/?q=review&page=9", browserAccept, 404, "text/html; charset=utf-8"},
		{"skill page for json", "/ui/skills/k8s-deploy", "application/json", 200, "text/html; charset=utf-8"},
		{"latest alias", "/ui/skills/k8s-deploy/latest", browserAccept, 200, "text/html; charset=utf-8"},
		{"sub-agent", "/ui/subagents/changelog-reviewer", browserAccept, 200, "text/html; charset=utf-8"},
		{"sub-agent miss", "/ui/subagents/k8s-deploy", "", 404, jsonContentType},
		{"asset miss", "/ui/assets/app.0000.js", browserAccept, 404, jsonContentType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "GET", tc.path, "Accept", tc.accept)
			if r.code != tc.code || r.header.Get("Content-Type") != tc.ctype {
				t.Fatalf("GET %s (Accept %q): %d %q, want %d %q\n%s", tc.path, tc.accept, r.code, r.header.Get("Content-Type"), tc.code, tc.ctype, r.body)
			}
			if tc.path == "/" && r.header.Get("Link") != rootLinks {
				t.Errorf("Link %q, want %q", r.header.Get("Link"), rootLinks)
			}
			if tc.path == "/" && !strings.Contains(strings.Join(r.header.Values("Vary"), ","), "Accept") {
				t.Errorf("/ answers by Accept without Vary: Accept: %q", r.header.Values("Vary"))
			}
			if strings.HasPrefix(tc.ctype, "text/html") {
				for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
					if r.header.Get(h) == "" {
						t.Errorf("page without %s", h)
					}
				}
				if src := scriptSources(r.header.Get("Content-Security-Policy")); len(src) != 1 || !strings.HasPrefix(src[0], "'sha256-") {
					t.Errorf("Content-Security-Policy %q: script-src %q, want one hash-source (no 'self', host or 'unsafe-inline')", r.header.Get("Content-Security-Policy"), src)
				}
			}
		})
	}
}

// TestPagesServedAsDocuments: a page has a digest ETag that revalidates
// with 304, a gzip form, and the same bytes on every request; an asset
// is immutable at its digest-named URL.
func TestPagesServedAsDocuments(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	for _, path := range []string{"/", "/ui/skills/k8s-deploy", "/?q=review"} {
		r := do(t, s, "GET", path, "Accept", browserAccept)
		etag := r.header.Get("ETag")
		if r.code != 200 || !strings.HasPrefix(etag, `"sha256:`) {
			t.Fatalf("%s: %d, ETag %q", path, r.code, etag)
		}
		if again := do(t, s, "GET", path, "Accept", browserAccept); !bytes.Equal(again.body, r.body) || again.header.Get("ETag") != etag {
			t.Errorf("%s: a second request got other bytes", path)
		}
		if nm := do(t, s, "GET", path, "Accept", browserAccept, "If-None-Match", etag); nm.code != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: %d, want 304", path, nm.code)
		}
		gz := do(t, s, "GET", path, "Accept", browserAccept, "Accept-Encoding", "gzip")
		if gz.header.Get("Content-Encoding") != "gzip" || gz.header.Get("ETag") == etag {
			t.Fatalf("%s: Content-Encoding %q, ETag %q: want gzip with its own ETag", path, gz.header.Get("Content-Encoding"), gz.header.Get("ETag"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.body))
		if err != nil {
			t.Fatal(err)
		}
		if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, r.body) {
			t.Errorf("%s: gzip form decodes to other bytes", path)
		}
	}
	page := do(t, s, "GET", "/", "Accept", browserAccept)
	srcs, integrity := attrs(t, page.body, "script", "src"), attrs(t, page.body, "script", "integrity")
	allowed := scriptSources(page.header.Get("Content-Security-Policy"))
	if len(srcs) == 0 || len(integrity) != len(srcs) || len(allowed) != len(srcs) {
		t.Fatalf("scripts %q with integrity %q; script-src %q: want one hash-source per script", srcs, integrity, allowed)
	}
	for i, src := range srcs {
		a := do(t, s, "GET", src)
		if a.code != 200 || a.header.Get("Cache-Control") != cacheImmutable || a.header.Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Errorf("script %s: %d, Cache-Control %q, type %q", src, a.code, a.header.Get("Cache-Control"), a.header.Get("Content-Type"))
		}
		sum := sha256.Sum256(a.body)
		if want := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); integrity[i] != want || allowed[i] != "'"+want+"'" {
			t.Errorf("script %s: integrity %q, script-src %q; its bytes hash to %s", src, integrity[i], allowed[i], want)
		}
		if nm := do(t, s, "GET", src, "If-None-Match", a.header.Get("ETag")); nm.code != http.StatusNotModified {
			t.Errorf("script %s with If-None-Match: %d, want 304", src, nm.code)
		}
	}
}

// TestPagesPerHost: without base_url, each Host gets its own URLs in the
// install lines and links, from one rendering spliced per base.
func TestPagesPerHost(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	for _, host := range []string{"a.example", "b.example:8443"} {
		req := httptest.NewRequest("GET", "/ui/skills/k8s-deploy", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, "npx -y -p node@22 -p skills@1.7.4 -- skills add http://"+host+"/skill/k8s-deploy") ||
			!regexp.MustCompile(`href="http://`+regexp.QuoteMeta(host)+`/api/v1/blobs/sha256/[0-9a-f]{64}/archive.zip"`).MatchString(body) {
			t.Errorf("Host %s: %d, install lines and file links do not name it:\n%s", host, rec.Code, body)
		}
		if strings.Contains(body, "SKILLSERVERBASE") {
			t.Errorf("Host %s: the base sentinel is left in the page", host)
		}
	}
}

// TestPagesTokenPrefix: under a path token every link, form and install
// line carries the prefix; a scoped token's catalogue lists only its
// items, and the pages of the others are 404.
func TestPagesTokenPrefix(t *testing.T) {
	const all, team = "read-all-0123456789abcdef", "read-team-0123456789abcde"
	set, err := access.Parse(strings.NewReader("all "+all+" *\nteam "+team+" code-* k8s-deploy changelog-reviewer\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	skills, agents := fixture.ExampleTree(t, "../..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{BaseURL: testBase, ReadTokens: tokenSet{set}}, slog.New(slog.DiscardHandler))
	s.SetReady(true)

	for _, tc := range []struct {
		secret string
		listed []string
		hidden []string
	}{
		{all, []string{"code-review", "k8s-deploy", "release-notes", "changelog-reviewer", "technical-support-diagnostician"}, nil},
		{team, []string{"code-review", "k8s-deploy", "changelog-reviewer"}, []string{"release-notes", "support-triage", "technical-support-diagnostician"}},
	} {
		prefix := "/t/" + tc.secret
		cat := do(t, s, "GET", prefix+"/", "Accept", browserAccept)
		if cat.code != 200 {
			t.Fatalf("%s/: %d %s", prefix, cat.code, cat.body)
		}
		checkPrefixed(t, prefix, cat.body)
		for _, name := range tc.listed {
			if !bytes.Contains(cat.body, []byte(">"+name+"</a>")) {
				t.Errorf("token %s: %s is not listed", tc.secret, name)
			}
		}
		for _, name := range tc.hidden {
			if bytes.Contains(cat.body, []byte(name)) {
				t.Errorf("token %s: the catalogue names %s, outside its scope", tc.secret, name)
			}
			if r := do(t, s, "GET", prefix+"/ui/skills/"+name, "Accept", browserAccept); r.code != 404 {
				t.Errorf("token %s: the page of %s answers %d, want 404", tc.secret, name, r.code)
			}
		}
		sk := do(t, s, "GET", prefix+"/ui/skills/k8s-deploy", "Accept", browserAccept)
		checkPrefixed(t, prefix, sk.body)
		for _, line := range []string{
			"DISABLE_TELEMETRY=1 npx -y -p node@22 -p skills@1.7.4 -- skills add " + testBase + prefix + "/skill/k8s-deploy",
			"DISABLE_TELEMETRY=1 npx -y -p node@22 -p skills@1.7.4 -- skills add " + testBase + prefix + "<",
			"&#39;" + testBase + prefix + "/api/v1/blobs/sha256/",
			`&#34;Url&#34;: &#34;` + testBase + `&#34;, &#34;ApiKey&#34;: &#34;` + tc.secret + `&#34;`,
		} {
			if !bytes.Contains(sk.body, []byte(line)) {
				t.Errorf("token %s: the skill page lacks %q", tc.secret, line)
			}
		}
		for _, src := range append(attrs(t, sk.body, "script", "src"), attrs(t, sk.body, "link", "href")...) {
			if r := do(t, s, "GET", src); r.code != 200 {
				t.Errorf("token %s: %s answers %d", tc.secret, src, r.code)
			}
		}
	}
	if r := do(t, s, "GET", "/", "Accept", browserAccept); r.code != http.StatusUnauthorized {
		t.Errorf("the catalogue of a private feed without a token: %d, want 401", r.code)
	}
}

type tokenSet struct{ set *access.Set }

func (s tokenSet) Tokens() *access.Set { return s.set }

// checkPrefixed: every root-relative link, form action and asset of page
// starts with prefix, and every absolute one on this server too.
func checkPrefixed(t *testing.T, prefix string, page []byte) {
	t.Helper()
	var urls []string
	for _, ea := range [][2]string{{"a", "href"}, {"link", "href"}, {"script", "src"}, {"form", "action"}} {
		urls = append(urls, attrs(t, page, ea[0], ea[1])...)
	}
	if len(urls) == 0 {
		t.Fatal("no links in the page")
	}
	for _, u := range urls {
		rel, abs := strings.CutPrefix(u, testBase)
		switch {
		case strings.HasPrefix(u, "#"):
		case !abs && !strings.HasPrefix(u, "/"):
			t.Errorf("link %q is neither root-relative nor on this server", u)
		case rel != prefix && !strings.HasPrefix(rel, prefix+"/") && !strings.HasPrefix(rel, prefix+"?"):
			t.Errorf("link %q lacks the token prefix %s", u, prefix)
		}
	}
}

// scriptSources lists the source expressions of csp's script-src.
func scriptSources(csp string) []string {
	for d := range strings.SplitSeq(csp, ";") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(d), "script-src "); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// attrs lists the values of attribute attr of every element el of page.
func attrs(t *testing.T, page []byte, el, attr string) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == el {
			for _, a := range n.Attr {
				if a.Key == attr {
					out = append(out, a.Val)
				}
			}
		}
	}
	return out
}

// TestProblemsPage: the admin's page of the scan's problems answers only
// with the admin token (bearer or Basic password), lists every problem's
// path, rule and message, and is 404 with no token configured.
func TestProblemsPage(t *testing.T) {
	root := t.TempDir()
	skills := filepath.Join(root, "skills")
	fixture.WriteFile(t, filepath.Join(skills, "good", "SKILL.md"), "---\nname: good\ndescription: A good skill.\n---\nBody.\n", 0o644)
	fixture.WriteFile(t, filepath.Join(skills, "bad", "SKILL.md"), "---\nname: other\ndescription: A <b>bad</b> skill.\n---\nBody.\n", 0o644)
	cat := catalog.New(catalog.Source{SkillsDir: skills}, slog.New(slog.DiscardHandler))
	snap, err := cat.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Problems) == 0 {
		t.Fatal("the tree has no problems to show")
	}
	const token = "admin-secret"
	s := NewServer(cat, Options{BaseURL: testBase, AdminToken: token}, slog.New(slog.DiscardHandler))
	basic := func(pw string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:"+pw)) }
	for _, tc := range []struct {
		auth string
		code int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusForbidden},
		{basic("wrong"), http.StatusForbidden},
		{"Bearer " + token, http.StatusOK},
		{basic(token), http.StatusOK},
	} {
		r := do(t, s, "GET", "/-/problems", "Authorization", tc.auth)
		if r.code != tc.code {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, r.code, tc.code)
			continue
		}
		if tc.code == http.StatusUnauthorized && !strings.Contains(strings.Join(r.header.Values("WWW-Authenticate"), "\n"), "Basic") {
			t.Errorf("401 without a Basic challenge a browser can answer: %q", r.header.Values("WWW-Authenticate"))
		}
		if tc.code != http.StatusOK {
			continue
		}
		if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Content-Security-Policy") == "" {
			t.Errorf("headers %v", r.header)
		}
		if bytes.Contains(r.body, []byte(skills)) {
			t.Errorf("the page names the server's path of the root, %s", skills)
		}
		for _, p := range snap.ProblemsBelowRoots() {
			for _, want := range []string{html.EscapeString(p.Path), p.Rule, html.EscapeString(p.Message)} {
				if !bytes.Contains(r.body, []byte(want)) {
					t.Errorf("the page lacks %q of problem %v", want, p)
				}
			}
		}
	}
	if r := do(t, NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler)), "GET", "/-/problems", "Authorization", "Bearer "+token); r.code != 404 {
		t.Errorf("without admin_token: %d, want 404", r.code)
	}
}

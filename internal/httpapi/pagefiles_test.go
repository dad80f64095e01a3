package httpapi

import (
	"bytes"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// codeLines is the text of each numbered line of a file view, by the
// number its link shows.
func codeLines(t *testing.T, page []byte) (nums, texts []string) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Data != "td" {
			continue
		}
		var b strings.Builder
		for c := range n.Descendants() {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		if hasClass(n, "n") {
			nums = append(nums, b.String())
		} else if n.Parent != nil && n.Parent.Parent != nil && n.Parent.Parent.Parent != nil && hasClass(n.Parent.Parent.Parent, "code") {
			texts = append(texts, b.String())
		}
	}
	return nums, texts
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && strings.Contains(" "+a.Val+" ", " "+class+" ") {
			return true
		}
	}
	return false
}

// TestPageFileView: a text file's view numbers every line of its bytes
// and links the pinned raw URL, which answers those bytes; a binary file
// offers its download and no lines; a file past catalogue_view_max_bytes
// is not shown; a miss, or a path outside the version, is an HTML 404,
// never a 500; the view is cached with an ETag and revalidates to 304.
func TestPageFileView(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	const path = "/ui/skills/k8s-deploy/1.2.0/files/scripts/deploy.sh"
	r := do(t, s, "GET", path, "Accept", browserAccept)
	if r.code != 200 || r.header.Get("Content-Security-Policy") == "" {
		t.Fatalf("%s: %d, CSP %q", path, r.code, r.header.Get("Content-Security-Policy"))
	}
	raws := attrs(t, r.body, "a", "href")
	var raw string
	for _, h := range raws {
		if strings.HasPrefix(h, testBase+"/api/v1/blobs/sha256/") && strings.HasSuffix(h, "/scripts/deploy.sh") {
			raw = h
		}
	}
	if raw == "" {
		t.Fatalf("the file view links no pinned raw URL: %q", raws)
	}
	bytesOf := do(t, s, "GET", strings.TrimPrefix(raw, testBase))
	want := strings.Split(strings.TrimSuffix(string(bytesOf.body), "\n"), "\n")
	nums, texts := codeLines(t, r.body)
	if len(texts) != len(want) || len(nums) != len(want) || nums[0] != "1" || nums[len(nums)-1] != strconv.Itoa(len(want)) {
		t.Fatalf("the view shows lines %q numbered %q; the file has %d lines", texts, nums, len(want))
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Errorf("line %d shows %q, the file holds %q", i+1, texts[i], want[i])
		}
	}
	if nm := do(t, s, "GET", path, "Accept", browserAccept, "If-None-Match", r.header.Get("ETag")); r.header.Get("ETag") == "" || nm.code != http.StatusNotModified {
		t.Errorf("ETag %q, revalidation %d; want an ETag and 304", r.header.Get("ETag"), nm.code)
	}

	bin := do(t, s, "GET", "/ui/skills/k8s-deploy/1.2.0/files/assets/logo.png", "Accept", browserAccept)
	if n, _ := codeLines(t, bin.body); bin.code != 200 || len(n) != 0 || !bytes.Contains(bin.body, []byte("binary file")) {
		t.Errorf("binary file view: %d, %d lines; want 200, a download and no lines", bin.code, len(n))
	}

	small, _ := newTestServer(t, Options{BaseURL: testBase, CatalogueViewMaxBytes: 10})
	if big := do(t, small, "GET", path, "Accept", browserAccept); big.code != 200 || bytes.Contains(big.body, []byte(`class="code"`)) || !bytes.Contains(big.body, []byte("larger than this server shows")) {
		t.Errorf("a file past catalogue_view_max_bytes: %d, shown anyway:\n%s", big.code, big.body)
	}

	for _, miss := range []string{
		"/ui/skills/k8s-deploy/1.2.0/files/no-such-file",
		"/ui/skills/k8s-deploy/1.2.0/files/../1.0.0/SKILL.md",
		"/ui/skills/k8s-deploy/1.2.0/files/%2e%2e/%2e%2e/etc/passwd",
		"/ui/skills/k8s-deploy/9.9.9/files/SKILL.md",
		"/ui/skills/no-such-skill/1.0.0/files/SKILL.md",
		"/ui/skills/k8s-deploy/1.2.0/files/",
		"/ui/skills/k8s-deploy/1.2.0/files/%00",
	} {
		if m := do(t, s, "GET", miss, "Accept", browserAccept); m.code >= 500 || (m.code == 200 && bytes.Contains(m.body, []byte("/etc/passwd"))) {
			t.Errorf("%s: %d", miss, m.code)
		} else if m.code != http.StatusNotFound && m.code != http.StatusBadRequest && m.code != http.StatusMovedPermanently && m.code != http.StatusPermanentRedirect {
			t.Errorf("%s: %d, want a 404", miss, m.code)
		}
	}
}

// TestPageCompare: from 1.0.0 (a lone SKILL.md) to 1.2.0 (an archive),
// the comparison lists the two resources added and SKILL.md changed,
// with the unified diff of its lines: the old version line removed and
// the new one added, and the skill's page links it from the version row.
// A version the skill lacks is a 404.
func TestPageCompare(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	const path = "/ui/skills/k8s-deploy/1.2.0/compare/1.0.0"
	r := do(t, s, "GET", path, "Accept", browserAccept)
	if r.code != 200 {
		t.Fatalf("%s: %d", path, r.code)
	}
	body := string(r.body)
	for _, want := range []string{
		`<h2 id="added">Added</h2>`, `>assets/logo.png</a>`, `>scripts/deploy.sh</a>`,
		`<h3 id="ch0" class="wrap">SKILL.md</h3>`,
		`<span class="del">-  version: 1.0.0</span>`, `<span class="add">&#43;  version: 1.2.0</span>`,
		"0 removed, 1 changed, 0 unchanged",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comparison lacks %q", want)
		}
	}
	if strings.Contains(body, `id="removed"`) {
		t.Error("the comparison lists files removed; 1.2.0 holds every file of 1.0.0")
	}
	if !regexp.MustCompile(`href="/ui/skills/k8s-deploy/1.2.0/compare/1.0.0"`).Match(do(t, s, "GET", "/ui/skills/k8s-deploy", "Accept", browserAccept).body) {
		t.Error("the skill's page does not link the comparison of 1.2.0 with 1.0.0")
	}
	// A pair no page links (made per request, not cached) answers the
	// same way, with an ETag that revalidates.
	far := do(t, s, "GET", "/ui/skills/k8s-deploy/2.0.0-rc.1/compare/1.0.0", "Accept", browserAccept)
	if far.code != 200 || !bytes.Contains(far.body, []byte("Changes from 1.0.0 to 2.0.0-rc.1")) || far.header.Get("ETag") == "" {
		t.Errorf("2.0.0-rc.1 from 1.0.0: %d, ETag %q", far.code, far.header.Get("ETag"))
	} else if nm := do(t, s, "GET", "/ui/skills/k8s-deploy/2.0.0-rc.1/compare/1.0.0", "Accept", browserAccept, "If-None-Match", far.header.Get("ETag")); nm.code != http.StatusNotModified {
		t.Errorf("2.0.0-rc.1 from 1.0.0 revalidated: %d, want 304", nm.code)
	}
	for _, miss := range []string{"/ui/skills/k8s-deploy/1.2.0/compare/0.0.1", "/ui/skills/k8s-deploy/nope/compare/1.0.0", "/ui/skills/nope/1.2.0/compare/1.0.0"} {
		if m := do(t, s, "GET", miss, "Accept", browserAccept); m.code != http.StatusNotFound || !bytes.HasPrefix(m.body, []byte("<!doctype html>")) {
			t.Errorf("%s: %d, want an HTML 404", miss, m.code)
		}
	}
}

// TestPageSidePanel: a skill's page puts its facts beside the SKILL.md:
// the front matter's compatibility and licence, the published date as a
// machine-readable time, the fetch count's live source, and the client
// chooser with one radio per client, the skills CLI checked, each
// controlling a panel of that client's lines.
func TestPageSidePanel(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	k8s := string(do(t, s, "GET", "/ui/skills/k8s-deploy", "Accept", browserAccept).body)
	review := string(do(t, s, "GET", "/ui/skills/code-review", "Accept", browserAccept).body)
	aside := func(page string) string {
		_, after, _ := strings.Cut(page, `<aside class="side"`)
		side, _, _ := strings.Cut(after, "</aside>")
		return side
	}
	for _, want := range []string{
		`<dt>Compatibility</dt><dd class="compat">Needs kubectl 1.28 or later on PATH.</dd>`,
		`data-href="/api/search?q=k8s-deploy"`,
		`<input type="radio" name="client" id="c-skills" value="skills" checked>`,
		`id="c-netclaw"`, `id="c-clawhub"`, `id="c-mcp"`, `id="c-curl"`,
		`<div class="panel" id="p-curl">`,
		testBase + "/mcp<",
	} {
		if !strings.Contains(aside(k8s), want) {
			t.Errorf("the side panel of k8s-deploy lacks %q", want)
		}
	}
	if !regexp.MustCompile(`<dt>Published</dt><dd><time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">\d{4}-\d\d-\d\d</time></dd>`).MatchString(aside(k8s)) {
		t.Error("the side panel gives no absolute published date with its datetime")
	}
	if strings.Count(k8s, `type="radio"`) != 5 || strings.Count(k8s, `checked>`) != 1 {
		t.Errorf("%d radios, %d checked; want 5 clients, one chosen", strings.Count(k8s, `type="radio"`), strings.Count(k8s, `checked>`))
	}
	if !strings.Contains(aside(review), "<dt>Licence</dt>") {
		t.Error("code-review declares a licence; its side panel shows none")
	}
	if strings.Contains(aside(review), "<dt>Compatibility</dt>") {
		t.Error("code-review declares no compatibility; its side panel shows one")
	}
	// The SKILL.md comes before the files and versions in the main column.
	if d, f := strings.Index(k8s, `<article class="doc"`), strings.Index(k8s, `id="files"`); d < 0 || f < 0 || d > f {
		t.Errorf("the rendered SKILL.md (at %d) is not ahead of the files (at %d)", d, f)
	}
}

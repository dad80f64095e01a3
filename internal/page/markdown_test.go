package page

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// TestRenderMarkdownSanitises: no payload in a skill's text leaves a
// script, an event handler, a style, a frame, a form or a URL of a
// scheme other than http, https and mailto, and no image but the
// version's own files.
func TestRenderMarkdownSanitises(t *testing.T) {
	resolve := func(p string) (string, bool) {
		if p == "assets/logo.png" {
			return "https://skills.example.com/api/v1/skills/x/1.0.0/assets/logo.png?digest=sha256:00", true
		}
		return "", false
	}
	for _, tc := range []struct {
		name, md string
		want     []string // substrings the output must hold
	}{
		{"raw script", "<script>alert(1)</script>\n\ntext", []string{"text"}},
		{"inline script", "hello <script>alert(1)</script> world", []string{"hello", "world"}},
		{"event handler", `<img src=x onerror="alert(1)">`, nil},
		{"svg onload", `<svg onload="alert(1)"><circle/></svg>`, nil},
		{"javascript link", "[click](javascript:alert(1))", []string{"click"}},
		{"mixed-case scheme", "[click](JaVaScRiPt:alert(1))", []string{"click"}},
		{"entity in scheme", "[click](java&#x09;script:alert(1))", []string{"click"}},
		{"vbscript link", "[click](vbscript:msgbox(1))", []string{"click"}},
		{"data link", "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)", []string{"click"}},
		{"javascript autolink", "<javascript:alert(1)>", nil},
		{"raw anchor", `<a href="javascript:alert(1)">x</a>`, nil},
		{"reference link", "[x][r]\n\n[r]: javascript:alert(1)", []string{"x"}},
		{"remote image", "![tracker](https://evil.example/t.png)", []string{"tracker"}},
		{"protocol-relative image", "![p](//evil.example/t.png)", []string{"p"}},
		{"data image", "![d](data:image/png;base64,iVBORw0KGgo=)", []string{"d"}},
		{"style element", "<style>body{display:none}</style>\n\nx", []string{"x"}},
		{"style attribute", `<p style="position:fixed;inset:0">x</p>`, nil},
		{"iframe", `<iframe src="https://evil.example"></iframe>`, nil},
		{"form", `<form action="https://evil.example"><input name=p autofocus onfocus=alert(1)></form>`, nil},
		{"object", `<object data="https://evil.example/x.swf"></object>`, nil},
		{"meta refresh", `<meta http-equiv="refresh" content="0;url=https://evil.example">`, nil},
		{"base", `<base href="https://evil.example/">`, nil},
		{"html in a title", "# <img src=x onerror=alert(1)> Title", []string{"Title"}},
		{"plain link kept", "[docs](https://example.com/docs)", []string{`href="https://example.com/docs"`, `rel="nofollow noreferrer"`}},
		{"mailto kept", "[mail](mailto:a@example.com)", []string{`href="mailto:a@example.com"`}},
		{"own image rewritten", "![logo](assets/logo.png)", []string{`src="https://skills.example.com/api/v1/skills/x/1.0.0/assets/logo.png?digest=sha256:00"`, `alt="logo"`}},
		{"own file linked", "[the logo](./assets/logo.png)", []string{`href="https://skills.example.com/api/v1/skills/x/1.0.0/assets/logo.png?digest=sha256:00"`}},
		{"headings below the page's", "# One\n\n## Two\n\n##### Five", []string{"<h3>One</h3>", "<h4>Two</h4>", "<h6>Five</h6>"}},
		{"task list", "- [x] done\n- [ ] open", []string{`type="checkbox"`, "checked", "disabled"}},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"<table>", "<td>1</td>"}},
		{"code kept as text", "```\n<script>alert(1)</script>\n```", []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := string(renderMarkdown([]byte(tc.md), resolve))
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			checkInert(t, out)
		})
	}
}

// checkInert fails on anything in out that could run or load.
func checkInert(t *testing.T, out string) {
	t.Helper()
	nodes, err := html.ParseFragment(strings.NewReader(out), &html.Node{Type: html.ElementNode, Data: "article", DataAtom: atom.Article})
	if err != nil {
		t.Fatal(err)
	}
	banned := map[string]bool{"script": true, "style": true, "iframe": true, "frame": true, "object": true, "embed": true,
		"form": true, "svg": true, "math": true, "meta": true, "base": true, "link": true}
	for _, root := range nodes {
		for n := range root.Descendants() {
			checkNode(t, n, banned, out)
		}
		checkNode(t, root, banned, out)
	}
}

func checkNode(t *testing.T, n *html.Node, banned map[string]bool, out string) {
	t.Helper()
	if n.Type != html.ElementNode {
		return
	}
	if banned[n.Data] {
		t.Errorf("<%s> survived:\n%s", n.Data, out)
	}
	if n.Data == "input" && attr(n, "type") != "checkbox" {
		t.Errorf("an input other than a task list's checkbox survived:\n%s", out)
	}
	for _, a := range n.Attr {
		switch {
		case strings.HasPrefix(a.Key, "on"), a.Key == "style", a.Key == "srcset", a.Key == "formaction":
			t.Errorf("attribute %s survived on <%s>:\n%s", a.Key, n.Data, out)
		case a.Key == "href" || a.Key == "src":
			u, err := url.Parse(a.Val)
			if err != nil {
				t.Errorf("%s %q does not parse", a.Key, a.Val)
				continue
			}
			if s := strings.ToLower(u.Scheme); s != "http" && s != "https" && s != "mailto" && s != "" {
				t.Errorf("%s with scheme %q survived:\n%s", a.Key, u.Scheme, out)
			}
			if a.Key == "src" && !strings.HasPrefix(a.Val, "https://skills.example.com/") {
				t.Errorf("an image from elsewhere survived: %q", a.Val)
			}
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/metrics"
)

// TestPrivateFeedPageForBrowsers: on a private feed, a browser without a
// token gets a 401 HTML page that says how to open the feed with one
// (under the pages' security headers, naming no item, its script and
// icon loading without a token); every other client gets the JSON error,
// as before; the 403 of a wrong token stays JSON.
func TestPrivateFeedPageForBrowsers(t *testing.T) {
	const secret = "read-all-0123456789abcdef"
	set, err := access.Parse(strings.NewReader("all "+secret+" *\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Options{BaseURL: testBase, ReadTokens: tokenSet{set}})
	for _, path := range []string{"/", "/ui/skills/k8s-deploy", "/manifest.json"} {
		page := do(t, s, "GET", path, "Accept", browserAccept)
		if page.code != http.StatusUnauthorized || page.header.Get("Content-Type") != "text/html; charset=utf-8" ||
			page.header.Get("Content-Security-Policy") == "" || page.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("%s in a browser: %d %q, CSP %q; want a 401 page", path, page.code, page.header.Get("Content-Type"), page.header.Get("Content-Security-Policy"))
		}
		if !bytes.Contains(page.body, []byte(testBase+"/t/YOUR-TOKEN/")) || bytes.Contains(page.body, []byte("k8s-deploy<")) {
			t.Errorf("%s: the page does not say to open %s/t/YOUR-TOKEN/, or names an item:\n%s", path, testBase, page.body)
		}
		for _, src := range append(attrs(t, page.body, "script", "src"), attrs(t, page.body, "link", "href")...) {
			if a := do(t, s, "GET", src); a.code != http.StatusOK {
				t.Errorf("%s: its asset %s answers %d without a token", path, src, a.code)
			}
		}
		for _, accept := range []string{"", "*/*", "application/json"} {
			j := do(t, s, "GET", path, "Accept", accept)
			var body struct{ Error string }
			if j.code != http.StatusUnauthorized || json.Unmarshal(j.body, &body) != nil || body.Error != "unauthorized" {
				t.Errorf("%s with Accept %q: %d %s; want the JSON 401", path, accept, j.code, j.body)
			}
		}
	}
	if wrong := do(t, s, "GET", "/t/wrong-token-0123456789abc/", "Accept", browserAccept); wrong.code != http.StatusForbidden || bytes.HasPrefix(wrong.body, []byte("<!doctype")) {
		t.Errorf("a wrong token in a browser: %d %s; want the JSON 403", wrong.code, wrong.body)
	}
	// Only the embedded assets are open: another /ui/ path still needs a token.
	if a := do(t, s, "GET", "/ui/assets/../skills/k8s-deploy"); a.code == http.StatusOK {
		t.Errorf("a path past the assets answers %d without a token", a.code)
	}
}

// TestRefusalReasons: the skills CLI's look at the bare host's indexes
// without a token (what it sends beside a path-token install) is counted
// as reason="probe"; every other tokenless request as "missing", a wrong
// token as "unknown". Each is refused all the same.
func TestRefusalReasons(t *testing.T) {
	const secret = "read-all-0123456789abcdef"
	set, err := access.Parse(strings.NewReader("all "+secret+" *\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Build{})
	s, _ := newTestServer(t, Options{BaseURL: testBase, ReadTokens: tokenSet{set}, Observer: m})
	for _, tc := range []struct {
		method, path, auth string
		code               int
	}{
		{"GET", "/.well-known/agent-skills/index.json", "", 401}, // probe
		{"GET", "/.well-known/skills/index.json", "", 401},       // probe
		{"HEAD", "/.well-known/skills/index.json", "", 401},      // probe
		{"GET", "/manifest.json", "", 401},                       // missing
		{"POST", "/.well-known/agent-skills/index.json", "", 401},
		{"GET", "/.well-known/agent-skills/index.json", "Basic eDp5", 401}, // missing: it sent credentials
		{"GET", "/skill/k8s-deploy/.well-known/agent-skills/index.json", "", 401},
		{"GET", "/t/wrong-token-0123456789abc/.well-known/agent-skills/index.json", "", 403}, // unknown
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.code)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text, _ := io.ReadAll(rec.Body)
	for reason, want := range map[string]string{"probe": "3", "missing": "4", "unknown": "1"} {
		re := regexp.MustCompile(`skillserver_http_auth_refusals_total\{reason="` + reason + `"\} (\d+)`)
		if got := re.FindSubmatch(text); got == nil || string(got[1]) != want {
			t.Errorf("refusals{reason=%q}: %q, want %s", reason, got, want)
		}
	}
}

// TestPagesLogo: server_logo shows before the name in every page's
// header, at an asset URL named by its digest that answers its bytes as
// an image, cached for good, under a policy that runs nothing should it
// be opened on its own (an SVG is a document that could carry script).
func TestPagesLogo(t *testing.T) {
	logo := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1"/></svg>`)
	skills, agents := fixture.ExampleTree(t, "../..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents,
		Server: feed.ServerInfo{Name: "team-skills", Description: "Skills of the team", Version: "1", Logo: logo, LogoType: "image/svg+xml"}}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler))
	s.SetReady(true)
	want := "/ui/assets/logo." + content.Sum(logo).Hex()[:16] + ".svg"
	for _, p := range []string{"/", "/ui/skills/k8s-deploy", "/ui/skills/k8s-deploy/1.2.0/files/SKILL.md"} {
		page := do(t, s, "GET", p, "Accept", browserAccept)
		if imgs := attrs(t, page.body, "img", "src"); len(imgs) == 0 || imgs[0] != want || !bytes.Contains(page.body, []byte(`alt="">team-skills</a>`)) ||
			!bytes.Contains(page.body, []byte("<p>Skills of the team</p>")) {
			t.Errorf("%s: header images %q, want %s before the name, and the description", p, imgs, want)
		}
	}
	a := do(t, s, "GET", want)
	if a.code != 200 || !bytes.Equal(a.body, logo) || a.header.Get("Content-Type") != "image/svg+xml" || a.header.Get("Cache-Control") != cacheImmutable ||
		!strings.Contains(a.header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("GET %s: %d %q, Cache-Control %q, CSP %q", want, a.code, a.header.Get("Content-Type"), a.header.Get("Cache-Control"), a.header.Get("Content-Security-Policy"))
	}
	if other := do(t, s, "GET", "/ui/assets/logo.0000000000000000.svg"); other.code != http.StatusNotFound {
		t.Errorf("a logo name of other bytes: %d, want 404", other.code)
	}
	plain, _ := newTestServer(t, Options{})
	if imgs := attrs(t, do(t, plain, "GET", "/", "Accept", browserAccept).body, "img", "src"); len(imgs) != 0 {
		t.Errorf("without server_logo the header shows images %q", imgs)
	}
}

package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/content"
)

const indexPath = "/.well-known/agent-skills/index.json"

// TestJunkHostsDoNotMakeDocumentsCostly: with no base_url, every Host
// gets its own absolute URLs. Hosts sent before a regular client's must
// not leave that client paying a render per request: after a run of junk
// hosts, serving the regular host's index allocates what serving cached
// bytes does (the base-independent legacy index, encoded once per
// snapshot), not what encoding a 300-skill index does.
func TestJunkHostsDoNotMakeDocumentsCostly(t *testing.T) {
	root := t.TempDir()
	for i := range 300 {
		name := fmt.Sprintf("skill-%03d", i)
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + name + "\ndescription: Skill number " + name + ".\n---\nBody.\n"
		if err := os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler),
		catalog.Options{DocumentCacheBytes: config.Default[int64]("document_cache_max_bytes")})
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{}, slog.New(slog.DiscardHandler))
	get := func(host, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://"+host+path, nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	for i := range 20 {
		if rec := get(fmt.Sprintf("junk-%d.test", i), indexPath); rec.Code != 200 {
			t.Fatalf("junk host %d: %d", i, rec.Code)
		}
	}
	legit := get("skills.example.com", indexPath)
	if !bytes.Contains(legit.Body.Bytes(), []byte(`"http://skills.example.com/api/v1/`)) {
		t.Fatalf("the index does not carry the request's host:\n%.300s", legit.Body.Bytes())
	}
	cached := testing.AllocsPerRun(20, func() { get("skills.example.com", indexPath) })
	reference := testing.AllocsPerRun(20, func() { get("skills.example.com", "/.well-known/skills/index.json") })
	t.Logf("allocations a request: index %.0f, legacy index %.0f", cached, reference)
	if cached > reference+20 {
		t.Errorf("after 20 other hosts, the regular host's index costs %.0f allocations a request; a cached document costs %.0f", cached, reference)
	}
}

// TestDocumentsForAnyHost: bytes for a host are those of a configured
// base URL with the same value, the ETag is their digest, and a host's
// first request is answered uncompressed, later ones compressed.
func TestDocumentsForAnyHost(t *testing.T) {
	open, _ := newTestServer(t, Options{})
	fixed, _ := newTestServer(t, Options{BaseURL: "http://h.test:8080"})
	for _, path := range []string{indexPath, "/.well-known/agent-card.json", "/api/v1/skills/k8s-deploy/latest", "/skills/v1/k8s-deploy/versions/1.2.0.json"} {
		want := do(t, fixed, "GET", path)
		first := do(t, open, "GET", "http://h.test:8080"+path, "Accept-Encoding", "gzip")
		if first.code != 200 || !bytes.Equal(first.body, want.body) || first.header.Get("ETag") != want.header.Get("ETag") {
			t.Errorf("%s: for Host h.test:8080 %d, ETag %s, want the configured base's bytes, ETag %s", path, first.code, first.header.Get("ETag"), want.header.Get("ETag"))
		}
		if first.header.Get("Content-Encoding") != "" {
			t.Errorf("%s: a host's first request was compressed", path)
		}
		again := do(t, open, "GET", "http://h.test:8080"+path, "Accept-Encoding", "gzip")
		if len(want.body) < 1024 {
			continue
		}
		if again.header.Get("Content-Encoding") != "gzip" || again.header.Get("ETag") != content.Sum(again.body).ETag() {
			t.Errorf("%s: second request: encoding %q, ETag %s, want gzip with the digest of its bytes", path, again.header.Get("Content-Encoding"), again.header.Get("ETag"))
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(again.body))
		if err != nil {
			t.Fatal(err)
		}
		if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, want.body) {
			t.Errorf("%s: the gzip body does not decode to the document", path)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	s, _ := newTestServer(t, Options{AllowedHosts: []string{"skills.example.com", "127.0.0.1:8080"}, TrustProxy: true})
	tests := []struct {
		name    string
		target  string
		headers []string
		code    int
	}{
		{"listed host", "http://skills.example.com" + indexPath, nil, 200},
		{"listed host, any case", "http://Skills.Example.COM" + indexPath, nil, 200},
		{"listed host and port", "http://127.0.0.1:8080" + indexPath, nil, 200},
		{"listed host, other port", "http://127.0.0.1:9999" + indexPath, nil, 421},
		{"other host", "http://evil.test" + indexPath, nil, 421},
		{"other host, base-independent document", "http://evil.test/manifest.json", nil, 421},
		{"listed forwarded host", "http://10.0.0.1" + indexPath, []string{"X-Forwarded-Host", "skills.example.com"}, 200},
		{"other forwarded host", "http://skills.example.com" + indexPath, []string{"X-Forwarded-Host", "evil.test"}, 421},
		{"artifacts do not embed the host", "http://evil.test/api/v1/skills/k8s-deploy/1.2.0/SKILL.md", nil, 200},
		{"probes do not embed the host", "http://10.0.0.1/healthz", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, s, "GET", tt.target, tt.headers...)
			if r.code != tt.code {
				t.Fatalf("%d %s, want %d", r.code, r.body, tt.code)
			}
			if r.code == 421 && !strings.Contains(string(r.body), `"error": "misdirected_request"`) {
				t.Errorf("body %s", r.body)
			}
		})
	}
}

// goldenDocs names one example of every document kind the server
// publishes; api/ schemas validate the same files.
var goldenDocs = []struct{ file, path string }{
	{"rfc-index.json", "/.well-known/agent-skills/index.json"},
	{"manifest.json", "/manifest.json"},
	{"skill-index.json", "/skills/v1/index.json"},
	{"skill-page.json", "/skills/v1/pages/all.json"},
	{"skill.json", "/skills/v1/k8s-deploy/index.json"},
	{"skill-version.json", "/skills/v1/support-triage/versions/1.2.0.json"},
	{"skill-version-archive.json", "/skills/v1/k8s-deploy/versions/1.2.0.json"},
	{"subagent-index.json", "/subagents/v1/index.json"},
	{"subagent-page.json", "/subagents/v1/pages/all.json"},
	{"subagent.json", "/subagents/v1/technical-support-diagnostician/index.json"},
	{"subagent-version.json", "/subagents/v1/technical-support-diagnostician/versions/1.0.0.json"},
	{"api-skill.json", "/api/v1/skills/k8s-deploy"},
	{"api-skill-version.json", "/api/v1/skills/k8s-deploy/1.2.0"},
	{"api-skill-resources.json", "/api/v1/skills/k8s-deploy/1.2.0/resources"},
	{"api-subagent.json", "/api/v1/subagents/technical-support-diagnostician"},
	{"api-subagent-version.json", "/api/v1/subagents/technical-support-diagnostician/1.0.0"},
	{"api-search.json", "/api/v1/skills?q=review"},
	{"agent-card.json", "/.well-known/agent-card.json"},
	{"legacy-index.json", "/.well-known/skills/index.json"},
	{"scoped-index.json", "/skill/code-review/.well-known/agent-skills/index.json"},
}

func TestDocumentsGolden(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	for _, g := range goldenDocs {
		r := do(t, s, "GET", g.path)
		if r.code != 200 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("%s: status %d, type %q", g.path, r.code, r.header.Get("Content-Type"))
		}
		checkGolden(t, g.file, r.body)
	}
	r := do(t, s, "GET", "/skills/v1/nope/index.json")
	if r.code != 404 {
		t.Fatalf("status %d", r.code)
	}
	checkGolden(t, "error.json", r.body)
}

func TestRFCIndexHeaders(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	r := do(t, s, "GET", "/.well-known/agent-skills/index.json")
	if !bytes.HasPrefix(r.body, []byte("{\n  \"$schema\": \"https://schemas.agentskills.io/discovery/0.2.0/schema.json\",\n")) {
		t.Errorf("index does not start with the byte-exact $schema")
	}
	if r.header.Get("ETag") == "" || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("headers %v", r.header)
	}
}

func TestEmptyCatalogIsAnEmptyList(t *testing.T) {
	cat := catalog.New(catalog.Source{SkillsDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := do(t, NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler)), "GET", "/.well-known/agent-skills/index.json")
	if !bytes.Contains(r.body, []byte(`"skills": []`)) {
		t.Errorf("empty index = %s", r.body)
	}
}

func TestDocumentNotModified(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	first := do(t, s, "GET", "/.well-known/agent-skills/index.json")
	again := do(t, s, "GET", "/.well-known/agent-skills/index.json", "If-None-Match", first.header.Get("ETag"))
	if again.code != 304 || len(again.body) != 0 {
		t.Errorf("status %d with %d bytes, want 304", again.code, len(again.body))
	}
}

func TestTreeRoutes(t *testing.T) {
	s, snap := newTestServer(t, Options{BaseURL: testBase})
	diag, _ := snap.Agent("technical-support-diagnostician")
	agentMD, _ := snap.Store.Get(diag.Latest.Digest)
	tests := []struct {
		name, path string
		code       int
	}{
		{"skill page", "/skills/v1/pages/all.json", 200},
		{"unknown page", "/skills/v1/pages/2.json", 404},
		{"page without .json", "/skills/v1/pages/all", 404},
		{"unknown skill", "/skills/v1/nope/index.json", 404},
		{"unknown version", "/skills/v1/k8s-deploy/versions/9.9.9.json", 404},
		{"version without .json", "/skills/v1/k8s-deploy/versions/1.2.0", 404},
		{"prerelease version", "/skills/v1/k8s-deploy/versions/2.0.0-rc.1.json", 200},
		{"build metadata version", "/skills/v1/windows-notes/versions/0.0.0+8edeca7ea1f2.json", 200},
		{"agent version", "/subagents/v1/changelog-reviewer/versions/1.0.0.json", 200},
		{"unknown agent", "/subagents/v1/nope/index.json", 404},
		{"agent md", "/api/v1/subagents/technical-support-diagnostician/1.0.0/agent.md", 200},
		{"agent md old version", "/api/v1/subagents/technical-support-diagnostician/0.9.0/agent.md", 200},
		{"agent md unknown version", "/api/v1/subagents/technical-support-diagnostician/2.0.0/agent.md", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := do(t, s, "GET", tt.path); r.code != tt.code {
				t.Errorf("status %d, want %d: %s", r.code, tt.code, r.body)
			}
		})
	}
	r := do(t, s, "GET", "/api/v1/subagents/technical-support-diagnostician/1.0.0/agent.md?digest="+diag.Latest.Digest.String())
	if !bytes.Equal(r.body, agentMD) || r.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Errorf("agent.md: %d %q", r.code, r.header.Get("Content-Type"))
	}
}

// TestSkillNamedPages: chi prefers the static "pages" segment, so a skill
// named "pages" must still have its identity document.
func TestSkillNamedPages(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pages"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pages", "SKILL.md"), []byte("---\nname: pages\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler))
	r := do(t, s, "GET", "/skills/v1/pages/index.json")
	if r.code != 200 || !bytes.Contains(r.body, []byte(`"kind": "skill"`)) {
		t.Errorf("status %d: %s", r.code, r.body)
	}
	if r := do(t, s, "GET", "/subagents/v1/index.json"); r.code != 404 {
		t.Errorf("no agents root configured: sub-agent index %d, want 404", r.code)
	}
	if r := do(t, s, "GET", "/manifest.json"); bytes.Contains(r.body, []byte("/subagents/v1/index.json")) {
		t.Errorf("manifest links a sub-agent tree that is not configured: %s", r.body)
	}
}

func TestDocumentsCompressWhenAsked(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	plain := do(t, s, "GET", "/.well-known/agent-skills/index.json")
	gz := do(t, s, "GET", "/.well-known/agent-skills/index.json", "Accept-Encoding", "br, gzip")
	if gz.header.Get("Content-Encoding") != "gzip" || gz.header.Get("Vary") != "Accept-Encoding" || plain.header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("headers: gzip %v plain %v", gz.header, plain.header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, plain.body) {
		t.Error("gzip body does not decode to the plain document")
	}
	if gz.header.Get("ETag") == plain.header.Get("ETag") || gz.header.Get("ETag") != `"`+content.Sum(gz.body).String()+`"` {
		t.Error("the gzip representation needs its own ETag: the digest of its bytes")
	}
	if r := do(t, s, "GET", "/.well-known/agent-skills/index.json", "Accept-Encoding", "gzip;q=0"); r.header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 was answered with gzip")
	}
	if r := do(t, s, "GET", "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "Accept-Encoding", "gzip"); r.header.Get("Content-Encoding") != "" {
		t.Error("an artifact was compressed")
	}
}

// TestAICatalogGolden: the AI catalogue of the example tree, as its own
// media type, the same bytes at ARD v0.91's path; scoped, it lists only
// the token's skills, and under a path token its URLs carry the token.
func TestAICatalogGolden(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	r := do(t, s, "GET", "/.well-known/ai-catalog.json")
	if r.code != 200 || r.header.Get("Content-Type") != "application/ai-catalog+json" || r.header.Get("ETag") == "" {
		t.Fatalf("status %d, type %q, etag %q", r.code, r.header.Get("Content-Type"), r.header.Get("ETag"))
	}
	checkGolden(t, "ai-catalog.json", r.body)
	if ard := do(t, s, "GET", "/.well-known/ard.json"); !bytes.Equal(ard.body, r.body) {
		t.Errorf("ard.json differs from ai-catalog.json")
	}
	if nm := do(t, s, "GET", "/.well-known/ai-catalog.json", "If-None-Match", r.header.Get("ETag")); nm.code != http.StatusNotModified {
		t.Errorf("revalidation: %d", nm.code)
	}

	const all, team = "read-all-0123456789abcdef", "read-team-0123456789abcde"
	set, err := access.Parse(strings.NewReader("all "+all+" *\nteam "+team+" code-* changelog-reviewer\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	private, _ := newTestServer(t, Options{BaseURL: testBase, ReadTokens: tokenSet{set}})
	r = do(t, private, "GET", "/t/"+team+"/.well-known/ai-catalog.json")
	var doc struct {
		Entries []struct{ Identifier, URL string }
	}
	if err := json.Unmarshal(r.body, &doc); err != nil || r.code != 200 {
		t.Fatalf("scoped: %d %v", r.code, err)
	}
	var ids []string
	for _, e := range doc.Entries {
		ids = append(ids, e.Identifier)
		if !strings.HasPrefix(e.URL, testBase+"/t/"+team+"/") {
			t.Errorf("%s: url %s does not carry the path token", e.Identifier, e.URL)
		}
	}
	want := []string{"urn:air:skillserver.localhost:agent:skillserver", "urn:air:skillserver.localhost:skills:code-review",
		"urn:air:skillserver.localhost:subagents:changelog-reviewer"}
	if !slices.Equal(ids, want) {
		t.Errorf("scoped entries %q, want %q", ids, want)
	}
	if r := do(t, private, "GET", "/.well-known/ai-catalog.json"); r.code != http.StatusUnauthorized {
		t.Errorf("private without a token: %d", r.code)
	}
}

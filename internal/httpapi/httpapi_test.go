package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/transport"
)

const testBase = "https://skills.example.com"

var update = flag.Bool("update", os.Getenv("UPDATE_GOLDEN") == "1", "rewrite golden files")

func newTestServer(t testing.TB, opts Options) (*Server, *catalog.Snapshot) {
	t.Helper()
	return newTestServerLog(t, opts, slog.New(slog.DiscardHandler))
}

// newTestServerLog is newTestServer logging to log.
func newTestServerLog(t testing.TB, opts Options, log *slog.Logger) (*Server, *catalog.Snapshot) {
	t.Helper()
	skills, agents := fixture.ExampleTree(t, "../..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents,
		Server: feed.ServerInfo{Name: "skillserver", Description: "Test server.", Version: "1.2.3-test"}}, slog.New(slog.DiscardHandler))
	snap, err := cat.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if opts.CORSAllowOrigin == "" {
		opts.CORSAllowOrigin = "*"
	}
	s := NewServer(cat, opts, log)
	s.SetReady(true)
	return s, snap
}

type result struct {
	code   int
	header http.Header
	body   []byte
}

func do(t *testing.T, h http.Handler, method, target string, headers ...string) result {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return result{rec.Code, rec.Header(), rec.Body.Bytes()}
}

// checkGolden compares got with testdata/golden/name, or rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("../../testdata/golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `make golden` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run `make golden` if the change is intended):\n%s", name, got)
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

func TestArtifactSemantics(t *testing.T) {
	const maxRanges = 16 // max_ranges' default
	s, snap := newTestServer(t, Options{BaseURL: testBase, MaxRanges: maxRanges})
	k8s, _ := snap.Skill("k8s-deploy")
	v := k8s.Latest
	zipBytes, _ := snap.Store.Get(v.Archive)
	md, _ := snap.Store.Get(v.SkillMD)
	zipPath := "/api/v1/skills/k8s-deploy/1.2.0/archive.zip"
	etag := `"` + v.Archive.String() + `"`
	// The content-addressed path the documents advertise.
	caZip := "/api/v1/blobs/sha256/" + v.Archive.Hex() + "/archive.zip"
	deploy, ok := v.Resource("scripts/deploy.sh")
	if !ok {
		t.Fatal("k8s-deploy 1.2.0 has no scripts/deploy.sh")
	}
	caDeploy := "/api/v1/blobs/sha256/" + deploy.Digest.Hex() + "/scripts/deploy.sh"
	tooMany := strings.Repeat("a=1&", 10000) // url.ParseQuery keeps at most 10,000

	tests := []struct {
		name    string
		method  string
		target  string
		headers []string
		code    int
		body    []byte            // nil: not checked
		want    map[string]string // headers that must match exactly
	}{
		{"archive", "GET", zipPath, nil, 200, zipBytes, map[string]string{"Content-Type": "application/zip", "ETag": etag, "Cache-Control": "public, max-age=30", "Content-Encoding": ""}},
		{"pinned archive", "GET", zipPath + "?digest=" + v.Archive.String(), nil, 200, zipBytes, map[string]string{"Cache-Control": "public, max-age=31536000, immutable"}},
		{"content-addressed archive", "GET", caZip, nil, 200, zipBytes, map[string]string{"Content-Type": "application/zip", "ETag": etag, "Cache-Control": "public, max-age=31536000, immutable", "Content-Encoding": "", "X-Content-Type-Options": "nosniff"}},
		{"content-addressed, gzip asked", "GET", caZip, []string{"Accept-Encoding", "gzip"}, 200, zipBytes, map[string]string{"Content-Encoding": ""}},
		{"content-addressed head", "HEAD", caZip, nil, 200, []byte{}, map[string]string{"ETag": etag, "Content-Type": "application/zip"}},
		{"content-addressed not modified", "GET", caZip, []string{"If-None-Match", etag}, 304, []byte{}, nil},
		{"content-addressed range", "GET", caZip, []string{"Range", "bytes=0-9"}, 206, zipBytes[:10], nil},
		{"content-addressed resource", "GET", caDeploy, nil, 200, nil, map[string]string{"Content-Type": "text/x-shellscript; charset=utf-8", "Cache-Control": "public, max-age=31536000, immutable"}},
		{"content-addressed under a name it is not published as", "GET", "/api/v1/blobs/sha256/" + v.Archive.Hex() + "/page.html", nil, 404, nil, nil},
		{"content-addressed name with other bytes", "GET", "/api/v1/blobs/sha256/" + deploy.Digest.Hex() + "/archive.zip", nil, 404, nil, nil},
		{"content-addressed unknown bytes", "GET", "/api/v1/blobs/sha256/" + strings.Repeat("0", 64) + "/archive.zip", nil, 404, nil, nil},
		{"content-addressed malformed digest", "GET", "/api/v1/blobs/sha256/nothex/archive.zip", nil, 404, nil, nil},
		{"content-addressed upper-case digest", "GET", "/api/v1/blobs/sha256/" + strings.ToUpper(v.Archive.Hex()) + "/archive.zip", nil, 404, nil, nil},
		{"pinned to other bytes", "GET", zipPath + "?digest=" + v.SkillMD.String(), nil, 404, nil, nil},
		{"pinned malformed", "GET", zipPath + "?digest=sha256:XYZ", nil, 400, nil, nil},
		{"pinned past the parameter limit", "GET", zipPath + "?" + tooMany + "digest=sha256:XYZ", nil, 400, nil, nil},
		{"pinned with a semicolon", "GET", zipPath + "?digest=sha256:XYZ;a", nil, 400, nil, nil},
		{"search past the parameter limit", "GET", "/api/v1/skills?" + tooMany + "take=x", nil, 400, nil, nil},
		{"bad escape in the query", "GET", "/api/v1/skills?q=%zz", nil, 400, nil, nil},
		{"head", "HEAD", zipPath, nil, 200, []byte{}, map[string]string{"ETag": etag, "Content-Type": "application/zip"}},
		{"not modified", "GET", zipPath, []string{"If-None-Match", etag}, 304, []byte{}, map[string]string{"ETag": etag}},
		{"stale etag", "GET", zipPath, []string{"If-None-Match", `"sha256:0"`}, 200, zipBytes, nil},
		{"range", "GET", zipPath, []string{"Range", "bytes=0-9"}, 206, zipBytes[:10], map[string]string{"Content-Range": "bytes 0-9/" + itoa(len(zipBytes))}},
		{"range not satisfiable", "GET", zipPath, []string{"Range", "bytes=999999-"}, 416, nil, map[string]string{"Content-Type": "application/json; charset=utf-8", "Content-Range": "bytes */" + itoa(len(zipBytes))}},
		{"empty suffix range", "GET", zipPath, []string{"Range", "bytes=-0"}, 416, nil, map[string]string{"Content-Range": "bytes */" + itoa(len(zipBytes))}},
		{"empty suffix range, spaced", "GET", zipPath, []string{"Range", "bytes=- 0"}, 416, nil, map[string]string{"Content-Range": "bytes */" + itoa(len(zipBytes))}},
		{"empty suffix range among others", "GET", zipPath, []string{"Range", "bytes=-0, 0-9"}, 206, zipBytes[:10], map[string]string{"Content-Range": "bytes 0-9/" + itoa(len(zipBytes))}},
		{"empty suffix range, not modified", "GET", zipPath, []string{"Range", "bytes=-0", "If-None-Match", etag}, 304, nil, nil},
		{"many ranges", "GET", zipPath, []string{"Range", "bytes=" + strings.Repeat("0-0,", maxRanges) + "1-1"}, 200, zipBytes, map[string]string{"Content-Range": ""}},
		{"as many ranges as allowed", "GET", zipPath, []string{"Range", "bytes=0-0" + strings.Repeat(",2-2", maxRanges-1)}, 206, nil, nil},
		{"no gzip for artifacts", "GET", zipPath, []string{"Accept-Encoding", "gzip"}, 200, zipBytes, map[string]string{"Content-Encoding": ""}},
		{"skill md", "GET", "/api/v1/skills/k8s-deploy/1.2.0/SKILL.md", nil, 200, md, map[string]string{"Content-Type": "text/markdown; charset=utf-8"}},
		{"conventional latest", "GET", "/.well-known/agent-skills/k8s-deploy/SKILL.md", nil, 200, md, nil},
		{"prerelease by version", "GET", "/api/v1/skills/k8s-deploy/2.0.0-rc.1/SKILL.md", nil, 200, nil, nil},
		{"resource", "GET", "/api/v1/skills/k8s-deploy/1.2.0/scripts/deploy.sh", nil, 200, nil, map[string]string{"Content-Type": "text/x-shellscript; charset=utf-8"}},
		{"binary resource", "GET", "/api/v1/skills/k8s-deploy/1.2.0/assets/logo.png", nil, 200, nil, map[string]string{"Content-Type": "image/png"}},
		{"blob", "GET", "/api/v1/blobs/sha256/" + v.Archive.Hex(), nil, 200, zipBytes, map[string]string{"Content-Type": "application/octet-stream", "Cache-Control": "public, max-age=31536000, immutable"}},
		{"blob with prefix", "GET", "/api/v1/blobs/sha256/" + v.Archive.String(), nil, 200, zipBytes, nil},
		{"blob unknown", "GET", "/api/v1/blobs/sha256/" + strings.Repeat("0", 64), nil, 404, nil, nil},
		{"blob malformed", "GET", "/api/v1/blobs/sha256/nothex", nil, 400, nil, nil},
		{"archive of a skill-md", "GET", "/api/v1/skills/release-notes/0.3.1/archive.zip", nil, 404, nil, nil},
		{"unknown skill", "GET", "/api/v1/skills/nope/1.0.0/SKILL.md", nil, 404, nil, nil},
		{"unknown version", "GET", "/api/v1/skills/k8s-deploy/9.9.9/SKILL.md", nil, 404, nil, nil},
		{"unknown resource", "GET", "/api/v1/skills/k8s-deploy/1.2.0/scripts/nope.sh", nil, 404, nil, nil},
		{"dotdot", "GET", "/api/v1/skills/k8s-deploy/1.2.0/../../../../go.mod", nil, 404, nil, nil},
		{"encoded dotdot", "GET", "/api/v1/skills/k8s-deploy/1.2.0/..%2f..%2f..%2fgo.mod", nil, 404, nil, nil},
		{"encoded dotdot in name", "GET", "/api/v1/skills/..%2fk8s-deploy/1.2.0/SKILL.md", nil, 404, nil, nil},
		{"double encoded", "GET", "/api/v1/skills/k8s-deploy/1.2.0/%252e%252e%252fgo.mod", nil, 404, nil, nil},
		{"dotdot inside version", "GET", "/api/v1/skills/k8s-deploy/1.2.0/scripts/../SKILL.md", nil, 404, nil, nil},
		{"hidden file never published", "GET", "/api/v1/skills/k8s-deploy/1.2.0/.git/config", nil, 404, nil, nil},
		{"wrong method", "POST", zipPath, nil, 405, nil, map[string]string{"Allow": "GET, HEAD"}},
		{"delete index", "DELETE", "/.well-known/agent-skills/index.json", nil, 405, nil, map[string]string{"Allow": "GET, HEAD"}},
		{"unknown route", "GET", "/nope", nil, 404, nil, nil},
		{"preflight", "OPTIONS", "/.well-known/agent-skills/index.json", []string{"Access-Control-Request-Method", "GET", "Origin", "https://a.test"}, 204, nil, map[string]string{"Access-Control-Allow-Origin": "*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, s, tt.method, tt.target, tt.headers...)
			if r.code != tt.code {
				t.Fatalf("status %d, want %d; body %s", r.code, tt.code, r.body)
			}
			if tt.body != nil && !bytes.Equal(r.body, tt.body) {
				t.Errorf("body differs (%d bytes, want %d)", len(r.body), len(tt.body))
			}
			for k, want := range tt.want {
				if got := r.header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if r.code >= 400 {
				var e errorBody
				if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" || e.Message == "" {
					t.Errorf("error body %q is not {error, message}", r.body)
				}
				if r.header.Get("Content-Type") != jsonContentType {
					t.Errorf("error Content-Type %q", r.header.Get("Content-Type"))
				}
			}
			if tt.method == "GET" && tt.code == 200 && r.header.Get("Access-Control-Allow-Origin") != "*" {
				t.Error("no CORS header on GET")
			}
		})
	}
}

// TestHeadMatchesGet: every GET route answers HEAD with the same headers and
// no body, over a real connection, where net/http adds a Content-Length
// to a GET that the handler left out and cannot add one to a HEAD.
func TestHeadMatchesGet(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	base := "http://" + serveReal(t, s, transport.ConnLimits{})
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	fetch := func(method, p, encoding string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+p, nil)
		req.Header.Set("Accept-Encoding", encoding)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, p := range []string{
		"/.well-known/agent-skills/index.json",
		"/.well-known/agent-skills/code-review/SKILL.md",
		"/api/v1/skills/code-review/1.0.0/archive.zip",
		"/api/v1/skills/code-review/1.0.0/references/checklist.md",
		"/api/v1/info", "/healthz", "/readyz", "/health",
		"/api/v1/skills/nope/1/SKILL.md",
	} {
		for _, enc := range []string{"", "gzip"} {
			g, _ := fetch("GET", p, enc)
			h, hbody := fetch("HEAD", p, enc)
			if g.StatusCode != h.StatusCode || len(hbody) != 0 {
				t.Errorf("%s (%q): GET %d, HEAD %d with %d body bytes", p, enc, g.StatusCode, h.StatusCode, len(hbody))
			}
			for _, k := range []string{"Content-Type", "ETag", "Content-Length", "Content-Encoding", "Cache-Control"} {
				if g.Header.Get(k) != h.Header.Get(k) {
					t.Errorf("%s (%q): %s GET %q HEAD %q", p, enc, k, g.Header.Get(k), h.Header.Get(k))
				}
			}
		}
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

func TestBaseURLFromRequest(t *testing.T) {
	tests := []struct {
		name    string
		trust   bool
		host    string
		headers []string
		want    string // prefix of every url; "" means 400
	}{
		{"host header", false, "skills.internal:8080", nil, "http://skills.internal:8080/api/v1/"},
		{"forwarded ignored", false, "a.test", []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.test"}, "http://a.test/api/v1/"},
		{"forwarded trusted", true, "a.test", []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "pub.test, b.test"}, "https://pub.test/api/v1/"},
		{"bad forwarded host", true, "a.test", []string{"X-Forwarded-Host", "x\"y"}, ""},
		{"bad proto ignored", true, "a.test", []string{"X-Forwarded-Proto", "javascript"}, "http://a.test/api/v1/"},
		{"ipv4 and port", false, "127.0.0.1:65535", nil, "http://127.0.0.1:65535/api/v1/"},
		{"ipv6 literal", false, "[::1]:8080", nil, "http://[::1]:8080/api/v1/"},
		{"ipv6 without port", false, "[2001:db8::1]", nil, "http://[2001:db8::1]/api/v1/"},
		{"trailing label digits", false, "a-1.b2", nil, "http://a-1.b2/api/v1/"},
		{"fully qualified", false, "skills.example.com.:8080", nil, "http://skills.example.com.:8080/api/v1/"},
		{"only the root", false, ".", nil, ""},
		{"no host: the local address", false, "", nil, "http://127.0.0.1:4321/api/v1/"},
		{"port out of range", false, "127.0.0.1:99999", nil, ""},
		{"port zero", false, "a.test:0", nil, ""},
		{"port with leading zero", false, "a.test:080", nil, ""},
		{"empty port", false, "a.test:", nil, ""},
		{"leading hyphen", false, "-x", nil, ""},
		{"trailing hyphen", false, "x-.test", nil, ""},
		{"empty label", false, "a..b", nil, ""},
		{"long label", false, strings.Repeat("a", 64) + ".test", nil, ""},
		{"ipv4 in brackets", false, "[127.0.0.1]:80", nil, ""},
		{"bad ipv6", false, "[::zz]", nil, ""},
		{"ipv6 zone", false, "[fe80::1%25eth0]", nil, ""},
		{"bare ipv6", false, "::1", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestServer(t, Options{TrustProxy: tt.trust})
			req := httptest.NewRequest("GET", "/.well-known/agent-skills/index.json", nil)
			req.Host = tt.host
			if tt.host == "" {
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4321}))
			}
			for i := 0; i+1 < len(tt.headers); i += 2 {
				req.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if tt.want == "" {
				if rec.Code != 400 {
					t.Errorf("status %d, want 400", rec.Code)
				}
				return
			}
			var idx struct{ Skills []struct{ URL string } }
			if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil || len(idx.Skills) == 0 {
				t.Fatalf("index: %v %s", err, rec.Body)
			}
			for _, sk := range idx.Skills {
				if !strings.HasPrefix(sk.URL, tt.want) {
					t.Errorf("url %s, want prefix %s", sk.URL, tt.want)
				}
			}
		})
	}
}

type nilSnapshots struct{}

func (nilSnapshots) Current() *catalog.Snapshot { return nil }
func (nilSnapshots) Locate(*catalog.Snapshot, catalog.Lookup) (catalog.Found, bool) {
	return catalog.Found{}, false
}

func TestNotReady(t *testing.T) {
	s := NewServer(nilSnapshots{}, Options{}, slog.New(slog.DiscardHandler))
	for _, p := range []string{"/readyz", "/.well-known/agent-skills/index.json", "/api/v1/skills/a/1/SKILL.md"} {
		if r := do(t, s, "GET", p); r.code != 503 {
			t.Errorf("%s: %d, want 503", p, r.code)
		}
	}
	if r := do(t, s, "GET", "/healthz"); r.code != 200 {
		t.Errorf("/healthz: %d", r.code)
	}
}

func TestInfo(t *testing.T) {
	s, _ := newTestServer(t, Options{Build: BuildInfo{Version: "1.2.3", GoVersion: "go"}})
	r := do(t, s, "GET", "/api/v1/info")
	var info infoBody
	if err := json.Unmarshal(r.body, &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != "1.2.3" || info.Skills != 5 || info.SkillVersions != 7 || info.Generation != 1 {
		t.Errorf("info = %+v", info)
	}
	r = do(t, s, "GET", "/health")
	if !bytes.Contains(r.body, []byte(`"status": "healthy"`)) {
		t.Errorf("health = %s", r.body)
	}
}

func TestPanicIsA500(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	s.router.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	r := do(t, s, "GET", "/boom")
	if r.code != 500 || bytes.Contains(r.body, []byte("boom")) {
		t.Errorf("status %d body %s: want 500 without internals", r.code, r.body)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

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

type catalogReloader struct{ cat *catalog.Catalog }

func (c catalogReloader) ReloadNow(ctx context.Context) (*catalog.Snapshot, error) {
	return c.cat.Reload(ctx)
}

func TestAdminReload(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "---\nname: a\ndescription: d\n---\n")
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	disabled := NewServer(cat, Options{Reloader: catalogReloader{cat}}, slog.New(slog.DiscardHandler))
	if r := do(t, disabled, "POST", "/-/reload", "Authorization", "Bearer x"); r.code != 404 {
		t.Errorf("disabled: %d, want 404", r.code)
	}
	s := NewServer(cat, Options{AdminToken: "s3cret", Reloader: catalogReloader{cat}}, slog.New(slog.DiscardHandler))
	if r := do(t, s, "POST", "/-/reload"); r.code != 401 || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d, want 401 with WWW-Authenticate", r.code)
	}
	if r := do(t, s, "POST", "/-/reload", "Authorization", "Bearer wrong"); r.code != 403 {
		t.Errorf("wrong token: %d, want 403", r.code)
	}
	if r := do(t, s, "GET", "/-/reload", "Authorization", "Bearer s3cret"); r.code != 405 {
		t.Errorf("GET: %d, want 405", r.code)
	}
	write("b", "---\nname: b\n---\n") // invalid: no description
	write("c", "---\nname: c\ndescription: d\n---\n")
	r := do(t, s, "POST", "/-/reload", "Authorization", "Bearer s3cret")
	if r.code != 200 {
		t.Fatalf("reload: %d %s", r.code, r.body)
	}
	var body struct {
		Generation uint64
		Skills     int
		Errors     int
		Problems   []struct{ Path, Rule string }
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Generation != 2 || body.Skills != 2 || body.Errors != 1 || len(body.Problems) != 1 || body.Problems[0].Rule != "description" {
		t.Errorf("reload answered %+v", body)
	}
	if cat.Current().Generation != 2 {
		t.Error("the answer came before the snapshot was live")
	}
	// Schemes are case-insensitive.
	for _, h := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret"} {
		if r := do(t, s, "POST", "/-/reload", "Authorization", h); r.code != 200 {
			t.Errorf("Authorization %q: %d, want 200", h, r.code)
		}
	}
	for _, h := range []string{"Basic s3cret", "Bearer", "Bearer ", "Bearers3cret"} {
		if r := do(t, s, "POST", "/-/reload", "Authorization", h); r.code != 401 {
			t.Errorf("Authorization %q: %d, want 401", h, r.code)
		}
	}
}

type blockingReloader struct{ started chan struct{} }

func (b blockingReloader) ReloadNow(ctx context.Context) (*catalog.Snapshot, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// A reload the client gave up on was logged as a 200.
func TestAdminReloadClientGone(t *testing.T) {
	cat := catalog.New(catalog.Source{}, slog.New(slog.DiscardHandler))
	var logs bytes.Buffer
	rl := blockingReloader{started: make(chan struct{})}
	s := NewServer(cat, Options{AdminToken: "t", Reloader: rl}, slog.New(slog.NewJSONHandler(&logs, nil)))
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-rl.started; cancel() }()
	req := httptest.NewRequestWithContext(ctx, "POST", "/-/reload", nil)
	req.Header.Set("Authorization", "Bearer t")
	s.ServeHTTP(httptest.NewRecorder(), req)
	var line struct {
		Msg    string
		Status int
		Error  string
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, logs.Bytes())
	}
	if line.Msg != "request" || line.Status != transport.StatusClientClosed || line.Error != context.Canceled.Error() {
		t.Errorf("logged %s; want status %d and the context's error", logs.Bytes(), transport.StatusClientClosed)
	}
}

// editableSkill is a catalog over one skill, a 1.0.0 with a resource
// (so an archive), loaded with ref "one", and write, which rewrites its
// SKILL.md and ref.md with ref: the same version edited in place, for
// the next Reload.
func editableSkill(t *testing.T) (*catalog.Catalog, func(ref string)) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(ref string) {
		t.Helper()
		for name, data := range map[string]string{"SKILL.md": "---\nname: a\ndescription: d\nversion: 1.0.0\n---\n" + ref, "ref.md": ref} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("one")
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return cat, write
}

// TestPinnedURLSurvivesReload: a URL read from the feed before a reload
// still answers exactly its bytes afterwards; unpinned, the path serves
// the new bytes.
func TestPinnedURLSurvivesReload(t *testing.T) {
	cat, write := editableSkill(t)
	s := NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler))
	var idx struct {
		Skills []struct {
			URL, Digest string
			Resources   []struct{ URL, Digest string }
		}
	}
	json.Unmarshal(do(t, s, "GET", "/.well-known/agent-skills/index.json").body, &idx)
	old := idx.Skills[0]
	page := do(t, s, "GET", "/skills/v1/a/versions/1.0.0.json")

	write("two") // the same version edited in place
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The advertised, content-addressed URLs and the older query-pinned
	// form of the same artifacts both keep their bytes.
	for _, u := range []struct{ url, digest string }{
		{old.URL, old.Digest}, {old.Resources[0].URL, old.Resources[0].Digest},
		{testBase + "/api/v1/skills/a/1.0.0/archive.zip?digest=" + old.Digest, old.Digest},
		{testBase + "/api/v1/skills/a/1.0.0/ref.md?digest=" + old.Resources[0].Digest, old.Resources[0].Digest},
	} {
		r := do(t, s, "GET", strings.TrimPrefix(u.url, testBase))
		if r.code != 200 || content.Sum(r.body).String() != u.digest {
			t.Errorf("pinned %s after reload: %d, digest %s", u.url, r.code, content.Sum(r.body))
		}
	}
	if !strings.Contains(old.URL, "/api/v1/blobs/sha256/"+strings.TrimPrefix(old.Digest, "sha256:")+"/archive.zip") {
		t.Errorf("advertised URL %s does not name its bytes in the path", old.URL)
	}
	unpinned := do(t, s, "GET", "/api/v1/skills/a/1.0.0/ref.md")
	if string(unpinned.body) != "two" {
		t.Errorf("unpinned path serves %q, want the new bytes", unpinned.body)
	}
	if r := do(t, s, "GET", "/api/v1/blobs/sha256/"+strings.TrimPrefix(old.Digest, "sha256:")); r.code != 200 {
		t.Errorf("retained blob by digest: %d", r.code)
	}
	if r := do(t, s, "GET", "/skills/v1/a/versions/1.0.0.json"); bytes.Equal(r.body, page.body) {
		t.Error("version document did not change with the tree")
	}
	// More reloads than retired snapshots are kept (8): the
	// content-addressed URLs answer from retention, as pins do.
	for i := range 10 {
		write("edit " + strconv.Itoa(i))
		if _, err := cat.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []struct{ url, digest string }{{old.URL, old.Digest}, {old.Resources[0].URL, old.Resources[0].Digest}} {
		r := do(t, s, "GET", strings.TrimPrefix(u.url, testBase))
		if r.code != 200 || content.Sum(r.body).String() != u.digest || r.header.Get("Content-Type") == "application/octet-stream" {
			t.Errorf("%s after 11 reloads: %d, digest %s, Content-Type %q", u.url, r.code, content.Sum(r.body), r.header.Get("Content-Type"))
		}
	}
	if r := do(t, s, "GET", "/api/v1/blobs/sha256/"+strings.TrimPrefix(old.Digest, "sha256:")+"/other.zip"); r.code != 404 {
		t.Errorf("retained bytes under a name they were never published as: %d", r.code)
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

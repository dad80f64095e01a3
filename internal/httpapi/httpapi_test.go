package httpapi

import (
	"bytes"
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
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
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

// bounded is opts with the bounds of the read API at their configured
// defaults: a zero Options field is off, no bound.
func bounded(opts Options) Options {
	opts.MaxSearchResults = config.Default[int]("max_search_results")
	opts.MaxUpdateChecks = config.Default[int]("max_update_checks")
	opts.MaxBodyBytes = config.Default[int]("max_body_bytes")
	opts.MaxQueryBytes = config.Default[int]("max_query_bytes")
	return opts
}

// newTestServerLog is newTestServer logging to log.
func newTestServerLog(t testing.TB, opts Options, log *slog.Logger) (*Server, *catalog.Snapshot) {
	t.Helper()
	skills, agents := fixture.ExampleTree(t, "../..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents,
		Server: feed.ServerInfo{Name: "skillserver", Description: "Test server.", Version: "1.2.3-test"}}, slog.New(slog.DiscardHandler),
		catalog.Options{Retention: config.Default[time.Duration]("retention"), DocumentCacheBytes: config.Default[int64]("document_cache_max_bytes")})
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

func TestPanicIsA500(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	s.router.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	r := do(t, s, "GET", "/boom")
	if r.code != 500 || bytes.Contains(r.body, []byte("boom")) {
		t.Errorf("status %d body %s: want 500 without internals", r.code, r.body)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

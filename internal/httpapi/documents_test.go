package httpapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
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
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
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

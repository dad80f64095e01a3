package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/skill"
)

// TestAPICatalog: the catalog is a linkset of the request's base whose
// items are the RFC index, the manifest, the agent card and the read API,
// each described by /openapi.yaml; every href it names answers 200 here.
func TestAPICatalog(t *testing.T) {
	const base = "https://skills.example.com"
	s, _ := newTestServer(t, Options{BaseURL: base})
	r := do(t, s, http.MethodGet, feed.PathAPICatalog)
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != `application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"` {
		t.Errorf("Content-Type %q", ct)
	}
	var ls feed.Linkset
	if err := json.Unmarshal(r.body, &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Linkset) == 0 || ls.Linkset[0].Anchor != base+feed.PathAPICatalog {
		t.Fatalf("first context is not the catalog: %s", r.body)
	}
	var items []string
	for _, it := range ls.Linkset[0].Item {
		items = append(items, strings.TrimPrefix(it.Href, base))
	}
	want := []string{"/.well-known/agent-skills/index.json", "/manifest.json", "/.well-known/agent-card.json", "/.well-known/ai-catalog.json", "/api/v1/skills"}
	if strings.Join(items, " ") != strings.Join(want, " ") {
		t.Errorf("items %q, want %q", items, want)
	}
	described := map[string]bool{}
	for _, c := range ls.Linkset[1:] {
		for _, d := range c.ServiceDesc {
			if d.Href == base+feed.PathOpenAPI {
				described[c.Anchor] = true
			}
		}
		for _, links := range [][]feed.TargetLink{c.ServiceDesc, c.Status} {
			for _, l := range links {
				checkAnswers(t, s, base, l.Href)
			}
		}
	}
	for _, it := range ls.Linkset[0].Item {
		checkAnswers(t, s, base, it.Href)
		if !described[it.Href] {
			t.Errorf("%s has no service-desc link to %s", it.Href, feed.PathOpenAPI)
		}
	}
}

func checkAnswers(t *testing.T, h http.Handler, base, href string) {
	t.Helper()
	path, ok := strings.CutPrefix(href, base)
	if !ok {
		t.Errorf("href %q is not absolute under %s", href, base)
		return
	}
	if r := do(t, h, http.MethodGet, path); r.code != http.StatusOK {
		t.Errorf("GET %s: %d", path, r.code)
	}
}

// TestOpenAPIServed: /openapi.yaml is api/openapi.yaml, byte for byte,
// with an ETag that revalidates.
func TestOpenAPIServed(t *testing.T) {
	want, err := os.ReadFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Options{})
	r := do(t, s, http.MethodGet, feed.PathOpenAPI)
	if r.code != http.StatusOK || !bytes.Equal(r.body, want) || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("status %d, Content-Type %q, %d bytes; want 200, application/yaml, the %d bytes of api/openapi.yaml",
			r.code, r.header.Get("Content-Type"), len(r.body), len(want))
	}
	if r2 := do(t, s, http.MethodGet, feed.PathOpenAPI, "If-None-Match", r.header.Get("ETag")); r2.code != http.StatusNotModified {
		t.Errorf("revalidation: %d, want 304", r2.code)
	}
}

// TestFindCountsInstalls: /api/search ranks as /api/v1/skills, names this
// server as every hit's source, and counts whole GETs of SKILL.md and
// archive.zip, not HEAD, Range, 304, a failed precondition or resources.
func TestFindCountsInstalls(t *testing.T) {
	const base = "https://skills.example.com"
	s, snap := newTestServer(t, Options{BaseURL: base})
	find := func(target string) feed.FindResults {
		t.Helper()
		r := do(t, s, http.MethodGet, target)
		if r.code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, r.code, r.body)
		}
		var got feed.FindResults
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	var ranked []feed.Summary
	if r := do(t, s, http.MethodGet, "/api/v1/skills?q=review"); json.Unmarshal(r.body, &ranked) != nil || len(ranked) == 0 {
		t.Fatalf("search: %s", r.body)
	}
	got := find("/api/search?q=review&limit=20")
	if len(got.Skills) != len(ranked) {
		t.Fatalf("find has %d hits, search %d", len(got.Skills), len(ranked))
	}
	for i, h := range got.Skills {
		if h.Name != ranked[i].Name || h.ID != h.Name || h.Source != base || h.Installs != 0 {
			t.Errorf("hit %d = %+v, want %s from %s with 0 installs", i, h, ranked[i].Name, base)
		}
	}
	if n := len(find("/api/search?q=&limit=1").Skills); n != 1 {
		t.Errorf("limit=1 gave %d hits", n)
	}
	if r := do(t, s, http.MethodGet, "/api/search?q=x&limit=-1"); r.code != http.StatusBadRequest {
		t.Errorf("limit=-1: %d, want 400", r.code)
	}

	k8s, _ := snap.Skill("k8s-deploy")
	etag := k8s.Latest.Archive.ETag()
	counted := []string{
		"/api/v1/skills/k8s-deploy/1.2.0/archive.zip",
		"/api/v1/skills/k8s-deploy/1.2.0/archive.zip?digest=" + string(k8s.Latest.Archive),
		"/api/v1/skills/k8s-deploy/1.0.0/SKILL.md",
		"/.well-known/agent-skills/k8s-deploy/SKILL.md",
		"/.well-known/skills/k8s-deploy/SKILL.md",
		feed.ArtifactPath(k8s.Latest.Archive, feed.ArchiveFile), // the URL the feeds advertise
	}
	for _, p := range counted {
		if r := do(t, s, http.MethodGet, p); r.code != http.StatusOK {
			t.Fatalf("GET %s: %d", p, r.code)
		}
	}
	notCounted := []struct{ method, path, h, v string }{
		{http.MethodHead, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "", ""},
		{http.MethodGet, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "Range", "bytes=0-9"},
		{http.MethodGet, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "If-None-Match", etag},
		// Revalidations the 304 test also answers: a weak tag, a list, *.
		{http.MethodGet, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "If-None-Match", "W/" + etag},
		{http.MethodGet, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "If-None-Match", `"other", ` + etag},
		{http.MethodGet, feed.ArtifactPath(k8s.Latest.Archive, feed.ArchiveFile), "If-None-Match", "*"},
		{http.MethodGet, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", "If-Match", `"other"`}, // 412
		{http.MethodGet, "/api/v1/skills/k8s-deploy/1.2.0/scripts/deploy.sh", "", ""},
		{http.MethodGet, "/api/v1/skills/k8s-deploy/9.9.9/archive.zip", "", ""},
	}
	for _, c := range notCounted {
		do(t, s, c.method, c.path, c.h, c.v)
	}
	for _, h := range find("/api/search?q=k8s-deploy").Skills {
		if h.Name == "k8s-deploy" && h.Installs != uint64(len(counted)) {
			t.Errorf("k8s-deploy installs = %d, want %d", h.Installs, len(counted))
		}
	}
}

// TestRootLinks: / links to the API catalog, the description and every
// entry point, and each link answers 200.
func TestRootLinks(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	r := do(t, s, http.MethodGet, "/")
	link := r.header.Get("Link")
	if r.code != http.StatusOK || !strings.Contains(link, `</.well-known/api-catalog>; rel="api-catalog"`) ||
		!strings.Contains(link, `</openapi.yaml>; rel="service-desc"`) {
		t.Fatalf("GET /: %d, Link %q", r.code, link)
	}
	for _, l := range strings.Split(link, ", ") {
		target := strings.TrimPrefix(l[:strings.IndexByte(l, '>')], "<")
		if got := do(t, s, http.MethodGet, target); got.code != http.StatusOK {
			t.Errorf("Link %s: GET %d", l, got.code)
		}
	}
}

// A replaced artifact's content-addressed URL counts installs as the
// current one does: the archive of an archive version counts, the
// SKILL.md inside it (which the pages link to) does not, whether the
// snapshot that published them is current, retired or gone and its
// bytes only retained.
func TestRetainedDownloadsCountAsCurrent(t *testing.T) {
	cat, write := editableSkill(t)
	s := NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler))
	sk, _ := cat.Current().Skill("a")
	archive := feed.ArtifactPath(sk.Latest.Archive, feed.ArchiveFile)
	skillMD := feed.ArtifactPath(sk.Latest.SkillMD, skill.FileName)
	installs := func() uint64 {
		t.Helper()
		var got feed.FindResults
		if err := json.Unmarshal(do(t, s, http.MethodGet, "/api/search?q=a").body, &got); err != nil || len(got.Skills) != 1 {
			t.Fatalf("find: %v %+v", err, got)
		}
		return got.Skills[0].Installs
	}
	get := func(p string) {
		t.Helper()
		if r := do(t, s, http.MethodGet, p); r.code != http.StatusOK {
			t.Fatalf("GET %s: %d", p, r.code)
		}
	}
	for phase, reloads := range []int{0, 1, 12} { // current; retired; past the retired snapshots kept, bytes retained
		for i := range reloads {
			write(fmt.Sprintf("edit %d.%d", phase, i))
			if _, err := cat.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		before := installs()
		get(skillMD)
		if n := installs(); n != before {
			t.Errorf("after %d reloads: the archive's SKILL.md counted as an install (%d -> %d)", reloads, before, n)
		}
		get(archive)
		if n := installs(); n != before+1 {
			t.Errorf("after %d reloads: the archive counted %d installs, want 1", reloads, n-before)
		}
	}
}

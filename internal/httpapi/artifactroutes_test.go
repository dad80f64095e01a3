package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/content"
)

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
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler),
		catalog.Options{Retention: config.Default[time.Duration]("retention")})
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

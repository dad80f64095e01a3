package httpapi

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/content"
)

// TestClawHubRoutes: discovery names the API absolute (with a path token
// when the request had one); downloads are the RFC archive's bytes, or a
// zip of a lone SKILL.md; unknown skills and a scoped token's others are
// the text the CLI recognises; every write is a read-only 405.
func TestClawHubRoutes(t *testing.T) {
	s, snap := newTestServer(t, Options{BaseURL: testBase})
	var disc struct{ APIBase string }
	if r := do(t, s, "GET", "/.well-known/clawhub.json"); json.Unmarshal(r.body, &disc) != nil || disc.APIBase != testBase+"/clawhub" {
		t.Errorf("discovery: %d %s", r.code, r.body)
	}
	sk, _ := snap.Skill("k8s-deploy")
	want, _ := snap.Store.Get(sk.Latest.Archive)
	if r := do(t, s, "GET", "/clawhub/api/v1/download?slug=k8s-deploy&version=1.2.0"); r.code != 200 || !bytes.Equal(r.body, want) {
		t.Errorf("download of an archive version: %d, %d bytes, want the archive's %d", r.code, len(r.body), len(want))
	}
	r := do(t, s, "GET", "/clawhub/api/v1/download?slug=release-notes")
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if r.code != 200 || err != nil || len(zr.File) != 1 || zr.File[0].Name != "SKILL.md" {
		t.Fatalf("download of a lone SKILL.md: %d %v", r.code, err)
	}
	rc, _ := zr.File[0].Open()
	md, _ := io.ReadAll(rc)
	rn, _ := snap.Skill("release-notes")
	if content.Sum(md) != rn.Latest.SkillMD {
		t.Error("the zip's SKILL.md is not the skill's")
	}
	if r := do(t, s, "GET", "/clawhub/api/v1/skills/k8s-deploy/file?path=scripts/deploy.sh&version=1.2.0"); r.code != 200 ||
		!strings.HasPrefix(string(r.body), "#!") || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("file: %d %q %v", r.code, r.body, r.header)
	}
	for _, target := range []string{"/clawhub/api/v1/skills/nope", "/clawhub/api/v1/download?slug=nope", "/clawhub/api/v1/skills/k8s-deploy/versions/9.9.9",
		"/clawhub/api/v1/resolve?slug=nope&hash=x", "/clawhub/api/v1/skills/k8s-deploy/file?path=nope"} {
		if r := do(t, s, "GET", target); r.code != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s: %d %q", target, r.code, r.body)
		}
	}
	if r := do(t, s, "GET", "/clawhub/api/v1/skills/nope"); strings.TrimSpace(string(r.body)) != "Skill not found" {
		t.Errorf("unknown skill: %q", r.body)
	}
	for _, c := range []struct{ method, target string }{{"POST", "/clawhub/api/v1/skills"}, {"POST", "/clawhub/api/v1/skills/-/upload-url"},
		{"DELETE", "/clawhub/api/v1/skills/k8s-deploy"}, {"POST", "/clawhub/api/v1/stars/k8s-deploy"}} {
		if r := do(t, s, c.method, c.target); r.code != http.StatusMethodNotAllowed || !strings.Contains(string(r.body), "read-only") {
			t.Errorf("%s %s: %d %q", c.method, c.target, r.code, r.body)
		}
	}

	const all, team = "read-all-0123456789abcdef", "read-team-0123456789abcde"
	set, err := access.Parse(strings.NewReader("all "+all+" *\nteam "+team+" code-*\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	private, _ := newTestServer(t, Options{BaseURL: testBase, ReadTokens: tokenSet{set}})
	if r := do(t, private, "GET", "/t/"+team+"/.well-known/clawhub.json"); !strings.Contains(string(r.body), testBase+"/t/"+team+"/clawhub") {
		t.Errorf("discovery under a path token: %s", r.body)
	}
	if r := do(t, private, "GET", "/clawhub/api/v1/skills/k8s-deploy", "Authorization", "Bearer "+team); r.code != 404 {
		t.Errorf("a scoped token reads another skill: %d", r.code)
	}
	if r := do(t, private, "GET", "/clawhub/api/v1/skills/code-review", "Authorization", "Bearer "+team); r.code != 200 {
		t.Errorf("a scoped token's own skill: %d", r.code)
	}
	var who struct{ User struct{ Handle *string } }
	if r := do(t, private, "GET", "/clawhub/api/v1/whoami", "Authorization", "Bearer "+team); json.Unmarshal(r.body, &who) != nil || who.User.Handle == nil || *who.User.Handle != "team" {
		t.Errorf("whoami: %s", r.body)
	}
	if r := do(t, private, "GET", "/clawhub/api/v1/search?q=kube"); r.code != http.StatusUnauthorized {
		t.Errorf("no token: %d", r.code)
	}
}

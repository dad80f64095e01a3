package api_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/export"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/httpapi"
	"github.com/skillserver/skillserver/internal/metrics"
)

const (
	readAll  = "read-all-0123456789abcdef"
	readTeam = "read-team-0123456789abcde"
)

type staticTokens struct{ set *access.Set }

func (s staticTokens) Tokens() *access.Set { return s.set }

// privateServer serves the example tree as a private feed: readAll sees
// everything, readTeam only code-*, k8s-deploy and changelog-reviewer.
func privateServer(t *testing.T) http.Handler {
	t.Helper()
	set, err := access.Parse(strings.NewReader("all "+readAll+" *\nteam "+readTeam+" code-* k8s-deploy changelog-reviewer\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	skills, agents := fixture.ExampleTree(t, "..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents}, log)
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(cat, httpapi.Options{BaseURL: "https://skills.example.com", ReadTokens: staticTokens{set},
		Metrics: metrics.New(metrics.Build{Version: "v0.0.0-test"}).Handler()}, log)
	srv.SetReady(true)
	return srv
}

// TestOpenAPIPrivateFeed: with read tokens, every documented operation
// answers what openapi.yaml says without a token and with a wrong one.
func TestOpenAPIPrivateFeed(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	schemas := loadSchemas(t)
	h := privateServer(t)
	open := map[string]bool{"/healthz": true, "/readyz": true, "/-/reload": true, feed.PathUIProblems: true, feed.PathClawHubDiscovery: true}
	for path := range doc.Paths {
		for method, op := range doc.operations(t, path) {
			target := examplePath(t, path, doc.parameters(t, path, op))
			c := responseChecker{t: t, doc: doc, schemas: schemas, op: op}
			for _, tc := range []struct {
				name, target string
				header       []string
				want         int
			}{
				{"no token", target, nil, http.StatusUnauthorized},
				{"wrong bearer", target, []string{"Authorization", "Bearer wrong-0123456789abcdef"}, http.StatusForbidden},
				{"wrong path token", "/t/wrong-0123456789abcdef" + target, nil, http.StatusForbidden},
			} {
				r := c.check(h, method, tc.target, tc.header...)
				// ClawHub's discovery is open, but a path token in front
				// of it is checked: the document is then the token's.
				// The pages' assets answer without a token too (the
				// browser's 401 page loads them): none.js is no asset.
				if path == feed.PathUIAsset && !strings.HasPrefix(tc.target, "/t/") {
					if r.Code != http.StatusNotFound {
						t.Errorf("%s %s (%s): %d, want it open (404 for no asset)", method, tc.target, tc.name, r.Code)
					}
					continue
				}
				if open[path] && !(path == feed.PathClawHubDiscovery && strings.HasPrefix(tc.target, "/t/")) {
					// Open in either form; the admin routes check their own token.
					if path != "/-/reload" && path != feed.PathUIProblems && r.Code != http.StatusOK {
						t.Errorf("%s %s (%s): %d, want it open", method, tc.target, tc.name, r.Code)
					}
					continue
				}
				if r.Code != tc.want {
					t.Errorf("%s %s (%s): %d, want %d", method, tc.target, tc.name, r.Code, tc.want)
				}
			}
		}
	}
}

// TestScopedDocumentsValidate: the documents a scoped token reads through
// the path form validate against their schemas, keep the prefix in every
// URL and href, and name none of the items outside the scope.
func TestScopedDocumentsValidate(t *testing.T) {
	schemas := loadSchemas(t)
	h := privateServer(t)
	prefix := "/t/" + readTeam
	hidden := []string{"release-notes", "support-triage", "windows-notes", "technical-support-diagnostician"}
	for _, tc := range []struct{ path, kind string }{
		{"/.well-known/agent-skills/index.json", "rfc-index"},
		{"/skill/k8s-deploy/.well-known/agent-skills/index.json", "scoped-index"},
		{"/.well-known/skills/index.json", "legacy-index"},
		{"/.well-known/agent-card.json", "agent-card"},
		{"/manifest.json", "manifest"},
		{"/skills/v1/index.json", "skill-index"},
		{"/skills/v1/pages/all.json", "skill-page"},
		{"/skills/v1/k8s-deploy/index.json", "skill"},
		{"/skills/v1/k8s-deploy/versions/1.2.0.json", "skill-version"},
		{"/subagents/v1/index.json", "subagent-index"},
		{"/subagents/v1/pages/all.json", "subagent-page"},
		{"/subagents/v1/changelog-reviewer/index.json", "subagent"},
		{"/subagents/v1/changelog-reviewer/versions/1.0.0.json", "subagent-version"},
		{"/api/v1/skills", "search-results"},
		{"/api/v1/skills/k8s-deploy", "api-skill"},
		{"/api/v1/skills/k8s-deploy/1.2.0", "api-skill-version"},
		{"/api/v1/skills/k8s-deploy/1.2.0/resources", "api-skill-resources"},
		{"/api/v1/subagents/changelog-reviewer", "api-subagent"},
		{"/api/v1/subagents/changelog-reviewer/1.0.0", "api-subagent-version"},
	} {
		r := serve(h, http.MethodGet, prefix+tc.path)
		if r.Code != http.StatusOK {
			t.Errorf("%s: %d %s", tc.path, r.Code, r.Body)
			continue
		}
		v, err := decodeJSON(r.Body.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if err := schemas[tc.kind].Validate(v); err != nil {
			t.Errorf("%s does not match %s.schema.json:\n%v", tc.path, tc.kind, err)
		}
		body := r.Body.String()
		for _, name := range hidden {
			if strings.Contains(body, name) {
				t.Errorf("%s names %s, outside the token's scope:\n%s", tc.path, name, body)
			}
		}
		for _, link := range linkValues(v) {
			if !strings.HasPrefix(link, prefix+"/") && !strings.HasPrefix(link, "https://skills.example.com"+prefix+"/") {
				t.Errorf("%s: link %q lost the path token", tc.path, link)
			}
		}
	}
}

// linkValues are the "href" and "url" strings anywhere in v.
func linkValues(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "href" || k == "url") {
				out = append(out, s)
			}
			out = append(out, linkValues(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, linkValues(e)...)
		}
	}
	slices.Sort(out)
	return out
}

// TestPrivateAICatalogMatchesARD: the AI catalogue a read token sees is
// valid ARD, with the token in either form and scoped; the scoped one
// lists only the token's items; and so is the catalogue an export writes.
func TestPrivateAICatalogMatchesARD(t *testing.T) {
	schema := ardSchema(t)
	h := privateServer(t)
	for _, tc := range []struct {
		name, target string
		header       []string
		entries      int
	}{
		{"bearer", "/.well-known/ai-catalog.json", []string{"Authorization", "Bearer " + readAll}, 1 + 5 + 2},
		{"path token", "/t/" + readAll + "/.well-known/ard.json", nil, 1 + 5 + 2},
		{"scoped", "/t/" + readTeam + "/.well-known/ai-catalog.json", nil, 1 + 2 + 1},
	} {
		req := httptest.NewRequest(http.MethodGet, tc.target, nil)
		for i := 0; i+1 < len(tc.header); i += 2 {
			req.Header.Set(tc.header[i], tc.header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		doc, err := jsonschema.UnmarshalJSON(rec.Body)
		if rec.Code != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %v", tc.name, rec.Code, err)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("%s: not an ARD AI catalogue: %v", tc.name, err)
		}
		if n := len(doc.(map[string]any)["entries"].([]any)); n != tc.entries {
			t.Errorf("%s: %d entries, want %d", tc.name, n, tc.entries)
		}
	}

	skills, agents := fixture.ExampleTree(t, "..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents}, slog.New(slog.DiscardHandler))
	snap, err := cat.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	files, err := export.Files(snap.Feed(), snap.Store, export.Options{BaseURL: "https://skills.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		if !slices.Contains(feed.DocAICatalog.Patterns(), "/"+f.Key) {
			continue
		}
		found++
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.Body))
		if err != nil || f.ContentType != feed.AICatalogContentType {
			t.Fatalf("exported %s: %v, %s", f.Key, err, f.ContentType)
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("exported %s: not an ARD AI catalogue: %v", f.Key, err)
		}
	}
	if found != 2 {
		t.Errorf("the export holds %d AI catalogues, want ai-catalog.json and ard.json", found)
	}
}

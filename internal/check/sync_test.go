package check

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func zipOf(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	// Sorted, so the same entries always give the same bytes and digest.
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		body := entries[name]
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	w.Close()
	return buf.Bytes()
}

// serve answers each path with a fixed body; {base} is replaced by the
// server's URL.
func serve(t *testing.T, routes map[string][]byte) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(bytes.ReplaceAll(b, []byte("{base}"), []byte(srv.URL)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// hasRule reports whether err holds a violation of rule.
func hasRule(err error, rule Rule) bool {
	for _, v := range violations(err) {
		if v.Rule == rule {
			return true
		}
	}
	return false
}

func index(entry string) []byte {
	return []byte(`{"$schema":"` + RFCSchema + `","skills":[` + entry + `]}`)
}

// TestSyncSkillsRejects: each case is something netclaw or the skills CLI
// rejects; the walker must fail on it.
func TestSyncSkillsRejects(t *testing.T) {
	md := []byte("---\nname: a\ndescription: d\n---\n")
	goodZip := zipOf(t, map[string]string{"SKILL.md": string(md)})
	tests := []struct {
		name   string
		routes map[string][]byte
		want   Rule
	}{
		{"bad schema", map[string][]byte{"/.well-known/agent-skills/index.json": []byte(`{"$schema":"x","skills":[]}`)}, RuleSchema},
		{"digest mismatch", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"a","type":"skill-md","description":"d","url":"{base}/a.md","digest":"` + digestOf([]byte("other")) + `","version":"1"}`),
			"/a.md":                                md}, RuleDigestMismatch},
		{"uppercase digest", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"a","type":"skill-md","description":"d","url":"{base}/a.md","digest":"` + strings.ToUpper(digestOf(md)) + `","version":"1"}`),
			"/a.md":                                md}, RuleDigestFormat},
		{"relative url", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"a","type":"skill-md","description":"d","url":"/a.md","digest":"` + digestOf(md) + `","version":"1"}`),
			"/a.md":                                md}, RuleURL},
		{"unknown type", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"a","type":"tarball","description":"d","url":"{base}/a.zip","digest":"` + digestOf(goodZip) + `","version":"1"}`),
			"/a.zip":                               goodZip}, RuleType},
		{"zip with dotdot", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"a","type":"archive","description":"d","url":"{base}/a.zip","digest":"` + digestOf(zipOf(t, map[string]string{"SKILL.md": "x", "../evil": "x"})) + `","version":"1"}`),
			"/a.zip":                               zipOf(t, map[string]string{"SKILL.md": "x", "../evil": "x"})}, RuleZipPath},
		{"zip without SKILL.md", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"a","type":"archive","description":"d","url":"{base}/a.zip","digest":"` + digestOf(zipOf(t, map[string]string{"README.md": "x"})) + `","version":"1"}`),
			"/a.zip":                               zipOf(t, map[string]string{"README.md": "x"})}, RuleZipContent},
		{"bad name", map[string][]byte{
			"/.well-known/agent-skills/index.json": index(`{"name":"A_b","type":"skill-md","description":"d","url":"{base}/a.md","digest":"` + digestOf(md) + `","version":"1"}`),
			"/a.md":                                md}, RuleName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(serve(t, tt.routes))
			_, err := c.SyncSkills(t.Context())
			if !hasRule(err, tt.want) {
				t.Errorf("err = %v, want a %s violation", err, tt.want)
			}
		})
	}
}

func TestSyncAgentsRejects(t *testing.T) {
	agent := []byte("---\nname: a\ndescription: d\n---\nBody\n")
	bom := append([]byte("\ufeff"), agent...)
	tree := func(href, detailName, url string, body []byte) map[string][]byte {
		return map[string][]byte{
			"/subagents/v1/index.json":        []byte(`{"kind":"subagent-index","pages":[{"range":"all","href":"/subagents/v1/pages/all.json"}]}`),
			"/subagents/v1/pages/all.json":    []byte(`{"kind":"subagent-page","items":[{"name":"a","latestVersion":"1","versionRange":{"min":"1","max":"1","count":1},"href":"` + href + `"}]}`),
			"/subagents/v1/a/index.json":      []byte(`{"kind":"subagent","name":"a","latestVersion":"1","versions":[{"version":"1","digest":"` + digestOf(body) + `","href":"/subagents/v1/a/versions/1.json"}]}`),
			"/subagents/v1/a/versions/1.json": []byte(`{"kind":"subagent-version","name":"` + detailName + `","version":"1","type":"agent-md","description":"d","url":"` + url + `","digest":"` + digestOf(body) + `"}`),
			"/a.md":                           body,
		}
	}
	tests := []struct {
		name   string
		routes map[string][]byte
		want   Rule
	}{
		{"relative item href", tree("subagents/v1/a/index.json", "a", "{base}/a.md", agent), RuleHref},
		{"detail name differs", tree("/subagents/v1/a/index.json", "b", "{base}/a.md", agent), RuleName},
		{"bom", tree("/subagents/v1/a/index.json", "a", "{base}/a.md", bom), RuleText},
		{"index fails", map[string][]byte{"/subagents/v1/index.json": []byte("{")}, RuleJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(serve(t, tt.routes))
			err := c.SyncAgents(t.Context())
			if !hasRule(err, tt.want) {
				t.Errorf("err = %v, want a %s violation", err, tt.want)
			}
		})
	}
	// The same tree, valid, syncs; then an empty tree prunes it.
	ok := tree("/subagents/v1/a/index.json", "a", "{base}/a.md", agent)
	c := New(serve(t, ok))
	if err := c.SyncAgents(t.Context()); err != nil || len(c.Agents) != 1 {
		t.Fatalf("valid tree: %v, %d agents", err, len(c.Agents))
	}
	c.Base = serve(t, map[string][]byte{
		"/subagents/v1/index.json":     []byte(`{"kind":"subagent-index","pages":[{"range":"all","href":"/subagents/v1/pages/all.json"}]}`),
		"/subagents/v1/pages/all.json": []byte(`{"kind":"subagent-page","items":[]}`),
	})
	if err := c.SyncAgents(t.Context()); err != nil || len(c.Agents) != 0 {
		t.Errorf("empty tree: %v, %d agents left, want pruned", err, len(c.Agents))
	}
}

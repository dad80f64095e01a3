package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/feed"
)

// searchTree holds skills chosen so each ranking rule decides an order.
func searchTree(t *testing.T) *Server {
	t.Helper()
	root := t.TempDir()
	for _, s := range []struct{ name, desc, tags string }{
		{"deploy", "Ship a build.", ""},
		{"deploy-docs", "Publish documentation.", ""},
		{"deploy-preview", "Spin up a preview environment.", ""},
		{"k8s-rollout", "Roll out services; use when deploying to a cluster.", "kubernetes"},
		{"release-notes", "Draft release notes.", "writing"},
		{"check-updates", "A skill whose name is also a POST route.", ""},
	} {
		body := fmt.Sprintf("---\nname: %s\ndescription: %s\nmetadata:\n  tags: %q\n---\n", s.name, s.desc, s.tags)
		if err := os.MkdirAll(filepath.Join(root, s.name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, s.name, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	return NewServer(cat, Options{BaseURL: testBase}, slog.New(slog.DiscardHandler))
}

func searchNames(t *testing.T, s *Server, query string) ([]string, string) {
	t.Helper()
	r := do(t, s, "GET", "/api/v1/skills"+query)
	if r.code != 200 {
		t.Fatalf("%s: %d %s", query, r.code, r.body)
	}
	var hits []struct{ Name string }
	if err := json.Unmarshal(r.body, &hits); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range hits {
		names = append(names, h.Name)
	}
	return names, r.header.Get("X-Total-Count")
}

func TestSearch(t *testing.T) {
	s := searchTree(t)
	tests := []struct {
		query string
		want  string // comma-joined names
		total string
	}{
		{"?q=deploy", "deploy,deploy-docs,deploy-preview,k8s-rollout", "4"},
		{"?q=deploying", "deploy,deploy-docs,deploy-preview,k8s-rollout", "4"}, // stemming reaches "deploy" names and "deploying"
		{"?q=kube", "k8s-rollout", "1"},
		{"?q=writing", "release-notes", "1"},
		{"?q=zebra", "", "0"},
		{"", "check-updates,deploy,deploy-docs,deploy-preview,k8s-rollout,release-notes", "6"},
		{"?skip=2&take=2", "deploy-docs,deploy-preview", "6"},
		{"?skip=99", "", "6"},
		{"?take=0", "", "6"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			names, total := searchNames(t, s, tt.query)
			if got := strings.Join(names, ","); got != tt.want || total != tt.total {
				t.Errorf("got [%s] total %s, want [%s] total %s", got, total, tt.want, tt.total)
			}
		})
	}
	if names, total := searchNames(t, s, "?skip=9223372036854775807&take=100"); len(names) != 0 || total != "6" {
		t.Errorf("huge skip: %v total %s, want an empty page", names, total)
	}
	for _, bad := range []string{"?take=-1", "?skip=x", "?take=1.5", "?skip=-3", "?skip=99999999999999999999"} {
		if r := do(t, s, "GET", "/api/v1/skills"+bad); r.code != 400 || !bytes.Contains(r.body, []byte("whole number")) {
			t.Errorf("%s: %d %s, want 400 with a clear message", bad, r.code, r.body)
		}
	}
	if names, _ := searchNames(t, s, "?take=1000"); len(names) != 6 {
		t.Errorf("take above the maximum: %d results", len(names))
	}
	// A skill named like the POST route is still reachable by GET.
	if r := do(t, s, "GET", "/api/v1/skills/check-updates"); r.code != 200 || !bytes.Contains(r.body, []byte(`"name": "check-updates"`)) {
		t.Errorf("GET /api/v1/skills/check-updates: %d %s", r.code, r.body)
	}
}

func TestCheckUpdates(t *testing.T) {
	s, _ := newTestServer(t, bounded(Options{BaseURL: testBase}))
	post := func(body string) result {
		req := httptest.NewRequest("POST", "/api/v1/skills/check-updates", strings.NewReader(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return result{rec.Code, rec.Header(), rec.Body.Bytes()}
	}
	r := post(`[{"name":"k8s-deploy","version":"1.0.0"},{"name":"k8s-deploy","version":"1.2.0"},{"name":"k8s-deploy","version":"9.0.0"},{"name":"nope","version":"1.0.0"}]`)
	if r.code != 200 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	var got []feed.UpdateCheck
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		known, update bool
	}{{true, true}, {true, false}, {true, false}, {false, false}}
	for i, w := range want {
		if got[i].Known != w.known || got[i].HasUpdate != w.update {
			t.Errorf("item %d = %+v, want known %v hasUpdate %v", i, got[i], w.known, w.update)
		}
	}
	if got[0].LatestVersion != "1.2.0" || !strings.HasPrefix(got[0].LatestDigest, "sha256:") {
		t.Errorf("item 0 = %+v", got[0])
	}
	// A digest per item decides between equal versions, and is echoed.
	other := "sha256:" + strings.Repeat("0", 64)
	r = post(`[{"name":"k8s-deploy","version":"1.2.0","digest":"` + other + `"},{"name":"k8s-deploy","version":"1.2.0","digest":"` + got[0].LatestDigest + `"}]`)
	got = nil
	if err := json.Unmarshal(r.body, &got); err != nil || r.code != 200 || len(got) != 2 {
		t.Fatalf("with digests: %d %s", r.code, r.body)
	}
	if !got[0].HasUpdate || got[0].CurrentDigest != other || got[1].HasUpdate {
		t.Errorf("with digests: %+v", got)
	}
	if r := post(`[{"name":"k8s-deploy","version":"1.2.0","digest":"md5:abc"}]`); r.code != 400 || !strings.Contains(string(r.body), "item 0: digest") {
		t.Errorf("a malformed digest: %d %s", r.code, r.body)
	}
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"name":"a","version":"1"},`, 101), ",") + "]"
	for _, bad := range []string{many, "{", `{"name":"a"}`, `[{"name": 5}]`, "null", "", `[] trailing`, `[][]`, `[{"version":"1"}]`, `[{"name":"a"}]`} {
		if r := post(bad); r.code != 400 {
			t.Errorf("body %.40q: %d, want 400", bad, r.code)
		}
	}
	hundred := "[" + strings.TrimSuffix(strings.Repeat(`{"name":"a","version":"1"},`, 100), ",") + "]"
	if r := post(hundred); r.code != 200 {
		t.Errorf("100 items: %d", r.code)
	}
}

func TestReadAPI(t *testing.T) {
	s, _ := newTestServer(t, Options{BaseURL: testBase})
	tests := []struct {
		path string
		code int
		has  string
	}{
		{"/api/v1/skills/k8s-deploy", 200, `"latestVersion": "1.2.0"`},
		{"/api/v1/skills/k8s-deploy/latest", 200, `"version": "1.2.0"`},
		{"/api/v1/skills/k8s-deploy/2.0.0-rc.1", 200, `"latest": false`},
		{"/api/v1/skills/k8s-deploy/1.2.0/resources", 200, `"path": "scripts/deploy.sh"`},
		{"/api/v1/skills/code-review/latest/resources", 200, `"path": "references/checklist.md"`},
		{"/api/v1/skills/support-triage/1.2.0", 200, `"routesToSubagent"`},
		{"/api/v1/skills/nope", 404, ""},
		{"/api/v1/skills/k8s-deploy/9.9.9", 404, ""},
		{"/api/v1/subagents/technical-support-diagnostician", 200, `"latestVersion": "1.0.0"`},
		{"/api/v1/subagents/technical-support-diagnostician/latest", 200, `"type": "agent-md"`},
		{"/api/v1/subagents/technical-support-diagnostician/0.9.0", 200, `"latest": false`},
		{"/api/v1/subagents/nope", 404, ""},
		{"/api/v1/subagents?q=changelog", 200, `"name": "changelog-reviewer"`},
		{"/.well-known/skills/index.json", 200, `"files": [`},
		{"/.well-known/skills/k8s-deploy/scripts/deploy.sh", 200, "kubectl rollout status"},
		{"/.well-known/skills/k8s-deploy/SKILL.md", 200, "(1.2.0)"},
		{"/.well-known/skills/k8s-deploy/nope.md", 404, ""},
		{"/skill/code-review/.well-known/agent-skills/index.json", 200, `"name": "code-review"`},
		{"/skill/nope/.well-known/agent-skills/index.json", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := do(t, s, "GET", tt.path)
			if r.code != tt.code || !bytes.Contains(r.body, []byte(tt.has)) {
				t.Errorf("%d, want %d containing %s:\n%s", r.code, tt.code, tt.has, r.body)
			}
		})
	}
	// The scoped index holds exactly one skill, equal to its RFC entry.
	var scoped, full struct{ Skills []json.RawMessage }
	json.Unmarshal(do(t, s, "GET", "/skill/code-review/.well-known/agent-skills/index.json").body, &scoped)
	json.Unmarshal(do(t, s, "GET", "/.well-known/agent-skills/index.json").body, &full)
	if len(scoped.Skills) != 1 || !bytes.Equal(scoped.Skills[0], full.Skills[0]) {
		t.Errorf("scoped index %s is not the RFC entry of code-review", scoped.Skills)
	}
}

func TestAgentCard(t *testing.T) {
	s, snap := newTestServer(t, Options{BaseURL: testBase})
	card := do(t, s, "GET", "/.well-known/agent-card.json")
	old := do(t, s, "GET", "/.well-known/agent.json")
	if card.code != 200 || !bytes.Equal(card.body, old.body) {
		t.Fatalf("agent-card.json %d and agent.json differ", card.code)
	}
	var c struct {
		Name, Version, URL string
		Skills             []struct {
			ID, Name string
			Tags     []string
			Examples []string
		}
	}
	if err := json.Unmarshal(card.body, &c); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sk := range c.Skills {
		ids = append(ids, sk.ID)
		if sk.Tags == nil {
			t.Errorf("%s: tags is not an array", sk.ID)
		}
	}
	if len(c.Skills) != len(snap.Skills) || !slices.Contains(ids, "code_review") || c.URL != testBase+"/" {
		t.Errorf("card = %+v", c)
	}
	if cr := c.Skills[0]; cr.Name != "Code Review" || !slices.Equal(cr.Tags, []string{"review", "quality"}) || len(cr.Examples) != 2 {
		t.Errorf("code_review card skill = %+v", cr)
	}
}

// manySkills is a server over n skills, s000 to s(n-1), with opts.
func manySkills(t *testing.T, n int, opts Options) *Server {
	t.Helper()
	root := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("s%03d", i)
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("---\nname: %s\ndescription: Skill %d.\n---\n", name, i)
		if err := os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	opts.BaseURL = testBase
	return NewServer(cat, opts, slog.New(slog.DiscardHandler))
}

// TestSearchResultsCap: take of a search and limit of find are cut to
// max_search_results: 100 by default, what is configured, or nothing
// when it is off.
func TestSearchResultsCap(t *testing.T) {
	for _, tt := range []struct {
		name string
		max  int // Options.MaxSearchResults
		want int // results for take=1000 of 105 skills
	}{
		{"default", bounded(Options{}).MaxSearchResults, 100},
		{"configured", 3, 3},
		{"off", 0, 105},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := manySkills(t, 105, Options{MaxSearchResults: tt.max})
			names, total := searchNames(t, s, "?take=1000")
			if len(names) != tt.want || total != "105" {
				t.Errorf("take=1000: %d results, total %s; want %d of 105", len(names), total, tt.want)
			}
			r := do(t, s, "GET", "/api/search?q=skill&limit=1000")
			var found feed.FindResults
			if err := json.Unmarshal(r.body, &found); err != nil || r.code != 200 {
				t.Fatalf("find: %d %s", r.code, r.body)
			}
			if len(found.Skills) != tt.want {
				t.Errorf("find limit=1000: %d skills, want %d", len(found.Skills), tt.want)
			}
			if names, _ := searchNames(t, s, ""); len(names) != min(20, tt.want) {
				t.Errorf("without take: %d results, want %d", len(names), min(20, tt.want))
			}
		})
	}
}

// TestCheckUpdatesLimits: the items and the body of one check-updates
// request are bounded by max_update_checks and max_body_bytes (100 and
// 1 MiB by default), and the 400 names the key.
func TestCheckUpdatesLimits(t *testing.T) {
	items := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"name":"a","version":"1"},`, n), ",") + "]"
	}
	padded := "[" + strings.Repeat(" ", 1<<20) + "]" // over 1 MiB, no items
	tests := []struct {
		name string
		opts Options
		body string
		code int
		has  string
	}{
		{"default items", bounded(Options{}), items(100), 200, ""},
		{"default items over", bounded(Options{}), items(101), 400, "101 items; at most 100 per request (max_update_checks)"},
		{"default body over", bounded(Options{}), padded, 400, "the body is over 1048576 bytes (max_body_bytes)"},
		{"default body under", bounded(Options{}), padded[:1<<20-1] + "]", 200, ""},
		{"configured items", Options{MaxUpdateChecks: 2}, items(3), 400, "3 items; at most 2 per request (max_update_checks)"},
		{"configured items at the cap", Options{MaxUpdateChecks: 2}, items(2), 200, ""},
		{"no item limit", Options{}, items(500), 200, ""},
		{"no body limit", Options{}, padded, 200, ""},
		{"configured body", Options{MaxBodyBytes: 64}, items(3), 400, "the body is over 64 bytes (max_body_bytes)"},
		{"blanks after the array past the limit", Options{MaxBodyBytes: 64}, "[]" + strings.Repeat(" ", 100), 400, "the body is over 64 bytes (max_body_bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := manySkills(t, 1, tt.opts)
			req := httptest.NewRequest("POST", "/api/v1/skills/check-updates", strings.NewReader(tt.body))
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.has) {
				t.Errorf("%d %.300s, want %d mentioning %q", rec.Code, rec.Body, tt.code, tt.has)
			}
		})
	}
}

// TestSearchTextLimit: q of the read API's search, of find and of the
// HTML catalogue is bounded by max_query_bytes (1 KiB by default), with
// a 400 naming the key; 0 (off) is no bound.
func TestSearchTextLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		max  int    // Options.MaxQueryBytes
		ok   string // the longest q accepted
	}{
		{"default", bounded(Options{}).MaxQueryBytes, strings.Repeat("a", 1024)},
		{"configured", 8, "abcdefgh"},
		{"off", 0, strings.Repeat("deploy ", 8<<10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := manySkills(t, 3, Options{MaxQueryBytes: tt.max})
			for _, route := range []struct{ path, accept string }{
				{"/api/v1/skills?q=", ""},
				{"/api/search?q=", ""},
				{"/?q=", "text/html"},
			} {
				if r := do(t, s, "GET", route.path+url.QueryEscape(tt.ok), "Accept", route.accept); r.code != 200 {
					t.Errorf("%s with %d bytes: %d %.200s", route.path, len(tt.ok), r.code, r.body)
				}
				if tt.max == 0 {
					continue
				}
				long := tt.ok + "b"
				want := fmt.Sprintf("q is %d bytes; the limit is %d (max_query_bytes)", len(long), len(tt.ok))
				if r := do(t, s, "GET", route.path+url.QueryEscape(long), "Accept", route.accept); r.code != 400 || !strings.Contains(string(r.body), want) {
					t.Errorf("%s with %d bytes: %d %.300s, want 400 saying %q", route.path, len(long), r.code, r.body, want)
				}
			}
		})
	}
}

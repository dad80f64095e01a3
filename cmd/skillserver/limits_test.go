package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// limitTree is a skills root with one skill at each of the tree limits
// that were constants: folders 3 deep, front matter 4 deep, and three
// values holding an escape character.
func limitTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("deep-folder/SKILL.md", "---\nname: deep-folder\ndescription: d\n---\n")
	write("deep-folder/a/b/c/notes.md", "notes\n")
	write("deep-yaml/SKILL.md", "---\nname: deep-yaml\ndescription: d\nhooks: [[[[a]]]]\n---\n")
	write("bad-values/SKILL.md", "---\nname: bad-values\ndescription: d\nmetadata:\n  a: \"\\e\"\n  b: \"\\e\"\n  c: \"\\e\"\n---\n")
	return root
}

type jsonProblem struct{ Path, Rule, Severity, Message string }

func validateJSON(t *testing.T, args ...string) []jsonProblem {
	t.Helper()
	_, out, errOut := runCmd(t, nil, append([]string{"validate", "--format", "json"}, args...)...)
	var ps []jsonProblem
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatalf("validate %v: %v\nstdout %s\nstderr %s", args, err, out, errOut)
	}
	return ps
}

// TestTreeLimitKeys: max_folder_depth, max_frontmatter_depth and
// max_value_problems set low reach the scan and their problems name
// them; at their defaults (64, 16, 10) the same tree has none of them.
func TestTreeLimitKeys(t *testing.T) {
	root := limitTree(t)
	has := func(ps []jsonProblem, path, rule, part string) bool {
		for _, p := range ps {
			if strings.HasPrefix(p.Path, root+"/"+path) && p.Rule == rule && strings.Contains(p.Message, part) {
				return true
			}
		}
		return false
	}
	low := validateJSON(t, "--skills", root, "--max-folder-depth", "2", "--max-frontmatter-depth", "3", "--max-value-problems", "1")
	for _, want := range []struct{ path, rule, part string }{
		{"deep-folder/a/b/c", "limit", "folders nest more than 2 levels deep below the version folder (max_folder_depth)"},
		{"deep-yaml/SKILL.md", "limit", "nests deeper than 3 levels (max_frontmatter_depth)"},
		{"bad-values/SKILL.md", "frontmatter", "2 more values break the character or length rules (at most 1 are reported, max_value_problems)"},
	} {
		if !has(low, want.path, want.rule, want.part) {
			t.Errorf("low limits: no %s problem on %s saying %q; got %+v", want.rule, want.path, want.part, low)
		}
	}

	def := validateJSON(t, "--skills", root)
	characters := 0
	for _, p := range def {
		switch {
		case p.Rule == "limit" || p.Rule == "frontmatter":
			t.Errorf("default limits: %+v", p)
		case p.Rule == "character" && strings.HasPrefix(p.Path, root+"/bad-values/"):
			characters++
		}
	}
	if characters != 3 {
		t.Errorf("default limits: %d character problems on bad-values, want all 3: %+v", characters, def)
	}
}

// TestRequestLimitKeys: max_search_results, max_update_checks,
// max_body_bytes and max_query_bytes reach the running server, and its
// 400s name them; the default server answers the same requests as before.
func TestRequestLimitKeys(t *testing.T) {
	skills, agents := exampleTree(t)
	low := startServer(t, "--skills", skills, "--agents", agents, "--max-search-results", "1", "--max-update-checks", "1", "--max-body-bytes", "80", "--max-query-bytes", "8")
	def := startServer(t, "--skills", skills, "--agents", agents)
	count := func(ts *testServer, path string) int {
		t.Helper()
		resp, body := ts.Get(t, path)
		var hits []json.RawMessage
		if err := json.Unmarshal(body, &hits); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return len(hits)
	}
	if n := count(low, "/api/v1/skills?take=10"); n != 1 {
		t.Errorf("take=10 with max_search_results 1: %d results", n)
	}
	if n := count(def, "/api/v1/skills?take=10"); n < 2 {
		t.Errorf("take=10 at the default max_search_results: %d results", n)
	}
	for _, q := range []string{"/api/v1/skills?q=code-review", "/api/search?q=code-review"} {
		if resp, body := low.Get(t, q); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "q is 11 bytes; the limit is 8 (max_query_bytes)") {
			t.Errorf("GET %s with max_query_bytes 8: %d %s", q, resp.StatusCode, body)
		}
		if resp, body := def.Get(t, q); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s at the default max_query_bytes: %d %s", q, resp.StatusCode, body)
		}
	}
	post := func(ts *testServer, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(ts.URL+"/api/v1/skills/check-updates", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	two := `[{"name":"code-review","version":"1.0.0"},{"name":"x","version":"1"}]` // 68 bytes
	if code, body := post(low, two); code != http.StatusBadRequest || !strings.Contains(body, "(max_update_checks)") {
		t.Errorf("two items with max_update_checks 1: %d %s", code, body)
	}
	if code, body := post(low, `[{"name":"code-review","version":"1.0.0","digest":"`+strings.Repeat("0", 40)+`"}]`); code != http.StatusBadRequest || !strings.Contains(body, "over 80 bytes (max_body_bytes)") {
		t.Errorf("a body over 80 bytes with max_body_bytes 80: %d %s", code, body)
	}
	if code, body := post(def, two); code != http.StatusOK {
		t.Errorf("two items at the defaults: %d %s", code, body)
	}
}

// TestMetricsConnectionCap: metrics_max_connections 1 lets a second
// scraper evict the first, idle, connection; at the default (16) the
// first one stays open and answers its next request.
func TestMetricsConnectionCap(t *testing.T) {
	skills, agents := exampleTree(t)
	for _, tt := range []struct {
		name    string
		args    []string
		evicted bool
	}{
		{"configured", []string{"--metrics-max-connections", "1"}, true},
		{"default", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := fixture.FreePort(t)
			startServer(t, append([]string{"--skills", skills, "--agents", agents, "--metrics-listen", addr}, tt.args...)...)
			scrape := func(c net.Conn, br *bufio.Reader) error {
				if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: m\r\n\r\n"); err != nil {
					return err
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					return err
				}
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("status %d", resp.StatusCode)
				}
				return nil
			}
			dial := func() (net.Conn, *bufio.Reader) {
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a bound on a hang, not a timed assertion
				return c, bufio.NewReader(c)
			}
			first, firstBR := dial()
			if err := scrape(first, firstBR); err != nil {
				t.Fatalf("first scrape: %v", err)
			}
			// The second connection is answered only once it has a slot:
			// with a cap of 1, once the idle first one is evicted.
			second, secondBR := dial()
			if err := scrape(second, secondBR); err != nil {
				t.Fatalf("second scrape: %v", err)
			}
			err := scrape(first, firstBR)
			if tt.evicted && err == nil {
				t.Error("with metrics_max_connections 1 the first, idle connection was still served after a second one was")
			}
			if !tt.evicted && err != nil {
				t.Errorf("at the default cap the first connection was closed: %v", err)
			}
		})
	}
}

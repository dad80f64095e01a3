package check

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/httpapi"
	"github.com/skillserver/skillserver/internal/mcpapi"
)

// mcpServer is this server on the example tree, each MCP answer passed
// through rewrite (method, result) first, the way a broken server would
// answer.
func mcpServer(t *testing.T, rewrite func(method string, result map[string]any)) string {
	t.Helper()
	skills, agents := fixture.ExampleTree(t, "../..")
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := httpapi.NewServer(cat, httpapi.Options{MCP: mcpapi.Options{Name: "skillserver", Version: "1.0.0", PageSize: 2, TTL: time.Second}}, slog.New(slog.DiscardHandler))
	s.SetReady(true)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" || rewrite == nil {
			s.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct{ Method string }
		_ = json.Unmarshal(body, &req)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		var msg map[string]any
		if json.Unmarshal(rec.Body.Bytes(), &msg) == nil {
			if res, ok := msg["result"].(map[string]any); ok {
				rewrite(req.Method, res)
			}
		}
		out, _ := json.Marshal(msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func mcpFindings(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r, err := Run(ctx, Options{URL: url, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, string(f.Rule)+" "+f.Item+": "+f.Message)
	}
	return out
}

// TestWalkMCP: this server's MCP endpoint passes; each way a broken one
// fails a host is an error of the rule that names it.
func TestWalkMCP(t *testing.T) {
	if got := mcpFindings(t, mcpServer(t, nil)); len(got) != 0 {
		t.Fatalf("this server: %q", got)
	}
	resources := func(res map[string]any) []any {
		return res["skills"].([]any)[0].(map[string]any)["resources"].([]any)
	}
	for _, tc := range []struct {
		name    string
		rewrite func(method string, res map[string]any)
		want    string // rule and item prefix of a finding
	}{
		{"wrong digest", func(m string, res map[string]any) {
			if m == "skills/list" && res["nextCursor"] == nil {
				resources(res)[0].(map[string]any)["digest"] = "sha256:" + strings.Repeat("0", 64)
			}
		}, "digest-mismatch MCP skill"},
		{"wrong size", func(m string, res map[string]any) {
			if m == "skills/list" {
				resources(res)[0].(map[string]any)["size"] = 1
			}
		}, "digest-mismatch MCP skill"},
		{"no ttlMs", func(m string, res map[string]any) {
			if m == "resources/read" {
				delete(res, "ttlMs")
			}
		}, "mcp MCP skill"},
		{"no resultType", func(m string, res map[string]any) {
			if m == "skills/list" {
				delete(res, "resultType")
			}
		}, "mcp skills/list page 1"},
		{"empty cursor", func(m string, res map[string]any) {
			if m == "skills/list" && res["nextCursor"] == nil {
				res["nextCursor"] = ""
			}
		}, "mcp MCP endpoint"},
		{"no extension", func(m string, res map[string]any) {
			if m == "server/discover" {
				delete(res["capabilities"].(map[string]any), "extensions")
			}
		}, "mcp MCP endpoint"},
		{"a skill left out", func(m string, res map[string]any) {
			if m == "skills/list" && res["nextCursor"] == nil {
				res["skills"] = res["skills"].([]any)[1:]
			}
		}, "consistency skill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mcpFindings(t, mcpServer(t, tc.rewrite))
			if !slices.ContainsFunc(got, func(f string) bool { return strings.HasPrefix(f, tc.want) }) {
				t.Errorf("findings %q: want one starting %q", got, tc.want)
			}
		})
	}
}

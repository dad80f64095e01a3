package httpapi

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/transport"
)

// TestMCPLimits: a body over mcp_max_request_bytes and a batch over
// mcp_max_batch get a JSON-RPC error and a 4xx, a file over
// mcp_max_file_bytes a JSON-RPC error naming the HTTP route; GET and
// DELETE are 405; every message is counted by method and result.
func TestMCPLimits(t *testing.T) {
	opts := mcpOptions(0)
	opts.MaxRequestBytes, opts.MaxBatch, opts.MaxFileBytes = 512, 2, 100
	obs := &mcpCounts{}
	opts.Observer = obs
	s, _ := newTestServer(t, Options{MCP: opts})
	send := func(body string) (int, map[string]any) {
		t.Helper()
		code, reply := mcpPost(s, body)
		var msg map[string]any
		_ = json.Unmarshal(reply, &msg)
		return code, msg
	}
	code, msg := send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 600) + `"}}`)
	if code != http.StatusRequestEntityTooLarge || msg["error"] == nil {
		t.Errorf("oversized body: %d %v", code, msg)
	}
	code, msg = send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	if code != http.StatusBadRequest || msg["error"] == nil || !strings.Contains(msg["error"].(map[string]any)["message"].(string), "mcp_max_batch") {
		t.Errorf("oversized batch: %d %v", code, msg)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := do(t, s, m, "/mcp"); r.code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, r.code)
		}
	}
	addr := "http://" + serveReal(t, s, transport.ConnLimits{})
	cs := mcpConnect(t, addr+"/mcp", mcpRevisions[0], nil)
	_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://k8s-deploy/scripts/deploy.sh"})
	if err == nil || !strings.Contains(err.Error(), "mcp_max_file_bytes") {
		t.Errorf("a file over mcp_max_file_bytes: %v", err)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://k8s-deploy/assets/logo.png"}); err != nil {
		t.Errorf("a file under it: %v", err)
	}
	mcpListAll(t, cs)
	if code := mcpErrorCode(t, cs, "skills/get", "skill://nope/SKILL.md"); code == 0 {
		t.Error("unknown skill got")
	}
	_, _ = send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	for _, want := range []string{"skills/list ok", "resources/read ok", "resources/read error", "skills/get error", "server/discover ok", "other unserved"} {
		if obs.get(want) == 0 {
			t.Errorf("no %q counted; counts %v", want, obs.snapshot())
		}
	}
}

type mcpCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *mcpCounts) ObserveMCP(method, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[method+" "+result]++
}

func (c *mcpCounts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func (c *mcpCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

var mcpMethodRE = regexp.MustCompile(`"method":"([!-~]*?)"`)

// FuzzMCP: any body, any method, any params, to either revision: the
// endpoint answers, never with a 5xx, and never panics.
func FuzzMCP(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{"cursor":"YWZ0ZXI6aw"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://_versions/1.0.0/k8s-deploy/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://k8s-deploy/%2e%2e/x"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/directory/read","params":{"uri":"skill://k8s-deploy/","cursor":"x"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"resources/list","params":null}`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":{},"method":7}`, `[]`, `null`, `{`, ``,
	} {
		f.Add(seed, "2026-07-28")
		f.Add(seed, "")
	}
	s, _ := newTestServer(f, Options{MCP: mcpOptions(2)})
	f.Fuzz(func(t *testing.T, body, revision string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if revision != "" && !strings.ContainsAny(revision, "\r\n\x00") {
			req.Header.Set("Mcp-Protocol-Version", revision)
			if m := mcpMethodRE.FindStringSubmatch(body); m != nil {
				req.Header.Set("Mcp-Method", m[1]) // as a modern client names it
			}
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%q (revision %q): %d %s", body, revision, rec.Code, rec.Body)
		}
	})
}

// TestMCPTextOrBlob: a text file is text; an empty file and a binary one
// are base64 blobs (an empty text has no "text" field to carry it); each
// gives back exactly its bytes. (A text file that is not UTF-8 is no
// skill's: the scan refuses it.)
func TestMCPTextOrBlob(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"empty.txt": "", "data.bin": "\x00\xff\x01", "notes.md": "héllo\n"}
	fixture.WriteFile(t, filepath.Join(root, "mixed", "SKILL.md"), fixture.SkillMD("mixed"), 0o644)
	for name, body := range files {
		fixture.WriteFile(t, filepath.Join(root, "mixed", "docs", name), body, 0o644)
	}
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{MCP: mcpOptions(0)}, slog.New(slog.DiscardHandler))
	s.SetReady(true)
	cs := mcpConnect(t, "http://"+serveReal(t, s, transport.ConnLimits{})+"/mcp", mcpRevisions[0], nil)
	for name, body := range files {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://mixed/docs/" + name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := res.Contents[0]
		wantText := name == "notes.md"
		if got := c.Blob == nil; got != wantText {
			t.Errorf("%s: text %v (blob %q, text %q), want text %v", name, got, c.Blob, c.Text, wantText)
		}
		if got := c.Text + string(c.Blob); got != body {
			t.Errorf("%s: bytes %q, want %q", name, got, body)
		}
	}
}

package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/benchtree"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/transport"
)

// BenchmarkMCPSkillsList is what an MCP host's listing costs over a real
// socket: every page of skills/list at the default page size, for 1,000
// and 10,000 generated skills, against the floor a host of the RFC feed
// pays for the same catalogue, one GET of its index; both decoded as a
// host must. It reports the bytes
// of a whole listing (bytes/op) and its pages.
func BenchmarkMCPSkillsList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		tree, _, err := benchtree.OpenOrGenerateSpec(filepath.Join(b.TempDir(), "tree"),
			benchtree.Spec{Skills: n, Agents: 1, MinResource: 16, MaxResource: 64})
		if err != nil {
			b.Fatal(err)
		}
		cat := catalog.New(catalog.Source{SkillsDir: filepath.Join(tree.Dir, "skills"), AgentsDir: filepath.Join(tree.Dir, "agents")}, slog.New(slog.DiscardHandler))
		if _, err := cat.Reload(b.Context()); err != nil {
			b.Fatal(err)
		}
		s := NewServer(cat, Options{MCP: mcpOptions(config.Default[int]("mcp_page_size"))}, slog.New(slog.DiscardHandler))
		s.SetReady(true)
		addr := "http://" + serveReal(b, s, transport.ConnLimits{})
		client := &http.Client{}
		b.Run("skills="+strconv.Itoa(n)+"/mcp-skills-list", func(b *testing.B) {
			var bytes, pages int
			for b.Loop() {
				bytes, pages = 0, 0
				cursor := ""
				for {
					body, n := mcpListPage(b, client, addr, cursor)
					bytes += n
					pages++
					if body.Result.NextCursor == "" {
						break
					}
					cursor = body.Result.NextCursor
				}
			}
			b.ReportMetric(float64(bytes), "bytes/op")
			b.ReportMetric(float64(pages), "pages/op")
		})
		b.Run("skills="+strconv.Itoa(n)+"/rfc-index", func(b *testing.B) {
			var size int
			for b.Loop() {
				resp, err := client.Get(addr + "/.well-known/agent-skills/index.json")
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				size = len(body)
				var idx struct{ Skills []json.RawMessage } // decoded as a host must, as the pages are
				if err := json.Unmarshal(body, &idx); err != nil || len(idx.Skills) != n {
					b.Fatalf("index: %v, %d skills", err, len(idx.Skills))
				}
			}
			b.ReportMetric(float64(size), "bytes/op")
		})
	}
}

type mcpPage struct {
	Result struct {
		Skills     []json.RawMessage `json:"skills"`
		NextCursor string            `json:"nextCursor"`
	} `json:"result"`
}

// mcpListPage posts one skills/list as a modern host does and decodes
// the page, as a host must.
func mcpListPage(b *testing.B, c *http.Client, addr, cursor string) (mcpPage, int) {
	params := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if cursor != "" {
		params += `,"cursor":` + strconv.Quote(cursor)
	}
	req, _ := http.NewRequest(http.MethodPost, addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{`+params+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "skills/list")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p mcpPage
	if err := json.Unmarshal(raw, &p); err != nil || len(p.Result.Skills) == 0 {
		b.Fatalf("skills/list: %v %.300s", err, raw)
	}
	return p, len(raw)
}

package httpapi

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/mcpapi"
	"github.com/skillserver/skillserver/internal/transport"
)

// The SDK client's side of the extension's methods.
type (
	mcpListParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	mcpListResult struct {
		mcp.ResultBase
		Skills     []mcpSkillEntry `json:"skills"`
		NextCursor string          `json:"nextCursor,omitempty"`
		TTLMs      *int            `json:"ttlMs"`
		CacheScope string          `json:"cacheScope"`
	}
	mcpGetParams struct {
		mcp.ParamsBase
		URI string `json:"uri"`
	}
	mcpGetResult struct {
		mcp.ResultBase
		Skill      mcpSkillEntry `json:"skill"`
		CacheScope string        `json:"cacheScope"`
	}
	mcpDirParams struct {
		mcp.ParamsBase
		URI    string `json:"uri"`
		Cursor string `json:"cursor,omitempty"`
	}
	mcpDirResult struct {
		mcp.ResultBase
		Resources  []*mcp.Resource `json:"resources"`
		NextCursor string          `json:"nextCursor,omitempty"`
	}
	mcpSkillEntry struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
			Size   int64  `json:"size"`
		} `json:"resources"`
	}
)

// Protocol revisions the endpoint serves: the modern one, without a
// session, and the last of the initialize handshake.
var mcpRevisions = []string{"2026-07-28", "2025-11-25"}

// mcpOptions are the endpoint's options as configured by default, with
// pages of pageSize.
func mcpOptions(pageSize int) mcpapi.Options {
	return mcpapi.Options{Name: "skillserver", Version: "1.2.3-test", PageSize: pageSize,
		MaxRequestBytes: config.Default[int64]("mcp_max_request_bytes"), MaxBatch: config.Default[int]("mcp_max_batch"),
		MaxFileBytes: config.Default[int64]("mcp_max_file_bytes"), TTL: 30 * time.Second}
}

// mcpConnect connects the SDK's client to the endpoint at url over
// revision, sending header with every request.
func mcpConnect(t *testing.T, url, revision string, header http.Header) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*mcpListParams, *mcpListResult](c, "skills/list"),
		mcp.AddSendingCustomMethod[*mcpGetParams, *mcpGetResult](c, "skills/get"),
		mcp.AddSendingCustomMethod[*mcpDirParams, *mcpDirResult](c, "resources/directory/read"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	hc := &http.Client{Transport: headerTransport{header}, Timeout: 10 * time.Second}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("connect %s over %s: %v", url, revision, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpListAll pages through skills/list.
func mcpListAll(t *testing.T, cs *mcp.ClientSession) []mcpSkillEntry {
	t.Helper()
	var all []mcpSkillEntry
	cursor := ""
	for page := 0; ; page++ {
		res, err := mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, "skills/list", &mcpListParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list page %d: %v", page, err)
		}
		if res.TTLMs == nil || *res.TTLMs != 30000 || res.CacheScope == "" {
			t.Errorf("page %d: ttlMs %v cacheScope %q", page, res.TTLMs, res.CacheScope)
		}
		all = append(all, res.Skills...)
		if res.NextCursor == "" {
			return all
		}
		if page > 100 {
			t.Fatal("skills/list never ends")
		}
		cursor = res.NextCursor
	}
}

// mcpRead returns the bytes of the file at uri, as resources/read gives
// them (text or base64 blob), checking its one content block.
func mcpRead(t *testing.T, cs *mcp.ClientSession, uri string) ([]byte, string) {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s: contents %+v", uri, res.Contents)
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, c.MIMEType
	}
	return []byte(c.Text), c.MIMEType
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestMCPMatchesTheRFCFeed: over a real socket, in each revision, the SDK's
// client lists every page, gets every skill and reads every file; each
// file's bytes have the digest and size the entry gives, equal the bytes
// the RFC feed's artifact holds for that path, and the read API lists
// the same digest and size for it.
func TestMCPMatchesTheRFCFeed(t *testing.T) {
	opts := Options{MCP: mcpOptions(2)}
	s, _ := newTestServer(t, opts)
	addr := "http://" + serveReal(t, s, transport.ConnLimits{})

	// What the RFC feed says: every file of each skill's latest version,
	// by path, from its artifact.
	var rfc struct {
		Skills []struct{ Name, Type, URL, Digest string }
	}
	getJSON(t, addr+"/.well-known/agent-skills/index.json", &rfc)
	feedFiles := map[string]map[string][]byte{}
	for _, sk := range rfc.Skills {
		body := getBody(t, sk.URL)
		if sha256Hex(body) != sk.Digest {
			t.Fatalf("%s: the RFC artifact's digest", sk.Name)
		}
		files := map[string][]byte{}
		if sk.Type == "archive" {
			zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				rc, _ := f.Open()
				b, _ := io.ReadAll(rc)
				rc.Close()
				files[f.Name] = b
			}
		} else {
			files["SKILL.md"] = body
		}
		feedFiles[sk.Name] = files
	}

	for _, rev := range mcpRevisions {
		t.Run(rev, func(t *testing.T) {
			cs := mcpConnect(t, addr+"/mcp", rev, nil)
			caps := cs.InitializeResult().Capabilities
			if ext, _ := caps.Extensions["io.modelcontextprotocol/skills"].(map[string]any); ext["directoryRead"] != true || caps.Resources == nil {
				t.Errorf("capabilities %+v", caps)
			}
			entries := mcpListAll(t, cs)
			if len(entries) != len(rfc.Skills) {
				t.Fatalf("%d skills over MCP, %d in the RFC feed", len(entries), len(rfc.Skills))
			}
			files := 0
			for i, e := range entries {
				name := rfc.Skills[i].Name
				if e.URI != "skill://"+name+"/SKILL.md" || e.Frontmatter["name"] != name {
					t.Errorf("entry %d: %s %v, the RFC feed's is %s", i, e.URI, e.Frontmatter["name"], name)
				}
				got, err := mcp.CallCustomMethod[*mcpGetParams, *mcpGetResult](t.Context(), cs, "skills/get", &mcpGetParams{URI: e.URI})
				if err != nil || !jsonEqual(got.Skill, e) {
					t.Errorf("skills/get %s: %+v %v; listed %+v", e.URI, got, err, e)
				}
				var api []struct {
					Path, Digest string
					Size         int64
				}
				getJSON(t, addr+"/api/v1/skills/"+name+"/latest/resources", &api)
				if len(api)+1 != len(e.Resources) {
					t.Errorf("%s: %d files over MCP, the read API lists %d resources and SKILL.md", name, len(e.Resources), len(api))
				}
				for j, r := range e.Resources {
					body, mime := mcpRead(t, cs, r.URI)
					path := strings.TrimPrefix(r.URI, "skill://"+name+"/")
					if sha256Hex(body) != r.Digest || int64(len(body)) != r.Size {
						t.Errorf("%s: bytes have %s, %d; the entry says %s, %d", r.URI, sha256Hex(body), len(body), r.Digest, r.Size)
					}
					if want, ok := feedFiles[name][path]; !ok || !bytes.Equal(want, body) {
						t.Errorf("%s: bytes differ from the RFC artifact's %s (there: %v)", r.URI, path, ok)
					}
					if j > 0 && (api[j-1].Path != path || api[j-1].Digest != r.Digest || api[j-1].Size != r.Size) {
						t.Errorf("%s: the read API lists %+v", r.URI, api[j-1])
					}
					if path == "SKILL.md" && mime != "text/markdown" {
						t.Errorf("%s: mimeType %q", r.URI, mime)
					}
					files++
				}
			}
			if files < 8 {
				t.Errorf("read %d files; the example tree has 8 in its latest versions", files)
			}
		})
	}
}

// TestMCPVersionsAndFolders: skills/get names every version in _meta, a
// version by number is got and read at its own URIs, and folders list
// their children.
func TestMCPVersionsAndFolders(t *testing.T) {
	s, _ := newTestServer(t, Options{MCP: mcpOptions(0)})
	addr := "http://" + serveReal(t, s, transport.ConnLimits{})
	cs := mcpConnect(t, addr+"/mcp", mcpRevisions[0], nil)
	got, err := mcp.CallCustomMethod[*mcpGetParams, *mcpGetResult](t.Context(), cs, "skills/get", &mcpGetParams{URI: "skill://k8s-deploy/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	versions, _ := got.Meta["io.github.skillserver/versions"].([]any)
	if len(versions) != 3 {
		t.Fatalf("_meta %v: want the 3 versions of k8s-deploy", got.Meta)
	}
	old := versions[2].(map[string]any)
	if old["version"] != "1.0.0" || old["uri"] != "skill://_versions/1.0.0/k8s-deploy/SKILL.md" || old["latest"] != false {
		t.Errorf("oldest version %v", old)
	}
	v1, err := mcp.CallCustomMethod[*mcpGetParams, *mcpGetResult](t.Context(), cs, "skills/get", &mcpGetParams{URI: old["uri"].(string)})
	if err != nil || v1.Skill.URI != old["uri"] || len(v1.Skill.Resources) != 1 || v1.Skill.Frontmatter["name"] != "k8s-deploy" {
		t.Fatalf("skills/get 1.0.0: %+v %v", v1, err)
	}
	body, _ := mcpRead(t, cs, v1.Skill.URI)
	if !bytes.Contains(body, []byte("1.0.0")) || sha256Hex(body) != v1.Skill.Resources[0].Digest {
		t.Errorf("1.0.0's SKILL.md: %q", body)
	}
	dir, err := mcp.CallCustomMethod[*mcpDirParams, *mcpDirResult](t.Context(), cs, "resources/directory/read", &mcpDirParams{URI: "skill://k8s-deploy"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range dir.Resources {
		names = append(names, r.Name+" "+r.MIMEType)
	}
	if !slices.Equal(names, []string{"SKILL.md text/markdown", "assets inode/directory", "scripts inode/directory"}) {
		t.Errorf("folder lists %v", names)
	}
	for _, c := range []struct{ method, uri string }{
		{"skills/get", "skill://nope/SKILL.md"}, {"skills/get", "skill://k8s-deploy/scripts/deploy.sh"},
		{"resources/directory/read", "skill://k8s-deploy/SKILL.md"}, {"resources/read", "skill://k8s-deploy/nope.md"},
	} {
		if code := mcpErrorCode(t, cs, c.method, c.uri); code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s %s: error code %d, want %d", c.method, c.uri, code, jsonrpc.CodeInvalidParams)
		}
	}
}

// mcpErrorCode calls method with uri and returns the JSON-RPC error code
// it fails with (0 when it succeeds).
func mcpErrorCode(t *testing.T, cs *mcp.ClientSession, method, uri string) int64 {
	t.Helper()
	var err error
	switch method {
	case "skills/get":
		_, err = mcp.CallCustomMethod[*mcpGetParams, *mcpGetResult](t.Context(), cs, method, &mcpGetParams{URI: uri})
	case "resources/directory/read":
		_, err = mcp.CallCustomMethod[*mcpDirParams, *mcpDirResult](t.Context(), cs, method, &mcpDirParams{URI: uri})
	case "skills/list":
		_, err = mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, method, &mcpListParams{Cursor: uri})
	default:
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	}
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		if err != nil {
			t.Fatalf("%s %s: %v is no JSON-RPC error", method, uri, err)
		}
		return 0
	}
	return werr.Code
}

// TestMCPCursorAcrossReload: a cursor taken before a reload continues
// after the last skill it saw, in the new snapshot: no skill that both
// hold is listed twice or skipped; a cursor that was never given is a
// clear error.
func TestMCPCursorAcrossReload(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		fixture.WriteFile(t, filepath.Join(root, n, "SKILL.md"), fixture.SkillMD(n), 0o644)
	}
	cat := catalog.New(catalog.Source{SkillsDir: root}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cat, Options{MCP: mcpOptions(2)}, slog.New(slog.DiscardHandler))
	s.SetReady(true)
	addr := "http://" + serveReal(t, s, transport.ConnLimits{})
	for _, rev := range mcpRevisions {
		t.Run(rev, func(t *testing.T) {
			cs := mcpConnect(t, addr+"/mcp", rev, nil)
			first, err := mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, "skills/list", &mcpListParams{})
			if err != nil || len(first.Skills) != 2 || first.NextCursor == "" {
				t.Fatalf("first page %+v %v", first, err)
			}
			// Between the pages: a skill before the cursor comes, one
			// after it goes.
			fixture.WriteFile(t, filepath.Join(root, "able", "SKILL.md"), fixture.SkillMD("able"), 0o644)
			if err := os.RemoveAll(filepath.Join(root, "delta")); err != nil {
				t.Fatal(err)
			}
			if _, err := cat.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for cursor := first.NextCursor; cursor != ""; {
				page, err := mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, "skills/list", &mcpListParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page.Skills {
					rest = append(rest, e.Frontmatter["name"].(string))
				}
				cursor = page.NextCursor
			}
			if !slices.Equal(rest, []string{"charlie", "echo"}) {
				t.Errorf("after the reload the pages hold %v, want charlie and echo", rest)
			}
			for _, bad := range []string{"nonsense", "YWZ0ZXI6", "!!"} {
				if code := mcpErrorCode(t, cs, "skills/list", bad); code != jsonrpc.CodeInvalidParams {
					t.Errorf("cursor %q: code %d", bad, code)
				}
			}
			// Put the tree back for the next revision.
			fixture.WriteFile(t, filepath.Join(root, "delta", "SKILL.md"), fixture.SkillMD("delta"), 0o644)
			if err := os.RemoveAll(filepath.Join(root, "able")); err != nil {
				t.Fatal(err)
			}
			if _, err := cat.Reload(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMCPScopedToken: a token scoped to some skills lists only those, in
// either form of the token, and a URI of any other skill, guessed, is as
// unknown as one that does not exist, for every method; without a token
// the endpoint is 401.
func TestMCPScopedToken(t *testing.T) {
	const all, team = "read-all-0123456789abcdef", "read-team-0123456789abcde"
	set, err := access.Parse(strings.NewReader("all "+all+" *\nteam "+team+" code-*\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(t, Options{ReadTokens: tokenSet{set}, MCP: mcpOptions(0)})
	addr := "http://" + serveReal(t, s, transport.ConnLimits{})

	resp, err := http.Post(addr+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	guessed := []struct{ method, uri string }{
		{"skills/get", "skill://k8s-deploy/SKILL.md"}, {"skills/get", "skill://_versions/1.0.0/k8s-deploy/SKILL.md"},
		{"resources/read", "skill://k8s-deploy/SKILL.md"}, {"resources/read", "skill://k8s-deploy/scripts/deploy.sh"},
		{"resources/read", "skill://_versions/1.2.0/k8s-deploy/scripts/deploy.sh"},
		{"resources/directory/read", "skill://k8s-deploy"}, {"resources/directory/read", "skill://k8s-deploy/scripts"},
	}
	for _, c := range []struct {
		name, url string
		header    http.Header
		want      []string
		scope     string
	}{
		{"path token", addr + "/t/" + team + "/mcp", nil, []string{"code-review"}, "private"},
		{"bearer", addr + "/mcp", http.Header{"Authorization": {"Bearer " + team}}, []string{"code-review"}, "private"},
		{"whole tree", addr + "/t/" + all + "/mcp", nil, []string{"code-review", "k8s-deploy", "release-notes", "support-triage", "windows-notes"}, "private"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := mcpConnect(t, c.url, mcpRevisions[0], c.header)
			var names []string
			for _, e := range mcpListAll(t, cs) {
				names = append(names, e.Frontmatter["name"].(string))
			}
			if !slices.Equal(names, c.want) {
				t.Errorf("lists %v, want %v", names, c.want)
			}
			res, err := mcp.CallCustomMethod[*mcpListParams, *mcpListResult](t.Context(), cs, "skills/list", &mcpListParams{})
			if err != nil || res.CacheScope != c.scope {
				t.Errorf("cacheScope %q %v, want %q", res.CacheScope, err, c.scope)
			}
			if len(c.want) > 1 {
				return
			}
			for _, g := range guessed {
				if code := mcpErrorCode(t, cs, g.method, g.uri); code != jsonrpc.CodeInvalidParams {
					t.Errorf("%s of %s outside the scope: code %d, want %d as for no such skill", g.method, g.uri, code, jsonrpc.CodeInvalidParams)
				}
			}
		})
	}
}

// mcpPost posts body to the endpoint of s as an MCP client does, in
// process, and returns the status and body of the answer.
func mcpPost(s http.Handler, body string) (int, []byte) {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal(getBody(t, url), v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

// jsonEqual reports whether a and b encode alike.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

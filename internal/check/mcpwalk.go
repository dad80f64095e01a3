package check

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// The MCP walk: what an MCP host does with the skills extension
// (io.modelcontextprotocol/skills) at the feed's MCP endpoint, over the
// modern revision without a session, as the MCP Inspector's verify pass
// and the conformance suite do: discover, list every page, get every
// skill, read every file. It is a JSON-RPC client of its own, not an MCP
// SDK's, and holds the endpoint to the rules written in wire.go.

// mcpRPCError is a JSON-RPC error.
type mcpRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// mcpEntry is one skill of skills/list or skills/get.
type mcpEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   json.RawMessage
}

type mcpFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   *int64 `json:"size"`
}

// mcpCache is what the revision requires of every cacheable result.
type mcpCache struct {
	ResultType string `json:"resultType"`
	TTLMs      *int64 `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

func (m mcpCache) check() error {
	switch {
	case m.ResultType != "complete":
		return bad(RuleMCP, "resultType is %q, want \"complete\": hosts on revision %s refuse a result without it", m.ResultType, mcpRevision)
	case m.TTLMs == nil || *m.TTLMs < 0:
		return bad(RuleMCP, "ttlMs is missing or negative: revision %s requires it (the MCP Inspector rejects the result)", mcpRevision)
	case m.CacheScope != "public" && m.CacheScope != "private":
		return bad(RuleMCP, "cacheScope is %q, want public or private", m.CacheScope)
	}
	return nil
}

// mcpCall sends one request to the endpoint and decodes its result into
// v. A JSON-RPC error is returned as *mcpRPCError.
func (c *Client) mcpCall(ctx context.Context, method string, params map[string]any, v any) error {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcpRevision,
		"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "skillserver-check", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{mcpExtension: map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	u := c.entry(pathMCP)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return &Violation{Rule: RuleFetch, URL: u, Msg: err.Error(), cause: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcpRevision)
	req.Header.Set("Mcp-Method", method)
	if uri, ok := params["uri"].(string); ok && method == "resources/read" {
		req.Header.Set("Mcp-Name", uri)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	c.count(&c.Requests)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return &Violation{Rule: RuleFetch, URL: u, Msg: method + ": " + unwrapURLError(err), cause: err}
	}
	defer resp.Body.Close()
	raw, err := readBounded(resp.Body, c.MaxBytes)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return &Violation{Rule: RuleSize, URL: u, Msg: fmt.Sprintf("%s: the answer is larger than %d bytes", method, c.MaxBytes)}
		}
		return &Violation{Rule: RuleFetch, URL: u, Msg: method + ": " + err.Error(), cause: err}
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
		raw = sseData(raw)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *mcpRPCError    `json:"error"`
	}
	err = json.Unmarshal(raw, &msg)
	switch {
	case err == nil && msg.Error != nil:
		return msg.Error
	case (err != nil || msg.Result == nil) && resp.StatusCode != http.StatusOK:
		return &Violation{Rule: RuleStatus, URL: u, Status: resp.StatusCode, Msg: fmt.Sprintf("%s: HTTP %d without a JSON-RPC answer", method, resp.StatusCode)}
	case err != nil:
		return &Violation{Rule: RuleJSON, URL: u, Msg: method + ": the answer is no JSON-RPC message: " + err.Error()}
	}
	if err := json.Unmarshal(msg.Result, v); err != nil {
		return &Violation{Rule: RuleJSON, URL: u, Msg: method + ": the result is not of the extension's shape: " + err.Error()}
	}
	return nil
}

func (e *mcpRPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// sseData is the data of the first event of an event stream.
func sseData(b []byte) []byte {
	for line := range bytes.Lines(b) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			return bytes.TrimSpace(d)
		}
	}
	return b
}

// WalkMCP walks the MCP endpoint and compares what it serves with the
// RFC index of the same feed (rfc, which SyncSkills kept the files of):
// the same skills, the same files with the same digests and sizes, and
// bytes that hash to them. A feed without an endpoint (404, 405, 501, or
// a JSON-RPC error to server/discover) is not walked and no finding:
// only MCP hosts need one, and a static host cannot serve it.
func (c *Client) WalkMCP(ctx context.Context, rfc []RFCEntry) error {
	const itemName = "MCP endpoint"
	u := c.entry(pathMCP)
	var disc struct {
		mcpCache
		Capabilities struct {
			Resources  *json.RawMessage           `json:"resources"`
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	err := c.mcpCall(ctx, "server/discover", nil, &disc)
	var v *Violation
	if errors.As(err, &v) && v.Rule == RuleStatus && mcpAbsent[v.Status] || errors.As(err, new(*mcpRPCError)) {
		return nil // no endpoint (a static host cannot have one): nothing to walk
	}
	if err != nil {
		return at(err, itemName, u)
	}
	ext, ok := disc.Capabilities.Extensions[mcpExtension]
	if !ok || !bytes.HasPrefix(bytes.TrimSpace(ext), []byte("{")) || disc.Capabilities.Resources == nil {
		return &Violation{Rule: RuleMCP, Item: itemName, URL: u, Msg: "server/discover declares no capabilities.extensions[\"" + mcpExtension + "\"] object, or no capabilities.resources: hosts do not ask for skills"}
	}
	entries, err := c.mcpList(ctx)
	if err != nil {
		return at(err, itemName, u)
	}

	byName := map[string]RFCEntry{}
	for _, e := range rfc {
		byName[e.Name] = e
	}
	errs := make([]error, len(entries))
	listed := map[string]bool{}
	c.each(len(entries), func(i int) {
		errs[i] = c.checkMCPSkill(ctx, entries[i], byName)
		if c.obs != nil {
			c.obs.itemDone()
		}
	})
	for _, e := range entries {
		listed[mcpSkillName(e.URI)] = true
	}
	for _, e := range rfc {
		if !listed[e.Name] {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: e.item(), URL: u, Msg: "the RFC index lists the skill; skills/list does not"})
		}
	}
	var unknown struct{ mcpCache }
	var rpc *mcpRPCError
	if err := c.mcpCall(ctx, "skills/get", map[string]any{"uri": mcpScheme + "skillserver-check-no-such-skill/SKILL.md"}, &unknown); !errors.As(err, &rpc) || rpc.Code != mcpInvalidParams {
		errs = append(errs, &Violation{Rule: RuleMCP, Item: itemName, URL: u, Msg: fmt.Sprintf("skills/get of an unknown URI: want JSON-RPC error %d, got %v", mcpInvalidParams, err)})
	}
	return errors.Join(errs...)
}

// mcpAbsent are the statuses of a host that has no MCP endpoint: a
// static host refuses the POST or finds no file.
var mcpAbsent = map[int]bool{http.StatusNotFound: true, http.StatusMethodNotAllowed: true, http.StatusNotImplemented: true}

// mcpList pages through skills/list, as a host does.
func (c *Client) mcpList(ctx context.Context) ([]mcpEntry, error) {
	var all []mcpEntry
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			mcpCache
			Skills     []mcpEntry `json:"skills"`
			NextCursor *string    `json:"nextCursor"`
		}
		if err := c.mcpCall(ctx, "skills/list", params, &res); err != nil {
			return all, at(err, fmt.Sprintf("skills/list page %d", page+1), "")
		}
		if err := res.check(); err != nil {
			return all, at(err, fmt.Sprintf("skills/list page %d", page+1), "")
		}
		if res.Skills == nil {
			return all, bad(RuleMCP, "skills/list page %d has no skills list", page+1)
		}
		all = append(all, res.Skills...)
		switch {
		case res.NextCursor == nil:
			return all, nil
		case *res.NextCursor == "":
			return all, bad(RuleMCP, "skills/list page %d gives an empty nextCursor: hosts follow it (the MCP Inspector asks again); leave it out on the last page", page+1)
		case seen[*res.NextCursor] || page >= mcpMaxPages:
			return all, bad(RuleMCP, "skills/list repeats a cursor or runs past %d pages: hosts stop there", mcpMaxPages)
		}
		seen[*res.NextCursor] = true
		cursor = *res.NextCursor
	}
}

// mcpSkillName is the skill name a SKILL.md URI names: its segment
// before SKILL.md.
func mcpSkillName(uri string) string {
	segs := strings.Split(strings.TrimPrefix(uri, mcpScheme), "/")
	if len(segs) < 2 || segs[len(segs)-1] != skill.FileName {
		return ""
	}
	return segs[len(segs)-2]
}

// checkMCPSkill checks one listed skill: its entry, skills/get of it,
// and every file against its digest, its size and the RFC feed's file
// of the same path.
func (c *Client) checkMCPSkill(ctx context.Context, e mcpEntry, rfc map[string]RFCEntry) error {
	name := mcpSkillName(e.URI)
	itemName := "MCP skill " + e.URI
	fmName, _ := e.Frontmatter["name"].(string)
	switch {
	case !strings.HasPrefix(e.URI, mcpScheme) || name == "":
		return &Violation{Rule: RuleMCP, Item: itemName, Msg: "uri is not skill://<path>/<name>/SKILL.md"}
	case name != fmName:
		return &Violation{Rule: RuleFrontmatter, Item: itemName, Msg: fmt.Sprintf("the URI names %q, frontmatter.name is %q: the extension requires them equal", name, fmName)}
	}
	var files []mcpFile
	if err := json.Unmarshal(e.Resources, &files); err != nil {
		return &Violation{Rule: RuleMCP, Item: itemName, Msg: "resources is no list of {uri, digest, size} (\"dynamic\" cannot be verified by any host)"}
	}
	if !slices.ContainsFunc(files, func(f mcpFile) bool { return f.URI == e.URI }) {
		return &Violation{Rule: RuleMCP, Item: itemName, Msg: "resources does not list the SKILL.md itself: the list must be complete"}
	}
	var got struct {
		mcpCache
		Skill mcpEntry `json:"skill"`
	}
	var errs []error
	if err := c.mcpCall(ctx, "skills/get", map[string]any{"uri": e.URI}, &got); err != nil {
		errs = append(errs, at(err, itemName, ""))
	} else if err := got.check(); err != nil {
		errs = append(errs, at(err, itemName, ""))
	} else if got.Skill.URI != e.URI || !bytes.Equal(compactJSON(got.Skill.Resources), compactJSON(e.Resources)) {
		errs = append(errs, &Violation{Rule: RuleConsistency, Item: itemName, Msg: "skills/get gives another entry than skills/list"})
	}
	entry, inRFC := rfc[name]
	synced, haveFiles := c.Skills[name]
	if !inRFC {
		return errors.Join(append(errs, &Violation{Rule: RuleConsistency, Item: itemName, Msg: "skills/list lists the skill; the RFC index does not"})...)
	}
	root := strings.TrimSuffix(e.URI, skill.FileName)
	for _, f := range files {
		path := strings.TrimPrefix(f.URI, root)
		if err := checkDigest(f.Digest); err != nil || f.Size == nil || *f.Size < 0 || !strings.HasPrefix(f.URI, root) {
			errs = append(errs, &Violation{Rule: RuleMCP, Item: itemName, URL: f.URI, Msg: "a file needs a uri inside the skill's folder, a sha256:<64 hex> digest and a size"})
			continue
		}
		if sum, ok := synced.Sums[path]; haveFiles && (!ok || sum.String() != f.Digest) {
			errs = append(errs, &Violation{Rule: RuleConsistency, Item: entry.item(), URL: f.URI, Msg: fmt.Sprintf("over MCP %s has digest %s; the RFC artifact's file of that path has %s", path, f.Digest, sum)})
		}
		if err := c.mcpReadFile(ctx, f); err != nil {
			errs = append(errs, at(err, itemName, f.URI))
		}
	}
	if haveFiles && len(synced.Sums) != len(files) {
		errs = append(errs, &Violation{Rule: RuleConsistency, Item: entry.item(), URL: e.URI, Msg: fmt.Sprintf("over MCP the skill has %d files, its RFC artifact %d", len(files), len(synced.Sums))})
	}
	return errors.Join(errs...)
}

// mcpReadFile reads f with resources/read and checks its bytes.
func (c *Client) mcpReadFile(ctx context.Context, f mcpFile) error {
	var res struct {
		mcpCache
		Contents []struct {
			URI  string  `json:"uri"`
			Text *string `json:"text"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	if err := c.mcpCall(ctx, "resources/read", map[string]any{"uri": f.URI}, &res); err != nil {
		return err
	}
	if err := res.check(); err != nil {
		return err
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != f.URI {
		return bad(RuleMCP, "resources/read gives %d contents, want one with the uri asked for", len(res.Contents))
	}
	var body []byte
	switch got := res.Contents[0]; {
	case got.Text != nil:
		body = []byte(*got.Text)
	case got.Blob != nil:
		b, err := base64.StdEncoding.DecodeString(*got.Blob)
		if err != nil {
			return bad(RuleMCP, "blob is not base64: %v", err)
		}
		body = b
	default:
		return bad(RuleMCP, "the content has neither text nor blob")
	}
	c.count(&c.Downloads)
	switch {
	case int64(len(body)) != *f.Size:
		return bad(RuleDigestMismatch, "resources/read gives %d bytes; the entry says %d", len(body), *f.Size)
	case content.Sum(body).String() != f.Digest:
		return bad(RuleDigestMismatch, "resources/read gives bytes with digest %s; the entry says %s", content.Sum(body), f.Digest)
	}
	return nil
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

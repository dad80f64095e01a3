package mcpapi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/skill"
)

// resources answers resources/list and resources/templates/list from the
// reader's view: the SDK's own list what is registered with it, and the
// files of a snapshot are not. resources/read goes through the SDK
// (readTemplate), which completes its result for each revision.
func (a *api) resources(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodResourcesList:
			return a.list(readerOf(ctx), req.(*mcp.ListResourcesRequest).Params)
		case methodTemplatesList:
			return a.templates(readerOf(ctx)), nil
		}
		return next(ctx, method, req)
	}
}

// readTemplate matches every skill:// URI, so that resources/read of any
// reaches read.
var readTemplate = &mcp.ResourceTemplate{URITemplate: feed.SkillScheme + "{+path}", Name: "skill-file",
	Title: "A file of a skill", Description: "Any file a skills/list or skills/get entry lists, by its uri."}

// read answers resources/read of a skill file: its bytes, as text when
// its media type is textual (the HTTP routes send it with a charset) and
// it is UTF-8, else base64 in blob.
func (a *api) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rd, p := readerOf(ctx), req.Params
	f, ok := rd.Feed.MCPFile(p.URI)
	if !ok {
		return nil, invalidParams("no file at " + p.URI + "; skills/list lists every file of each skill")
	}
	if a.opts.MaxFileBytes > 0 && f.Size > a.opts.MaxFileBytes {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("the file is %d bytes, more than mcp_max_file_bytes (%d) lets one answer carry; fetch it over HTTP at %s",
			f.Size, a.opts.MaxFileBytes, rd.Feed.Prefix()+feed.ArtifactPath(f.Digest, f.Path))}
	}
	body, ok := rd.Blob(f.Digest)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the file's bytes are gone from the snapshot; list again"}
	}
	ct := f.ContentType()
	c := &mcp.ResourceContents{URI: p.URI, MIMEType: mediaType(ct)}
	if textual(ct) && len(body) > 0 && utf8.Valid(body) {
		c.Text = string(body)
	} else {
		c.Blob = body // read only; the SDK encodes it as base64
		if c.Blob == nil {
			c.Blob = []byte{} // an empty file is "blob": "", never no content
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: a.cacheable(rd)}, nil
}

// list answers resources/list: the SKILL.md of the latest version of
// every skill, by name, a page at a time. A skill's other files are in
// its skills/list entry and its folders (resources/directory/read).
func (a *api) list(rd Reader, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	cursor := ""
	if p != nil {
		cursor = p.Cursor
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, err
	}
	skills := rd.Feed.MCPSkillsAfter(after)
	n, more := a.page(len(skills))
	res := &mcp.ListResourcesResult{Resources: make([]*mcp.Resource, n), Cacheable: a.cacheable(rd)}
	for i, sk := range skills[:n] {
		res.Resources[i] = &mcp.Resource{URI: sk.URI, Name: sk.Name, Description: sk.Description,
			MIMEType: mediaType(feed.ContentType(skill.FileName)), Size: sk.Size}
	}
	if more {
		res.NextCursor = encodeCursor(skills[n-1].Name)
	}
	return res, nil
}

// templates answers resources/templates/list: how to name a version of
// a skill by number.
func (a *api) templates(rd Reader) *mcp.ListResourceTemplatesResult {
	return &mcp.ListResourceTemplatesResult{Cacheable: a.cacheable(rd), ResourceTemplates: []*mcp.ResourceTemplate{readTemplate, {
		URITemplate: feed.SkillScheme + feed.VersionsAuthority + "/{version}/{name}/" + skill.FileName,
		Name:        "skill-version",
		Title:       "A version of a skill, by number",
		Description: "The SKILL.md of one version of a skill; skills/get of it gives the version's files, and its _meta lists every version.",
		MIMEType:    mediaType(feed.ContentType(skill.FileName)),
	}}}
}

type dirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type dirResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

// directoryRead answers resources/directory/read: the files and folders
// directly in a folder of a skill version, by name.
func (a *api) directoryRead(ctx context.Context, _ *mcp.ServerSession, p *dirParams) (*dirResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("resources/directory/read needs the uri of a folder of a skill, such as skill://<name>")
	}
	after, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, err
	}
	rd := readerOf(ctx)
	entries, ok := rd.Feed.MCPDirectory(p.URI)
	if !ok {
		return nil, invalidParams(p.URI + " is no folder of a skill; a skill's root is skill://<name>")
	}
	entries = entries[sort.Search(len(entries), func(i int) bool { return entries[i].Name > after }):]
	n, more := a.page(len(entries))
	res := &dirResult{ResultType: resultComplete, Resources: make([]*mcp.Resource, n), Cacheable: a.cacheable(rd)}
	for i, e := range entries[:n] {
		r := &mcp.Resource{URI: e.URI, Name: e.Name, MIMEType: feed.DirectoryMIMEType}
		if !e.Dir {
			r.MIMEType, r.Size = mediaType(e.File.ContentType()), e.File.Size
		}
		res.Resources[i] = r
	}
	if more {
		res.NextCursor = encodeCursor(entries[n-1].Name)
	}
	return res, nil
}

// mediaType is a content type without its parameters: MCP carries text
// as JSON strings, so a charset says nothing there.
func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return t
}

// textual reports whether ct is a text type: the content-type table
// gives those, and only those, a charset.
func textual(ct string) bool { return strings.Contains(ct, "charset=") }

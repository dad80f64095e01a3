package mcpapi

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultComplete is every result's resultType: the endpoint never asks
// the client for input.
const resultComplete = "complete"

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	mcp.ResultBase
	ResultType string            `json:"resultType"`
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

// skillsList answers skills/list: the latest version of every skill the
// reader sees, by name, a page at a time.
func (a *api) skillsList(ctx context.Context, _ *mcp.ServerSession, p *listParams) (*listResult, error) {
	if p == nil {
		p = &listParams{}
	}
	after, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, err
	}
	rd := readerOf(ctx)
	skills := rd.Feed.MCPSkillsAfter(after)
	n, more := a.page(len(skills))
	res := &listResult{ResultType: resultComplete, Skills: make([]json.RawMessage, n), Cacheable: a.cacheable(rd)}
	for i := range n {
		res.Skills[i] = skills[i].Entry
	}
	if more {
		res.NextCursor = encodeCursor(skills[n-1].Name)
	}
	return res, nil
}

type getParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Skill      json.RawMessage `json:"skill"`
	mcp.Cacheable
}

// skillsGet answers skills/get: the skill version whose SKILL.md is at
// the URI, latest or by number, with every version of the skill in
// _meta. A skill outside the reader's scope is unknown, as one that
// does not exist.
func (a *api) skillsGet(ctx context.Context, _ *mcp.ServerSession, p *getParams) (*getResult, error) {
	rd := readerOf(ctx)
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get needs the uri of a skill's SKILL.md, as skills/list gives it")
	}
	sk, ok := rd.Feed.MCPSkill(p.URI)
	if !ok {
		return nil, invalidParams("no skill has its SKILL.md at " + p.URI + "; skills/list names every skill's")
	}
	res := &getResult{ResultType: resultComplete, Skill: sk.Entry, Cacheable: a.cacheable(rd)}
	res.Meta = mcp.Meta{versionsMetaKey: rd.Feed.MCPVersions(sk.Name)}
	return res, nil
}

func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

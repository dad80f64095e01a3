package mcpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
)

// Options configure the endpoint. A zero limit is off, as everywhere.
type Options struct {
	Name, Version string // the server's, for serverInfo
	// PageSize is how many entries one page of skills/list,
	// resources/list or resources/directory/read holds (mcp_page_size);
	// 0: one page holds all.
	PageSize int
	// MaxRequestBytes bounds a request's body (mcp_max_request_bytes).
	MaxRequestBytes int64
	// MaxBatch bounds the messages of one JSON-RPC batch (mcp_max_batch),
	// which revisions before 2025-06-18 may send.
	MaxBatch int
	// MaxFileBytes is the largest file resources/read returns
	// (mcp_max_file_bytes): larger ones are for the HTTP routes, which
	// stream them; MCP carries a file whole in one JSON string.
	MaxFileBytes int64
	// TTL is the ttlMs of every cacheable result: how long a host may
	// keep a listing before asking again.
	TTL      time.Duration
	Observer Observer // nil: nothing counted
	Log      *slog.Logger
}

// Observer counts MCP requests.
type Observer interface {
	// ObserveMCP counts one message of method (one of Methods) whose
	// result was "ok" or "error"; a method the endpoint does not serve is
	// "other", with the result "unserved".
	ObserveMCP(method, result string)
}

// Reader is what one request reads: the view of a snapshot its read
// token sees, and that snapshot's bytes.
type Reader struct {
	Feed *feed.Feed
	Blob func(content.Digest) ([]byte, bool)
	// Private marks a reader with a read token: its results are
	// cacheScope "private".
	Private bool
}

type readerKey struct{}

func readerOf(ctx context.Context) Reader {
	rd, _ := ctx.Value(readerKey{}).(Reader)
	return rd
}

// api answers the methods, from the Reader in each request's context.
type api struct{ opts Options }

// server is the SDK's server of the endpoint: what it declares, the
// extension's methods and the resource methods answered from the view.
func (a *api) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: a.opts.Name, Version: a.opts.Version}, &mcp.ServerOptions{
		Logger: sdkLogger(a.opts.Log),
		Capabilities: &mcp.ServerCapabilities{
			Resources:  &mcp.ResourceCapabilities{},
			Extensions: map[string]any{skillsExtension: map[string]any{"directoryRead": true}},
		},
		SetCacheable: func(ctx context.Context, _ mcp.Request, c *mcp.Cacheable) { *c = a.cacheable(readerOf(ctx)) },
	})
	must(mcp.AddReceivingCustomMethod(s, methodSkillsList, a.skillsList))
	must(mcp.AddReceivingCustomMethod(s, methodSkillsGet, a.skillsGet))
	must(mcp.AddReceivingCustomMethod(s, methodDirectoryRead, a.directoryRead))
	s.AddResourceTemplate(readTemplate, a.read)
	s.AddReceivingMiddleware(a.observe, a.resources)
	return s
}

func must(err error) {
	if err != nil {
		panic("mcpapi: " + err.Error()) // a method name shadows one of the SDK's
	}
}

// cacheable is how long and by whom rd's results may be kept.
func (a *api) cacheable(rd Reader) mcp.Cacheable {
	c := mcp.Cacheable{TTLMs: int(a.opts.TTL / time.Millisecond), CacheScope: "public"}
	if rd.Private {
		c.CacheScope = "private"
	}
	return c
}

// observe counts every request the SDK dispatches, by method and result.
func (a *api) observe(next mcp.MethodHandler) mcp.MethodHandler {
	if a.opts.Observer == nil {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if m := metricMethod(method); m != methodOther { // checkMessages counts the others
			result := resultOK
			if err != nil {
				result = resultError
			}
			a.opts.Observer.ObserveMCP(m, result)
		}
		return res, err
	}
}

// page cuts n entries into the first page: how many it holds, and
// whether more follow.
func (a *api) page(n int) (int, bool) {
	if a.opts.PageSize > 0 && n > a.opts.PageSize {
		return a.opts.PageSize, true
	}
	return n, false
}

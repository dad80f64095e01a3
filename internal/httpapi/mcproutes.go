package httpapi

import (
	"net/http"

	"github.com/skillserver/skillserver/internal/mcpapi"
)

// handleMCP serves the MCP endpoint (internal/mcpapi) behind the same
// read tokens as every route: the token's view decides what it lists and
// reads.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) { s.mcp.ServeHTTP(w, r) }

// mcpReader is what an MCP request reads: the current snapshot as its
// read token sees it.
func (s *Server) mcpReader(r *http.Request) (mcpapi.Reader, bool) {
	snap := s.cat.Current()
	if snap == nil {
		return mcpapi.Reader{}, false
	}
	_, private := r.Context().Value(grantKey{}).(grant)
	return mcpapi.Reader{Feed: viewOf(r, snap.Feed()), Blob: snap.Store.Get, Private: private}, true
}

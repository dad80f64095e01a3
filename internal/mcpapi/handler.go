package mcpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler is the endpoint: POST carries JSON-RPC, GET and DELETE answer
// 405, as a server that keeps no session does.
type Handler struct {
	api    *api
	sdk    http.Handler
	reader func(*http.Request) (Reader, bool)
}

// New returns the endpoint. reader picks what a request reads; false
// means there is nothing to read yet (no snapshot).
func New(opts Options, reader func(*http.Request) (Reader, bool)) *Handler {
	a := &api{opts: opts}
	srv := a.server()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       sdkLogger(opts.Log),
		// The body is read and bounded here (ServeHTTP), so that a
		// request over mcp_max_request_bytes gets a JSON-RPC error.
		MaxRequestBodyBytes: -1,
		// The server's own Host rules apply (base_url, allowed_hosts),
		// and a client that can reach it may read what it publishes
		// over HTTP anyway: the SDK's localhost check would only refuse
		// a reverse proxy on the same machine.
		DisableLocalhostProtection: true,
	})
	return &Handler{api: a, sdk: sdk, reader: reader}
}

// ServeHTTP bounds the request, counts the methods the SDK will refuse
// unseen, and hands the request to the SDK with its Reader.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, status, err := h.readBody(r)
		if err != nil {
			writeError(w, status, err.Error())
			return
		}
		if err := h.checkMessages(body); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	rd, ok := h.reader(r)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "the server has not finished its first scan; try again shortly")
		return
	}
	h.sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), readerKey{}, rd)))
}

// readBody reads the body whole, up to mcp_max_request_bytes; on an
// error, status is the answer's.
func (h *Handler) readBody(r *http.Request) (body []byte, status int, err error) {
	max := h.api.opts.MaxRequestBytes
	src := io.Reader(r.Body)
	if max > 0 {
		src = io.LimitReader(r.Body, max+1)
	}
	body, err = io.ReadAll(src)
	switch {
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request: %v", err)
	case max > 0 && int64(len(body)) > max:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("the request is larger than %d bytes (mcp_max_request_bytes)", max)
	}
	return body, 0, nil
}

// checkMessages refuses a batch of more than mcp_max_batch messages, and
// counts the messages of methods the endpoint does not serve, which the
// SDK may refuse before any middleware sees them (observe counts the
// rest). A body that is no JSON-RPC is the SDK's to refuse.
func (h *Handler) checkMessages(body []byte) error {
	var msgs []struct {
		Method string `json:"method"`
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(body, &msgs); err != nil {
			return nil
		}
		if max := h.api.opts.MaxBatch; max > 0 && len(msgs) > max {
			return fmt.Errorf("the batch holds %d messages; the limit is %d (mcp_max_batch)", len(msgs), max)
		}
	} else {
		msgs = append(msgs, struct {
			Method string `json:"method"`
		}{})
		if json.Unmarshal(body, &msgs[0]) != nil {
			return nil
		}
	}
	if obs := h.api.opts.Observer; obs != nil {
		for _, m := range msgs {
			if m.Method != "" && metricMethod(m.Method) == methodOther {
				obs.ObserveMCP(methodOther, resultUnserved)
			}
		}
	}
	return nil
}

// writeError answers a request the SDK never sees with a JSON-RPC error.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}})
}

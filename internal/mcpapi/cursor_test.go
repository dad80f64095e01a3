package mcpapi

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A cursor gives back the name it was made of; anything the server did
// not make is invalid params, never a page.
func TestCursor(t *testing.T) {
	for _, name := range []string{"a", "k8s-deploy", "z-9"} {
		got, err := decodeCursor(encodeCursor(name))
		if err != nil || got != name {
			t.Errorf("cursor of %q gives %q, %v", name, got, err)
		}
	}
	if got, err := decodeCursor(""); got != "" || err != nil {
		t.Errorf("no cursor: %q %v", got, err)
	}
	for _, bad := range []string{"x", "!!!", "YWZ0ZXI6", "YmVmb3JlOmE"} {
		_, err := decodeCursor(bad)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("cursor %q: %v, want invalid params", bad, err)
		}
	}
}

// The metrics name only the methods served; the rest is other.
func TestMetricMethod(t *testing.T) {
	for m, want := range map[string]string{"skills/list": "skills/list", "resources/read": "resources/read",
		"initialize": "initialize", "tools/call": "other", "": "other", "skills/list\n": "other"} {
		if got := metricMethod(m); got != want {
			t.Errorf("metricMethod(%q) = %q, want %q", m, got, want)
		}
	}
}

// Text types are those the content-type table gives a charset; the
// MCP mimeType drops parameters.
func TestTextualAndMediaType(t *testing.T) {
	for ct, want := range map[string]bool{"text/markdown; charset=utf-8": true, "application/json; charset=utf-8": true,
		"image/png": false, "image/svg+xml": false, "application/octet-stream": false} {
		if textual(ct) != want {
			t.Errorf("textual(%q) = %v", ct, !want)
		}
	}
	if got := mediaType("text/markdown; charset=utf-8"); got != "text/markdown" {
		t.Errorf("mediaType: %q", got)
	}
}

package mcpapi

import (
	"encoding/base64"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A cursor names the last entry of the page it follows, by name: the
// next page is what sorts after it in whichever snapshot answers, so a
// cursor stays valid across a reload, and a page never repeats or skips
// an entry that both snapshots hold. It is opaque to clients.
const cursorPrefix = "after:"

func encodeCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + last))
}

// decodeCursor returns the name a cursor names ("" for none).
func decodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	last, ok := strings.CutPrefix(string(b), cursorPrefix)
	if err != nil || !ok || last == "" {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "invalid cursor: pass back the nextCursor of the previous page unchanged, or none for the first page"}
	}
	return last, nil
}

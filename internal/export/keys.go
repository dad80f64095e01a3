package export

import (
	"fmt"
	"io/fs"
	"net/url"
	"strings"
)

// keyOf is the key of the file at the escaped URL path p: p unescaped,
// without its leading slash. Resource paths come from files that passed
// validation (skill.ValidResourcePath, skill.ResourcePathLength), so the
// key is a clean slash path inside the output that every target can
// store (FuzzKeys); one that is not is refused here rather than written.
func keyOf(p string) (string, error) {
	key, err := url.PathUnescape(strings.TrimPrefix(p, "/"))
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	if !validKey(key) {
		return "", fmt.Errorf("path %q is not a path inside the output", p)
	}
	return key, nil
}

// validKey reports whether key names a file inside the output, the same
// one in a folder and in gocloud.dev's file:// driver (which escapes
// control characters): a clean relative slash path, with no backslash
// and no control character, other than the state file. Keys read from
// the state file are checked too: a hand-edited one is never removed.
func validKey(key string) bool {
	if !fs.ValidPath(key) || key == "." || key == StateFile || strings.ContainsRune(key, '\\') {
		return false
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

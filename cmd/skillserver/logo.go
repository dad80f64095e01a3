package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillserver/skillserver/internal/config"
)

// maxLogoBytes bounds server_logo: every page names it, and browsers
// fetch it once (its URL names its digest).
const maxLogoBytes = 256 << 10

// readLogo reads the server_logo file: an SVG or a PNG by its name, and
// by its bytes for a PNG.
func readLogo(file string) ([]byte, string, error) {
	b, err := os.ReadFile(file)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("%w: server_logo: %w", config.ErrUsage, err)
	case len(b) > maxLogoBytes:
		return nil, "", fmt.Errorf("%w: server_logo %q: %d bytes, more than %d", config.ErrUsage, file, len(b), maxLogoBytes)
	case strings.EqualFold(filepath.Ext(file), ".png"):
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			return nil, "", fmt.Errorf("%w: server_logo %q is not a PNG file", config.ErrUsage, file)
		}
		return b, "image/png", nil
	}
	return b, "image/svg+xml", nil
}

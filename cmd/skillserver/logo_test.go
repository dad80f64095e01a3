package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/config"
)

// TestReadLogo: server_logo reads an SVG by its name and a PNG by its
// name and magic bytes; a missing file, a PNG that is not one, or a file
// past 256 KiB is a usage error naming the key.
func TestReadLogo(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file, typ string
	}{
		{"svg", write("logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)), "image/svg+xml"},
		{"png", write("logo.PNG", []byte("\x89PNG\r\n\x1a\nrest")), "image/png"},
	} {
		b, typ, err := readLogo(tc.file)
		if err != nil || typ != tc.typ || len(b) == 0 {
			t.Errorf("%s: %d bytes, %q, %v; want %s", tc.name, len(b), typ, err, tc.typ)
		}
	}
	for name, file := range map[string]string{
		"missing":   filepath.Join(dir, "none.svg"),
		"not a png": write("fake.png", []byte("<svg/>")),
		"too large": write("big.svg", []byte(strings.Repeat("x", maxLogoBytes+1))),
	} {
		if _, _, err := readLogo(file); !errors.Is(err, config.ErrUsage) || !strings.Contains(err.Error(), "server_logo") {
			t.Errorf("%s: %v; want a usage error naming server_logo", name, err)
		}
	}
}

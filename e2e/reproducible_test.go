//go:build e2e

package e2e

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReleaseIsReproducible runs scripts/release-check.sh: two `make
// dist` of HEAD, in two folders, the second with a build cache of its
// own, give the same SHA256SUMS. It then checks what an archive holds. It
// takes minutes per platform, so it runs only when asked, for
// RELEASE_PLATFORMS (default linux/amd64 and windows/arm64: a tar.gz and
// a zip):
//
//	SKILLSERVER_RELEASE_TEST=1 go test -run Reproducible ./cmd/skillserver/
func TestReleaseIsReproducible(t *testing.T) {
	if os.Getenv("SKILLSERVER_RELEASE_TEST") != "1" {
		t.Skip("builds the release twice; enable with SKILLSERVER_RELEASE_TEST=1")
	}
	keep := t.TempDir()
	cmd := exec.Command("bash", "../scripts/release-check.sh")
	platforms := os.Getenv("RELEASE_PLATFORMS")
	if platforms == "" {
		platforms = "linux/amd64 windows/arm64"
	}
	cmd.Env = append(os.Environ(), "RELEASE_CHECK_KEEP="+keep, "RELEASE_PLATFORMS="+platforms)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("scripts/release-check.sh: %v", err)
	}
	sums, err := os.ReadFile(filepath.Join(keep, "first", "dist", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for line := range strings.Lines(string(sums)) {
		if _, name, ok := strings.Cut(strings.TrimSpace(line), "  "); ok {
			names = append(names, name)
		}
	}
	version := regexp.MustCompile(`release-check: (\S+) at`).FindSubmatch(out)
	if version == nil {
		t.Fatal("release-check printed no version")
	}
	for _, p := range strings.Fields(platforms) {
		goos, arch, _ := strings.Cut(p, "/")
		base := "skillserver_" + string(version[1]) + "_" + goos + "_" + arch
		archive, exe := base+".tar.gz", ""
		if goos == "windows" {
			archive, exe = base+".zip", ".exe"
		}
		for _, want := range []string{archive, base + ".cdx.json"} {
			if !slices.Contains(names, want) {
				t.Errorf("SHA256SUMS lists %q; want %s", names, want)
			}
		}
		entries := archiveEntries(t, filepath.Join(keep, "first", "dist", archive))
		want := []string{base + "/", base + "/LICENSE", base + "/NOTICE", base + "/README.md", base + "/skillserver" + exe, base + "/skillserver-export" + exe}
		if !slices.Equal(entries, want) {
			t.Errorf("%s holds %q, want %q", archive, entries, want)
		}
	}
}

// archiveEntries lists the names in a .tar.gz or .zip, in order.
func archiveEntries(t *testing.T, path string) []string {
	t.Helper()
	var names []string
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		return names
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

package main

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
	"strconv"
	"strings"
	"testing"
)

// TestKubernetesExampleNamesARelease: the skillserver image of
// deploy/kubernetes.yaml is tagged with a version CHANGELOG.md releases
// (a dated section and its tag link), the tag `make docker` gives an
// image built at that tag.
func TestKubernetesExampleNamesARelease(t *testing.T) {
	manifest, err := os.ReadFile("../../deploy/kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	images := regexp.MustCompile(`(?m)^\s*image: \S+/skillserver:(\S+)`).FindAllSubmatch(manifest, -1)
	if len(images) == 0 {
		t.Fatal("deploy/kubernetes.yaml runs no skillserver image")
	}
	for _, m := range images {
		tag := string(m[1])
		v := regexp.MustCompile(`^v(\d+\.\d+\.\d+)$`).FindStringSubmatch(tag)
		if v == nil {
			t.Errorf("deploy/kubernetes.yaml: image tag %q is not vMAJOR.MINOR.PATCH", tag)
			continue
		}
		section := regexp.MustCompile(`(?m)^## \[` + regexp.QuoteMeta(v[1]) + `\] - \d{4}-\d{2}-\d{2}$`)
		link := regexp.MustCompile(`(?m)^\[` + regexp.QuoteMeta(v[1]) + `\]: \S+/releases/tag/` + regexp.QuoteMeta(tag) + `$`)
		if !section.Match(changelog) || !link.Match(changelog) {
			t.Errorf("deploy/kubernetes.yaml names %s, which CHANGELOG.md does not release (want a \"## [%s] - DATE\" section and its tag link)", tag, v[1])
		}
	}
}

// TestVersionFileIsTheNextRelease: VERSION, the version a build off a tag
// reports (with -dev-COMMIT), is the newest release of CHANGELOG.md, on
// the commit that makes that release (its Unreleased section then lists
// nothing), or else the release after it (a patch, minor or major step).
func TestVersionFileIsTheNextRelease(t *testing.T) {
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)\n$`).FindSubmatch(b)
	if v == nil {
		t.Fatalf("VERSION is %q, want vMAJOR.MINOR.PATCH and a newline", b)
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	r := regexp.MustCompile(`(?m)^## \[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(changelog)
	if r == nil {
		t.Fatal("CHANGELOG.md releases nothing")
	}
	num := func(m [][]byte) [3]int {
		var n [3]int
		for i := range n {
			n[i], _ = strconv.Atoi(string(m[i+1]))
		}
		return n
	}
	next, last := num(v), num(r)
	unreleased := regexp.MustCompile(`(?ms)^## \[Unreleased\]\n(.*?)^## \[`).FindSubmatch(changelog)
	entries := unreleased != nil && regexp.MustCompile(`(?m)^- `).Match(unreleased[1])
	switch {
	case next == last:
		if entries {
			t.Errorf("VERSION is %s, CHANGELOG.md's newest release, but its Unreleased section lists changes: raise VERSION to the next release", strings.TrimSpace(string(b)))
		}
	case next == [3]int{last[0], last[1], last[2] + 1}, next == [3]int{last[0], last[1] + 1, 0}, next == [3]int{last[0] + 1, 0, 0}:
		if unreleased == nil {
			t.Errorf("VERSION is %s, after the newest release, but CHANGELOG.md has no Unreleased section", strings.TrimSpace(string(b)))
		}
	default:
		t.Errorf("VERSION is %s; CHANGELOG.md's newest release is %d.%d.%d: want that one (the release commit) or the next patch, minor or major version", strings.TrimSpace(string(b)), last[0], last[1], last[2])
	}
}

// TestMakeVersion: the version make stamps into the binaries and the
// image is the tag at HEAD, or else VERSION with -dev-COMMIT; either with
// -dirty when tracked files have uncommitted changes.
func TestMakeVersion(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", "../.."}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	commit, err := git("rev-parse", "--short", "HEAD")
	if err != nil {
		t.Skip("not a git checkout")
	}
	out, err := exec.Command("make", "-s", "-C", "../..", "version").Output()
	if err != nil {
		t.Fatalf("make version: %v", err)
	}
	got := strings.TrimSpace(string(out))
	file, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(file)) + "-dev-" + commit
	if tag, err := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD"); err == nil {
		want = tag
	}
	if described, _ := git("describe", "--always", "--dirty"); strings.HasSuffix(described, "-dirty") {
		want += "-dirty"
	}
	if got != want {
		t.Errorf("make version = %q, want %q", got, want)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`).MatchString(got) {
		t.Errorf("make version = %q, which is no image tag", got)
	}
}

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
	cmd := exec.Command("bash", "../../scripts/release-check.sh")
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

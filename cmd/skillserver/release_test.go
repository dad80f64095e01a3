package main

import (
	"os"
	"os/exec"
	"regexp"
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

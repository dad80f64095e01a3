package main

import (
	"os"
	"regexp"
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

package feed

import (
	"bytes"
	"strings"
	"testing"
)

// TestViewsRenderOncePerSnapshot: a view is made once per scope and
// prefix, renders each document once however many requests ask, holds
// only the items its scope allows, puts the prefix on every href, and
// keeps its documents apart from the full feed's in the shared cache.
func TestViewsRenderOncePerSnapshot(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	allow := func(name string) bool { return strings.HasPrefix(name, "k8s-") || name == "changelog-reviewer" }
	if f.View("", "", nil) != f {
		t.Fatal("the unscoped, unprefixed view is not the feed itself")
	}
	v := f.View("k8s-* changelog-reviewer", "/t/tok", allow)
	if f.View("k8s-* changelog-reviewer", "/t/tok", allow) != v {
		t.Fatal("the same view was made twice")
	}
	if other := f.View("k8s-* changelog-reviewer", "/t/other", allow); other == v || len(other.Skills) != 1 {
		t.Fatal("another prefix shares the view, or sees other items")
	}
	if len(v.Skills) != 1 || len(v.Agents) != 1 || v.Allows("code-review") || !v.Allows("k8s-deploy") {
		t.Fatalf("view holds %d skills, %d agents", len(v.Skills), len(v.Agents))
	}
	if _, ok := v.Document(Base{}, DocKey{Kind: DocSkill, Name: "code-review"}); ok {
		t.Error("an out-of-scope identity document exists in the view")
	}
	for range 3 {
		v.Document(Base{}, DocKey{Kind: DocManifest})
		v.Document(Base{URL: "http://h.test/t/tok"}, DocKey{Kind: DocRFCIndex})
		f.Document(Base{URL: "http://h.test"}, DocKey{Kind: DocRFCIndex})
	}
	if n := v.docs.renders.Load(); n != 2 {
		t.Errorf("%d renders in the view for one manifest and one index, want 2", n)
	}
	m, _ := v.Document(Base{}, DocKey{Kind: DocManifest})
	if bytes.Count(m.Body, []byte(`"href": "/t/tok/`)) != 5 || bytes.Contains(m.Body, []byte(`"href": "/skills`)) {
		t.Errorf("view manifest hrefs lack the prefix:\n%s", m.Body)
	}
	full, _ := f.Document(Base{URL: "http://h.test"}, DocKey{Kind: DocRFCIndex})
	scoped, _ := v.Document(Base{URL: "http://h.test"}, DocKey{Kind: DocRFCIndex})
	if bytes.Equal(full.Body, scoped.Body) || bytes.Contains(scoped.Body, []byte("code-review")) {
		t.Error("the shared cache gave the view the full feed's index")
	}
	if !v.HasBlob(v.Skills[0].Latest.SkillMD) || v.HasBlob(f.Skills[0].Latest.SkillMD) {
		t.Error("HasBlob does not follow the scope")
	}
	if f.Bytes() <= f.docs.bytes.Load() {
		t.Error("the feed's bytes do not count its views")
	}
}

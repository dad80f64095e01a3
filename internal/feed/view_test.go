package feed

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
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

// TestScopedViewWalk: walking a scoped view from its manifest reaches
// only the items its scope allows, every href under its prefix, every
// artifact URL a file of the view; the view's index, files, searches and
// blobs hold no other item, and a skill it allows does not route to a
// sub-agent it does not.
func TestScopedViewWalk(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	allowed := map[string]bool{"k8s-deploy": true, "support-triage": true, "changelog-reviewer": true}
	v := f.View("three", "/t/tok", func(name string) bool { return allowed[name] })
	base := Base{URL: "https://h.test/t/tok"}
	w := walk(t, v, base, "/t/tok/manifest.json")
	if want := []string{"/t/tok" + PathSkillSearch, "/t/tok" + PathSubagentSearch}; !slices.Equal(w.routes, want) {
		t.Errorf("hrefs naming no document: %q, want %q", w.routes, want)
	}
	var items []string
	for _, k := range w.keys {
		if k.Kind == DocSkill || k.Kind == DocSubagent {
			items = append(items, k.Name)
		}
	}
	slices.Sort(items)
	if want := []string{"changelog-reviewer", "k8s-deploy", "support-triage"}; !slices.Equal(items, want) {
		t.Errorf("items reached %q, want %q", items, want)
	}
	if len(w.keys) != 13 { // manifest, 2 indexes, 2 pages, 3 identities, 3+1 skill versions, 1 agent version
		t.Errorf("%d documents reached, want 13: %v", len(w.keys), w.keys)
	}
	if _, ok := w.docs["/t/tok/skills/v1/support-triage/versions/1.2.0.json"]["routesToSubagent"]; ok {
		t.Error("support-triage routes to a sub-agent the view does not hold")
	}
	if _, ok := v.Document(base, DocKey{Kind: DocSkillVersion, Name: "code-review", Version: "1.0.0"}); ok {
		t.Error("a version of an item out of scope is a document of the view")
	}
	for _, e := range rfcOf(t, v, base.URL, DocKey{Kind: DocRFCIndex}).Skills {
		if !allowed[e.Name] {
			t.Errorf("the view's index lists %s", e.Name)
		}
	}
	for _, h := range append(v.SearchSkills(""), v.SearchAgents("")...) {
		if !allowed[h.Name] || !strings.HasPrefix(h.Href, "/t/tok/api/v1/") {
			t.Errorf("search hit %+v", h)
		}
	}
	if hits := v.SearchSkills("review"); len(hits) != 0 {
		t.Errorf("searching the view finds %+v out of scope", hits)
	}
	blobs := func(keep bool) map[content.Digest]bool {
		out := map[content.Digest]bool{}
		for _, sk := range f.Skills {
			for _, ver := range sk.Versions {
				for _, d := range ver.Blobs() {
					out[d] = out[d] || allowed[sk.Name] == keep
				}
			}
		}
		for _, a := range f.Agents {
			for _, ver := range a.Versions {
				out[ver.Digest] = out[ver.Digest] || allowed[a.Name] == keep
			}
		}
		return out
	}
	in, out := blobs(true), blobs(false)
	others := 0
	for d, theirs := range out {
		switch {
		case in[d] && !v.HasBlob(d):
			t.Errorf("HasBlob(%s) is false for a blob of the view", d)
		case theirs && !in[d]:
			others++
			if v.HasBlob(d) {
				t.Errorf("HasBlob(%s) is true for a blob of an item out of scope", d)
			}
		}
	}
	if others == 0 {
		t.Fatal("no blob out of scope to test HasBlob with")
	}
	for _, af := range v.ArtifactFiles() {
		if !in[af.Digest] {
			t.Errorf("%s is a file of the view, of an item out of scope", af.Path())
		}
	}
	if n, all := len(v.ArtifactFiles()), len(f.ArtifactFiles()); n == 0 || n >= all {
		t.Errorf("the view has %d files, the feed %d", n, all)
	}
	if _, ok := v.Skill("code-review"); ok {
		t.Error("the view looks up an item out of scope")
	}
	if !v.Scoped() || f.Scoped() || v.Prefix() != "/t/tok" {
		t.Errorf("scoped %v (feed %v), prefix %q", v.Scoped(), f.Scoped(), v.Prefix())
	}
	// A prefix without a scope holds every item, under the prefix.
	p := f.View("", "/t/all", func(string) bool { return false })
	if pw := walk(t, p, Base{URL: "https://h.test/t/all"}, "/t/all/manifest.json"); len(pw.keys) != 22 || p.Scoped() {
		t.Errorf("an unscoped view with a prefix reaches %d documents, want all 22", len(pw.keys))
	}
}

// TestStaticViews: a static view's documents are the feed's, but for
// the links to routes only a running server answers, which are left out
// or put under the API's base; its keys leave out the read API, and
// every document they name links only to documents among them.
func TestStaticViews(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	base := Base{URL: "https://static.example"}
	searchLinks := func(v *Feed) []string {
		m, _ := v.Document(base, DocKey{Kind: DocManifest})
		v1 := decode(t, m)["versions"].(map[string]any)["v1"].(map[string]any)
		var out []string
		for _, k := range []string{"skillSearch", "subagentSearch"} {
			if l, ok := v1[k]; ok {
				out = append(out, l.(map[string]any)["href"].(string))
			}
		}
		return out
	}
	for _, tt := range []struct {
		api     bool
		apiBase string
		links   []string
	}{
		{false, "", nil},
		{false, "https://ignored.example", nil},
		{true, "", []string{PathSkillSearch, PathSubagentSearch}},
		{true, "https://api.example", []string{"https://api.example" + PathSkillSearch, "https://api.example" + PathSubagentSearch}},
	} {
		s := f.Static(tt.api, tt.apiBase)
		if s == f || f.Static(tt.api, tt.apiBase) != s {
			t.Fatalf("Static(%v, %q) is the feed itself, or made twice", tt.api, tt.apiBase)
		}
		if got := searchLinks(s); !slices.Equal(got, tt.links) {
			t.Errorf("Static(%v, %q): search links %q, want %q", tt.api, tt.apiBase, got, tt.links)
		}
		keys := s.StaticKeys()
		hrefs := map[string]bool{}
		for _, k := range keys {
			if kinds[k.Kind].dynamic {
				t.Errorf("static key %+v is the read API's", k)
			}
			hrefs[k.Path()] = true
		}
		// 22 tree documents (a page for each tree), the RFC index, the
		// agent card, the legacy index, the AI catalogue and one scoped
		// index per skill.
		if len(keys) != 22+4+5 || len(hrefs) != len(keys) {
			t.Errorf("%d static keys (%d paths), want 31", len(keys), len(hrefs))
		}
		for _, k := range keys {
			d, ok := s.Document(base, k)
			if !ok {
				t.Errorf("static key %+v has no document", k)
				continue
			}
			eachObject(decode(t, d), func(o map[string]any) {
				if h, ok := o["href"].(string); ok && !hrefs[h] && !slices.Contains(tt.links, h) {
					t.Errorf("%s links to %s, which the export does not hold", k.Path(), h)
				}
			})
			if k.Kind == DocManifest {
				continue
			}
			if full, _ := f.Document(base, k); !bytes.Equal(d.Body, full.Body) {
				t.Errorf("%s differs from the feed's:\n%s\nwant\n%s", k.Path(), d.Body, full.Body)
			}
		}
	}
	if _, ok := f.Static(false, "").Document(base, DocKey{Kind: DocAPISkill, Name: "code-review"}); !ok {
		t.Error("the read API's documents are gone from the static view; only its keys leave them out")
	}
}

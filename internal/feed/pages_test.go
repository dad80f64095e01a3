package feed

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestEmptySearchIsTheIndexOrder: listing every item without a query
// skips the search index, and gives the order the index gives.
func TestEmptySearchIsTheIndexOrder(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"b-skill", "a-skill", "a", "z9", "a-b", "ab"} {
		writeFile(t, filepath.Join(root, name, "SKILL.md"), skillMD(name), 0o644)
	}
	f := scanTree(t, Tree{SkillsDir: root})
	var got, want []string
	for _, h := range f.SearchSkills("") {
		got = append(got, h.Name)
	}
	for _, i := range f.indexed().skills.Search("") {
		want = append(want, f.Skills[i].Name)
	}
	if !slices.Equal(got, want) || len(got) != 6 {
		t.Errorf("empty search lists %q, the index %q", got, want)
	}
}

// TestPagesSplicedAndKeyedApart: a page renders once per view for every
// base, gets each base HTML-escaped where the sentinel stood, and a
// render that finds nothing is not served.
func TestPagesSplicedAndKeyedApart(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	f := scanTree(t, Tree{SkillsDir: skills, AgentsDir: agents})
	renders := 0
	render := func(base string) ([]byte, bool) {
		renders++
		return []byte("<a href=\"" + base + "/x\">" + base + "</a>"), true
	}
	key := PageKey{Kind: "test"}
	for _, base := range []Base{{URL: "https://a.example", Known: true}, {URL: "http://b.example"}, {URL: "http://c&d.example"}} {
		for range 2 {
			d, ok := f.Page(base, key, render)
			esc := strings.ReplaceAll(base.URL, "&", "&amp;")
			if want := "<a href=\"" + esc + "/x\">" + esc + "</a>"; !ok || string(d.Body) != want {
				t.Errorf("base %s: %q, want %q", base.URL, d.Body, want)
			}
		}
	}
	if renders != 1 {
		t.Errorf("the page rendered %d times, want once", renders)
	}
	if _, ok := f.Page(Base{URL: "http://b.example"}, PageKey{Kind: "none"}, func(string) ([]byte, bool) { return nil, false }); ok {
		t.Error("a page render that found nothing is served")
	}
}

// TestPageCache: a page is the same *Document for the same key and
// known base; each field of its key names another page; a render that
// found nothing is asked again next time; a page and a document for the
// same base never share an entry; each view renders its own pages, with
// a sentinel for the base that is not the base.
func TestPageCache(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	renders := map[PageKey]int{}
	var sentinels []string
	page := func(key PageKey) func(string) ([]byte, bool) {
		return func(base string) ([]byte, bool) {
			renders[key]++
			sentinels = append(sentinels, base)
			return []byte(fmt.Sprintf("<p>%s %s %s %d at %s</p>", key.Kind, key.Name, key.Version, key.N, base)), true
		}
	}
	known := Base{URL: "https://known.test", Known: true}
	key := PageKey{Kind: "skill", Name: "code-review"}
	a, _ := f.Page(known, key, page(key))
	b, _ := f.Page(known, key, page(key))
	if a != b || string(a.Body) != "<p>skill code-review  0 at https://known.test</p>" {
		t.Errorf("two pages for one key, or %q", a.Body)
	}
	for _, k := range []PageKey{{Kind: "skill", Name: "k8s-deploy"}, {Kind: "skill", Name: "code-review", Version: "1.0.0"}, {Kind: "catalogue", N: 2}, {Kind: "catalogue", N: 3}} {
		d, ok := f.Page(known, k, page(k))
		if want := fmt.Sprintf("<p>%s %s %s %d at https://known.test</p>", k.Kind, k.Name, k.Version, k.N); !ok || string(d.Body) != want {
			t.Errorf("%+v: %q, want %q", k, d.Body, want)
		}
	}
	for k, n := range renders {
		if n != 1 {
			t.Errorf("%+v rendered %d times", k, n)
		}
	}
	for _, s := range sentinels {
		if s == "" || strings.Contains(s, "known.test") || !strings.HasPrefix(s, "SKILLSERVERBASE") {
			t.Errorf("render was given %q for the base", s)
		}
	}

	missing := PageKey{Kind: "skill", Name: "later"}
	tries := 0
	found := false
	later := func(base string) ([]byte, bool) { tries++; return []byte("now " + base), found }
	if _, ok := f.Page(known, missing, later); ok {
		t.Error("a page that found nothing is served")
	}
	found = true
	if d, ok := f.Page(known, missing, later); !ok || tries != 2 || string(d.Body) != "now https://known.test" {
		t.Errorf("after a miss the page rendered %d times: %q, %v", tries, d.Body, ok)
	}

	unknown := Base{URL: "http://unknown.test"}
	index := DocKey{Kind: DocRFCIndex}
	p1, _ := f.Page(unknown, PageKey{Kind: "catalogue"}, page(PageKey{Kind: "catalogue"}))
	d1, _ := f.Document(unknown, index)
	p2, _ := f.Page(unknown, PageKey{Kind: "catalogue"}, page(PageKey{Kind: "catalogue"}))
	d2, _ := f.Document(unknown, index)
	if p1 != p2 || d1 != d2 || p1 == d1 || !strings.HasPrefix(string(p2.Body), "<p>catalogue") || !bytes.HasPrefix(d2.Body, []byte("{")) {
		t.Errorf("a page and a document for one base: %q and %.40q", p2.Body, d2.Body)
	}

	v := f.View("one", "/t/tok", func(name string) bool { return name == "code-review" })
	vp, _ := v.Page(known, key, page(key))
	if renders[key] != 2 || vp == a {
		t.Errorf("the view rendered the page %d times in all, or shares the feed's", renders[key])
	}
	if again, _ := v.Page(known, key, page(key)); again != vp || renders[key] != 2 {
		t.Error("the view rendered its page again")
	}
}

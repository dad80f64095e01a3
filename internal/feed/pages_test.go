package feed

import (
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
	for _, i := range f.indexes().skills.Search("") {
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

package page

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/scan"
)

// benchFeed is the feed of n generated one-file skills with three tags.
func benchFeed(b *testing.B, n int) *feed.Feed {
	b.Helper()
	root := b.TempDir()
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		fixture.WriteFile(b, filepath.Join(root, name, "SKILL.md"), fmt.Sprintf("---\nname: %s\ndescription: Generated skill %d does one thing well when asked to.\nmetadata:\n  tags: bench, group-%d, area-%d\n---\n# %s\n", name, i, i%10, i%37, name), 0o644)
	}
	r, err := scan.Run(b.Context(), scan.Input{SkillsDir: root, Generation: 1, Cache: scan.NewCache()})
	if err != nil {
		b.Fatal(err)
	}
	return feed.New(feed.Input{Generation: 1, Source: r, Files: r.Store, Skills: r.Skills, Shared: feed.NewSharedCache(32 << 20)})
}

// BenchmarkCataloguePage renders one page of the catalogue (what the
// first request for it costs; later ones are served from the cache) and
// one page of search results (rendered for every request), for 300 and
// 10,000 skills: go test -run '^$' -bench Catalogue ./internal/page/
func BenchmarkCataloguePage(b *testing.B) {
	for _, n := range []int{300, 10000} {
		f := benchFeed(b, n)
		p := New(Options{})
		f.SearchSkills("warm") // the search index, built once per snapshot
		b.Run(fmt.Sprintf("skills=%d/page", n), func(b *testing.B) {
			for b.Loop() {
				b.SetBytes(int64(len(p.catalogue(f, "https://skills.example.com", Query{N: 2}, p.entries(f, Query{})))))
			}
		})
		b.Run(fmt.Sprintf("skills=%d/search", n), func(b *testing.B) {
			for b.Loop() {
				d, _ := p.Catalogue(f, feed.Base{URL: "https://skills.example.com"}, Query{Text: "group-3", N: 1})
				b.SetBytes(int64(len(d.Body)))
			}
		})
		b.Run(fmt.Sprintf("skills=%d/all-on-one-page", n), func(b *testing.B) {
			all := New(Options{PageSize: n})
			for b.Loop() {
				b.SetBytes(int64(len(all.catalogue(f, "https://skills.example.com", Query{N: 1}, all.entries(f, Query{})))))
			}
		})
	}
}

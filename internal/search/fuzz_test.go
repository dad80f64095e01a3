package search

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestScoresDeterministic: a query whose last word is the prefix of many
// indexed terms sums their contributions in one fixed order, so a doc's
// score, and with it the ranking, is the same on every call.
func TestScoresDeterministic(t *testing.T) {
	var docs []Doc
	for i := range 8 {
		var words []string
		for j := range 12 {
			words = append(words, "kube"+strings.Repeat(string(rune('a'+j)), 1+(i*j)%5))
		}
		docs = append(docs, Doc{Name: "doc-" + string(rune('a'+i)), Description: strings.Join(words, " "), Tags: words[:i]})
	}
	ix := New(docs)
	want := ix.bm25("kube")
	for range 200 {
		got := ix.bm25("kube")
		for d := range got {
			if math.Float64bits(got[d]) != math.Float64bits(want[d]) {
				t.Fatalf("doc %d scored %v, then %v", d, want[d], got[d])
			}
		}
	}
}

// FuzzSearch: no query panics; results are distinct docs of the index;
// the ranking is the same on every call and for a rebuilt index; an exact
// name comes first; the empty query lists every doc in name order.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{"", " ", "deploy", "Code-Review", "kube", "deploying", "the", "review code", "k8s", "-", "ÄÖÜ straße", "\xff\xfe", "👩\u200d💻", strings.Repeat("deploy ", 200)} {
		f.Add(q, "extra-doc", "An extra doc about "+q)
	}
	f.Fuzz(func(t *testing.T, q, name, desc string) {
		docs := append(slices.Clone(fixture), Doc{Name: name, Description: desc, Tags: strings.Fields(desc)})
		ix := New(docs)
		got := ix.Search(q)
		seen := make(map[int]bool, len(got))
		for _, i := range got {
			if i < 0 || i >= len(docs) || seen[i] {
				t.Fatalf("Search(%q) = %v: not distinct docs of %d", q, got, len(docs))
			}
			seen[i] = true
		}
		if again := ix.Search(q); !slices.Equal(got, again) {
			t.Fatalf("Search(%q) = %v, then %v", q, got, again)
		}
		if rebuilt := New(docs).Search(q); !slices.Equal(got, rebuilt) {
			t.Fatalf("Search(%q) = %v, on a rebuilt index %v", q, got, rebuilt)
		}
		lq := strings.ToLower(strings.TrimSpace(q))
		if lq == "" {
			if len(got) != len(docs) || !slices.IsSortedFunc(got, func(a, b int) int {
				return strings.Compare(strings.ToLower(docs[a].Name), strings.ToLower(docs[b].Name))
			}) {
				t.Fatalf("empty query: %v, want every doc in name order", got)
			}
			return
		}
		for i, d := range docs {
			if strings.ToLower(d.Name) == lq && (len(got) == 0 || strings.ToLower(docs[got[0]].Name) != lq) {
				t.Fatalf("Search(%q) = %v: doc %d has the exact name but is not first", q, got, i)
			}
		}
	})
}

// Package search ranks catalogue items for a query: exact name first, then
// names with the query as prefix, then BM25 relevance over name,
// description and tags, with English stemming (Snowball) and prefix
// matching of the last query word.
//
// It is pure and knows nothing of skills or HTTP; it must not import other
// internal packages.
package search

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Doc is one searchable item.
type Doc struct {
	Name        string
	Description string
	Tags        []string
}

// Field weights: a word in the name says more than one in the description.
const (
	weightName = 3.0
	weightTag  = 2.0
	weightDesc = 1.0
	// prefixDiscount scales a match of the last query word as a prefix
	// ("kube" -> "kubernetes") below a whole-word match.
	prefixDiscount = 0.5
	k1, b          = 1.2, 0.75
)

type posting struct {
	doc int
	tf  float64 // weighted term frequency
}

// Index is an immutable search index over docs.
type Index struct {
	docs     []Doc
	names    []string // lowercased
	postings map[string][]posting
	terms    []string // sorted, for prefix lookups
	lens     []float64
	avgLen   float64
}

// New indexes docs. Results refer to docs by position.
func New(docs []Doc) *Index {
	ix := &Index{docs: docs, names: make([]string, len(docs)), postings: map[string][]posting{}, lens: make([]float64, len(docs))}
	total := 0.0
	for i, d := range docs {
		ix.names[i] = strings.ToLower(d.Name)
		tf := map[string]float64{}
		add := func(text string, w float64) {
			for _, t := range Terms(text) {
				tf[t] += w
				ix.lens[i] += w
			}
		}
		add(d.Name, weightName)
		add(d.Description, weightDesc)
		for _, tag := range d.Tags {
			add(tag, weightTag)
		}
		total += ix.lens[i]
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: i, tf: f})
		}
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	ix.terms = make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		ix.terms = append(ix.terms, t)
	}
	sort.Strings(ix.terms)
	return ix
}

// Terms splits text into lowercase stemmed words, leaving out English
// stop words ("a", "to", "the"), which would match nearly everything.
func Terms(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if english.IsStopWord(w) {
			continue
		}
		if s := english.Stem(w, false); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// minPrefix is the shortest last word that also matches as a prefix.
const minPrefix = 3

// Search returns the positions of matching docs, best first. An empty
// query matches every doc, in name order.
func (ix *Index) Search(query string) []int {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		all := make([]int, len(ix.docs))
		for i := range all {
			all[i] = i
		}
		slices.SortStableFunc(all, func(a, b int) int { return strings.Compare(ix.names[a], ix.names[b]) })
		return all
	}
	scores := ix.bm25(q)
	type hit struct {
		doc   int
		tier  int // 0 exact name, 1 name prefix, 2 relevance
		score float64
	}
	var hits []hit
	for i, name := range ix.names {
		switch {
		case name == q:
			hits = append(hits, hit{i, 0, scores[i]})
		case strings.HasPrefix(name, q):
			hits = append(hits, hit{i, 1, scores[i]})
		case scores[i] > 0:
			hits = append(hits, hit{i, 2, scores[i]})
		}
	}
	slices.SortFunc(hits, func(x, y hit) int {
		if x.tier != y.tier {
			return x.tier - y.tier
		}
		if x.tier == 2 && x.score != y.score {
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return strings.Compare(ix.names[x.doc], ix.names[y.doc])
	})
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.doc
	}
	return out
}

// bm25 scores every doc for the query's terms; the last term also matches
// indexed terms it is a prefix of, at a discount. Contributions are added
// in one fixed order (the query's terms, then prefix matches in term
// order): floating-point sums depend on order, and a score that changed in
// its last bit from call to call could swap two docs in the ranking.
func (ix *Index) bm25(q string) []float64 {
	scores := make([]float64, len(ix.docs))
	terms := Terms(q)
	n := float64(len(ix.docs))
	type match struct {
		term   string
		weight float64
	}
	for i, t := range terms {
		matches := []match{{t, 1}}
		if i == len(terms)-1 && len(t) >= minPrefix {
			for j := sort.SearchStrings(ix.terms, t); j < len(ix.terms) && strings.HasPrefix(ix.terms[j], t); j++ {
				if ix.terms[j] != t {
					matches = append(matches, match{ix.terms[j], prefixDiscount})
				}
			}
		}
		for _, m := range matches {
			ps := ix.postings[m.term]
			if len(ps) == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				norm := p.tf + k1*(1-b+b*ix.lens[p.doc]/ix.avgLen)
				scores[p.doc] += m.weight * idf * p.tf * (k1 + 1) / norm
			}
		}
	}
	return scores
}

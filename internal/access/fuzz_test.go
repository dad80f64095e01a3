package access

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, every token it returns has at least
// one pattern, and a file cut at any byte, as a reader sees one being
// written, either fails or holds only whole lines of the file: each of
// its tokens is the token the whole file has under that name, with the
// same secret and the same patterns, never a wider one.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"ci ci-secret-0123456789 *\nteam team-secret-012345678 code-* k8s-deploy\n",
		"# tokens\n\nteam\tteam-secret-012345678 code-*\r\nall all-secret-0123456789ab * x\n",
		"a " + hashOf("hashed-secret-0123456789") + " a-* b\n",
		"a secret-0123456789abc\n",
		"a secret-0123456789abc [x\n",
		"",
		"\n",
		"# only a comment\n",
	} {
		for _, cut := range []uint16{0, 10, 25, 26, 40, 1000} {
			f.Add(seed, cut)
		}
	}
	f.Fuzz(func(t *testing.T, data string, cut uint16) {
		whole, wholeErr := Parse(strings.NewReader(data), "f")
		checkTokens(t, whole)
		part := data[:int(cut)%(len(data)+1)]
		cutSet, err := Parse(strings.NewReader(part), "f")
		checkTokens(t, cutSet)
		if err != nil {
			return
		}
		if !strings.HasSuffix(part, "\n") {
			t.Fatalf("a cut file not ending in a newline parsed: %q", part)
		}
		if wholeErr != nil {
			return // the whole file is refused; the cut holds whole lines of it
		}
		// The cut's tokens are the first of the whole file's, as they are.
		if cutSet.Len() > whole.Len() {
			t.Fatalf("the cut file has %d tokens, the whole %d", cutSet.Len(), whole.Len())
		}
		for i, tok := range cutSet.tokens {
			w := whole.tokens[i]
			if tok.Name != w.Name || tok.sum != w.sum || !slices.Equal(tok.Patterns, w.Patterns) {
				t.Fatalf("the cut file's token %q sees %q; the whole file's %q sees %q", tok.Name, tok.Patterns, w.Name, w.Patterns)
			}
		}
	})
}

// checkTokens checks what every parsed token must be.
func checkTokens(t *testing.T, s *Set) {
	t.Helper()
	if s == nil {
		return
	}
	for _, tok := range s.tokens {
		if len(tok.Patterns) == 0 {
			t.Fatalf("token %q has no pattern", tok.Name)
		}
		if !slices.IsSorted(tok.Patterns) {
			t.Fatalf("token %q: patterns %q not sorted", tok.Name, tok.Patterns)
		}
		if tok.Scoped() == slices.Contains(tok.Patterns, everyItem) {
			t.Fatalf("token %q with patterns %q: Scoped() %v", tok.Name, tok.Patterns, tok.Scoped())
		}
		if !tok.Scoped() && !tok.Allows("any-name") {
			t.Fatalf("token %q sees every item but not any-name", tok.Name)
		}
	}
}

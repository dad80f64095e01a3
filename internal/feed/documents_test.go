package feed

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/skillserver/skillserver/internal/item"
)

// absoluteKeys lists every base-dependent document of snap.
func absoluteKeys(snap *Feed) []DocKey {
	keys := []DocKey{{Kind: DocRFCIndex}, {Kind: DocAgentCard}}
	for _, sk := range snap.Skills {
		keys = append(keys, DocKey{Kind: DocScopedIndex, Name: sk.Name},
			DocKey{Kind: DocAPISkillVersion, Name: sk.Name, Version: item.LatestAlias})
		for _, v := range sk.Versions {
			keys = append(keys, DocKey{Kind: DocSkillVersion, Name: sk.Name, Version: v.Version},
				DocKey{Kind: DocAPISkillVersion, Name: sk.Name, Version: v.Version},
				DocKey{Kind: DocAPISkillResources, Name: sk.Name, Version: v.Version})
		}
	}
	for _, a := range snap.Agents {
		for _, v := range a.Versions {
			keys = append(keys, DocKey{Kind: DocSubagentVersion, Name: a.Name, Version: v.Version},
				DocKey{Kind: DocAPISubagentVersion, Name: a.Name, Version: v.Version})
		}
	}
	return keys
}

// TestSplicedDocumentsEqualRenderedOnes: a document made from the
// snapshot's template is byte for byte the document rendered for that
// base, for every base-dependent document, known base or not, including
// bases that JSON must escape.
func TestSplicedDocumentsEqualRenderedOnes(t *testing.T) {
	snap := scanTree(t, Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	keys := absoluteKeys(snap)
	if len(keys) < 20 {
		t.Fatalf("only %d documents to compare", len(keys))
	}
	for _, base := range []string{"https://skills.example.com", "http://127.0.0.1:8080", "http://[::1]:9", `https://h.test/a "quoted" \ prefix/é` + "\u2028"} {
		for _, known := range []bool{false, true} {
			for _, key := range keys {
				v, ok := snap.render(base, key)
				if !ok {
					t.Fatalf("%+v: no document", key)
				}
				want := encodeDocument(v)
				got, ok := snap.Document(Base{URL: base, Known: known}, key)
				if !ok || !bytes.Equal(got.Body, want.Body) || got.Digest != want.Digest {
					t.Fatalf("base %q known %v, %+v: spliced bytes differ from rendered ones:\n%s\nwant\n%s", base, known, key, got.Body, want.Body)
				}
			}
		}
	}
}

// TestDocumentsRenderOncePerSnapshot: however many bases ask, and in
// whatever order, each document is encoded once per snapshot; a base's
// bytes are spliced from that.
func TestDocumentsRenderOncePerSnapshot(t *testing.T) {
	snap := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	index := DocKey{Kind: DocRFCIndex}
	for i := range 50 {
		if _, ok := snap.Document(Base{URL: fmt.Sprintf("http://junk-%d.test", i)}, index); !ok {
			t.Fatal("no index")
		}
	}
	for range 3 {
		snap.Document(Base{URL: "https://skills.example.com", Known: true}, index)
		snap.Document(Base{URL: "http://legit.test"}, index)
		snap.Document(Base{}, DocKey{Kind: DocManifest})
	}
	if n := snap.docs.renders.Load(); n != 2 {
		t.Errorf("%d renders for one index and one manifest, want 2", n)
	}
	if _, ok := snap.Document(Base{URL: "http://legit.test"}, DocKey{Kind: DocScopedIndex, Name: "no-such-skill"}); ok {
		t.Error("a document for a skill that does not exist")
	}
	if len(snap.docs.templates) != 1 {
		t.Errorf("%d templates kept; a miss must not keep one", len(snap.docs.templates))
	}
}

// TestSharedDocumentCacheIsBounded: documents for bases nobody
// configured stay within the shared cache's bytes, compressed forms
// included, and the most recently used stay.
func TestSharedDocumentCacheIsBounded(t *testing.T) {
	snap := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	index := DocKey{Kind: DocRFCIndex}
	one, _ := snap.Document(Base{URL: "http://a.test"}, index)
	const max = 20_000
	snap.docs.shared = NewSharedCache(max)
	regular := Base{URL: "http://regular.test"}
	for i := range 200 {
		snap.Document(Base{URL: fmt.Sprintf("http://junk-%d.test", i)}, index)
		if d, _ := snap.Document(regular, index); i > 0 {
			d.Gzip()
		}
		if n := snap.docs.shared.size(); n > max {
			t.Fatalf("after %d bases the cache holds %d bytes, bound %d", i+2, n, max)
		}
	}
	if len(one.Body)*3 > max {
		t.Fatalf("the index (%d bytes) is too large for this test's bound", len(one.Body))
	}
	before := snap.docs.shared.size()
	d, _ := snap.Document(regular, index)
	if _, _, ok := d.Gzip(); !ok || snap.docs.shared.size() != before {
		t.Error("the regular base's document, compressed, was not still cached")
	}
}

package feed

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
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

// TestDocumentCacheKeepsOneDocument: a document is the same *Document
// for the same key and base, whether the base is known (kept for the
// snapshot) or not (in the shared cache), and for any base when it does
// not depend on one; what a miss asks for is not kept.
func TestDocumentCacheKeepsOneDocument(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	index := DocKey{Kind: DocRFCIndex}
	for _, base := range []Base{{URL: "https://known.test", Known: true}, {URL: "http://unknown.test"}} {
		a, ok1 := f.Document(base, index)
		b, ok2 := f.Document(base, index)
		if !ok1 || !ok2 || a != b {
			t.Errorf("base %+v: two documents for one key", base)
		}
		if !bytes.Contains(a.Body, []byte(`"url": "`+base.URL+`/api/v1/blobs/sha256/`)) {
			t.Errorf("base %+v: the index's URLs are not under it", base)
		}
	}
	known, _ := f.Document(Base{URL: "https://known.test", Known: true}, index)
	other, _ := f.Document(Base{URL: "https://other.test", Known: true}, index)
	if known == other || bytes.Equal(known.Body, other.Body) {
		t.Error("two bases share an index")
	}
	m1, _ := f.Document(Base{}, DocKey{Kind: DocManifest})
	m2, _ := f.Document(Base{URL: "http://unknown.test"}, DocKey{Kind: DocManifest})
	m3, _ := f.Document(Base{URL: "https://known.test", Known: true}, DocKey{Kind: DocManifest})
	if m1 != m2 || m1 != m3 {
		t.Error("a document that depends on no base is not one document for every base")
	}
	plain, templates := len(f.docs.plain), len(f.docs.templates)
	// Kinds outside the table, as a DocKey made by hand may hold, are no
	// document (they indexed past the table and panicked).
	for _, k := range []DocKey{{Kind: 0}, {Kind: -1}, {Kind: docKinds}, {Kind: docKinds + 7}} {
		if k.Path() != "" || k.Kind.Patterns() != nil || k.Kind.Retainable() {
			t.Errorf("%+v: a path, patterns or retention for a kind outside the table", k)
		}
	}
	for _, k := range []DocKey{{Kind: 0}, {Kind: -1}, {Kind: docKinds}, {Kind: docKinds + 7}, {Kind: DocSkill, Name: "nope"}, {Kind: DocSkillVersion, Name: "code-review", Version: "9.9.9"},
		{Kind: DocSubagentIndex}, {Kind: DocSkillPage, Page: "2"}} {
		if d, ok := f.Document(Base{URL: "http://unknown.test"}, k); ok || d != nil {
			t.Errorf("%+v: a document where there is none", k)
		}
	}
	if len(f.docs.plain) != plain || len(f.docs.templates) != templates {
		t.Errorf("misses kept entries: plain %d -> %d, templates %d -> %d", plain, len(f.docs.plain), templates, len(f.docs.templates))
	}
}

// TestBaseIsSplicedAsJSON: a base holding what JSON escapes (quotes,
// backslashes, non-ASCII, U+2028) and what HTML would (which the
// documents do not) is, decoded, exactly the start of every absolute URL.
func TestBaseIsSplicedAsJSON(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"})
	base := `https://h.test/a "q" \ <&> é` + "\u2028"
	for _, tt := range []struct {
		base  string
		known bool
	}{{base, false}, {base, true}, {`http://h.test/"q"`, false}, {`http://h.test/"q"`, true}} {
		base, known := tt.base, tt.known
		d, ok := f.Document(Base{URL: base, Known: known}, DocKey{Kind: DocRFCIndex})
		var idx rfcIndex
		if err := json.Unmarshal(d.Body, &idx); !ok || err != nil {
			t.Fatalf("base %q known %v: %v", base, known, err)
		}
		var urls []string
		for _, e := range idx.Skills {
			urls = append(urls, e.URL)
			for _, r := range e.Resources {
				urls = append(urls, r.URL)
			}
		}
		for _, u := range urls {
			if !strings.HasPrefix(u, base+"/api/v1/blobs/sha256/") {
				t.Errorf("known %v: url %q does not start with the base %q", known, u, base)
			}
		}
		if len(urls) < 8 {
			t.Errorf("only %d URLs", len(urls))
		}
	}
	d, _ := f.Document(Base{URL: base}, DocKey{Kind: DocSubagentVersion, Name: "changelog-reviewer", Version: "1.0.0"})
	if !bytes.Contains(d.Body, []byte(`"url": "https://h.test/a \"q\" \\ <&> é\u2028/api/v1/blobs/sha256/`)) {
		t.Errorf("the base is not JSON-escaped, and only that, in\n%s", d.Body)
	}
	card, _ := f.Document(Base{URL: base}, DocKey{Kind: DocAgentCard})
	if u := decode(t, card)["url"]; u != base+"/" {
		t.Errorf("the agent card's url is %q", u)
	}
}

// TestSharedCacheGzipsOnTheSecondRequest: a document spliced for a base
// nobody configured is first served uncompressed; once the shared cache
// gives it again, it has a gzip form whose bytes are the document's. A
// known base's document has one at once.
func TestSharedCacheGzipsOnTheSecondRequest(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	index := DocKey{Kind: DocRFCIndex}
	first, _ := f.Document(Base{URL: "http://new.test"}, index)
	if len(first.Body) < minGzip {
		t.Fatalf("the index (%d bytes) is too small to compress", len(first.Body))
	}
	if _, _, ok := first.Gzip(); ok {
		t.Error("a document spliced for a request was compressed")
	}
	again, _ := f.Document(Base{URL: "http://new.test"}, index)
	known, _ := f.Document(Base{URL: "https://known.test", Known: true}, index)
	for name, d := range map[string]*Document{"shared": again, "known": known} {
		body, digest, ok := d.Gzip()
		if !ok || digest != content.Sum(body) {
			t.Errorf("%s: no gzip form, or its digest is not of its bytes", name)
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, d.Body) {
			t.Errorf("%s: the gzip form does not hold the document (%v)", name, err)
		}
	}
}

// TestGenerationsShareTheCacheApart: two snapshots' feeds share one
// cache and never each other's documents; releasing one drops its
// documents only.
func TestGenerationsShareTheCacheApart(t *testing.T) {
	shared := NewSharedCache(testCacheBytes)
	feedAt := func(gen uint64, names ...string) *Feed {
		var skills []*item.Skill
		for _, n := range names {
			skills = append(skills, item.New(n, []*item.SkillVersion{skillVersion(n, "1.0.0")}))
		}
		return New(Input{Generation: gen, Source: itemSource{skills: skills}, Skills: skills, Shared: shared})
	}
	a, b := feedAt(1, "alpha"), feedAt(2, "beta")
	base, index := Base{URL: "http://h.test"}, DocKey{Kind: DocRFCIndex}
	da, _ := a.Document(base, index)
	db, _ := b.Document(base, index)
	if !bytes.Contains(da.Body, []byte(`"alpha"`)) || !bytes.Contains(db.Body, []byte(`"beta"`)) || bytes.Contains(db.Body, []byte(`"alpha"`)) {
		t.Fatalf("the feeds' indexes:\n%s\n%s", da.Body, db.Body)
	}
	both := shared.size()
	a.Release()
	if n := shared.size(); n <= 0 || n >= both {
		t.Errorf("after releasing one feed the cache holds %d bytes of %d", n, both)
	}
	if again, _ := b.Document(base, index); again != db {
		t.Error("releasing one feed dropped the other's document")
	}
	if again, _ := a.Document(base, index); again == da || !bytes.Equal(again.Body, da.Body) {
		t.Error("a released feed's document was still cached, or came back different")
	}
}

// TestTwoScansRenderTheSameDocuments: the feeds of two scans of one tree
// render every document byte for byte alike.
func TestTwoScansRenderTheSameDocuments(t *testing.T) {
	tree := Tree{SkillsDir: "../../testdata/skills", AgentsDir: "../../testdata/agents"}
	a, b := scanTree(t, tree), scanTree(t, tree)
	keys := append(a.StaticKeys(), absoluteKeys(a)...)
	for _, k := range keys {
		da, _ := a.Document(Base{URL: "https://x.test"}, k)
		db, ok := b.Document(Base{URL: "https://x.test"}, k)
		if !ok || !bytes.Equal(da.Body, db.Body) {
			t.Errorf("%+v: two scans of one tree rendered different documents", k)
		}
	}
}

// The agent card's version is always semver, as agent registries require:
// a release's without its "v", else 0.0.0-dev.
func TestAgentCardVersionIsSemver(t *testing.T) {
	for in, want := range map[string]string{"": "0.0.0-dev", "dev": "0.0.0-dev", "v0.2.0": "0.2.0", "v0.2.0-dev-abc1234": "0.2.0-dev-abc1234"} {
		f := New(Input{Generation: 1, Source: itemSource{}, Server: ServerInfo{Name: "s", Version: in}, Shared: NewSharedCache(testCacheBytes)})
		if got := f.agentCard("https://x").Version; got != want {
			t.Errorf("build %q: card version %q, want %q", in, got, want)
		}
	}
}

package feed

import (
	"testing"

	"github.com/skillserver/skillserver/internal/content"
)

// TestDocKeyPathsRoundTrip: the path of every document key, matched
// against its kinds' patterns as the router does, gives the key back,
// for values that need escaping too; and an artifact's path keeps the
// file's name as its last segments.
func TestDocKeyPathsRoundTrip(t *testing.T) {
	n := 0
	for _, kind := range Kinds() {
		for _, name := range []string{"a-b", "x y"} {
			key := DocKey{Kind: kind}
			for _, p := range Params(kind.Patterns()[0]) {
				switch p {
				case "name":
					key.Name = name
				case "version":
					key.Version = "1.0.0+build.1"
				case "page":
					key.Page = "2"
				}
			}
			got, ok := keyAt(t, key.Path())
			if !ok || got != key {
				t.Errorf("%s is %+v, want %+v", key.Path(), got, key)
			}
			n++
		}
	}
	if n != 2*(int(docKinds)-1) {
		t.Errorf("%d keys tried", n)
	}
	if got := (DocKey{Kind: DocSkillVersion, Name: "x y", Version: "1.0.0+b"}).Path(); got != "/skills/v1/x%20y/versions/1.0.0+b.json" {
		t.Errorf("path %s", got)
	}
	d := content.Sum([]byte("x"))
	if got, want := ArtifactPath(d, "refs/a b#1.md"), "/api/v1/blobs/sha256/"+d.Hex()+"/refs/a%20b%231.md"; got != want {
		t.Errorf("ArtifactPath = %s, want %s", got, want)
	}
	if got := ScopedFeedHref("code-review"); got != "/skill/code-review" {
		t.Errorf("ScopedFeedHref = %s", got)
	}
}

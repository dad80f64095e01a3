package item

import (
	"fmt"
	"testing"
)

// Version finds every version by name and none other, whether the item
// looks through its versions (a few) or keeps a map of them (many);
// Resource finds every resource by path and none other.
func TestLookups(t *testing.T) {
	for _, n := range []int{1, versionsScanned, versionsScanned + 1, 40} {
		var vs []*SkillVersion
		for i := range n {
			vs = append(vs, &SkillVersion{VersionInfo: VersionInfo{Name: "s", Version: fmt.Sprintf("1.%d.0", i)}})
		}
		it := New("s", vs)
		for i := range n {
			want := fmt.Sprintf("1.%d.0", i)
			if v, ok := it.Version(want); !ok || v.Version != want {
				t.Errorf("%d versions: Version(%s) = %v %v", n, want, v, ok)
			}
		}
		if v, ok := it.Version("9.9.9"); ok || v != nil {
			t.Errorf("%d versions: Version of an absent one = %v %v", n, v, ok)
		}
	}
	v := &SkillVersion{Resources: []Resource{{Path: "a/b.md"}, {Path: "a/c.md"}, {Path: "scripts/run.sh"}}}
	for i, r := range v.Resources {
		if got, ok := v.Resource(r.Path); !ok || got != &v.Resources[i] {
			t.Errorf("Resource(%s) = %v %v", r.Path, got, ok)
		}
	}
	for _, p := range []string{"", "a", "a/b", "b.md", "scripts/run.shx"} {
		if got, ok := v.Resource(p); ok {
			t.Errorf("Resource(%q) = %v, want none", p, got)
		}
	}
}

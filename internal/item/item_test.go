package item

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/skillserver/skillserver/internal/skill"
)

// TestPackStrings: every string keeps its value and they end up one
// after another in one allocation, a skill's resource paths included.
func TestPackStrings(t *testing.T) {
	v := &SkillVersion{VersionInfo: VersionInfo{Version: "1.0.0", Description: strings.Repeat("d", 150), Path: "demo",
		Metadata: skill.Meta{{Key: "author", Value: "me"}, {Key: "tags", List: []string{"a", "b"}}}},
		Resources: []Resource{{Path: "refs/one.md"}, {Path: "scripts/run.sh"}}}
	refs := v.AppendStrings(nil)
	want := make([]string, len(refs))
	for i, r := range refs {
		want[i] = strings.Clone(*r)
	}
	PackStrings(refs)
	for i, r := range refs {
		if *r != want[i] {
			t.Errorf("string %d is %q after packing, want %q", i, *r, want[i])
		}
		if i > 0 {
			prev := unsafe.StringData(*refs[i-1])
			if next := unsafe.Add(unsafe.Pointer(prev), len(*refs[i-1])); len(*r) > 0 && next != unsafe.Pointer(unsafe.StringData(*r)) {
				t.Errorf("string %d (%q) does not follow string %d in the block", i, *r, i-1)
			}
		}
	}
	if len(refs) != 3+2+2+2+2 {
		t.Errorf("%d strings, want version, description, path, 2 metadata keys and their 2 values, 2 list items, 2 resource paths", len(refs))
	}
}

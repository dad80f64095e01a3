package feed

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestPagination(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		writeFile(t, filepath.Join(root, n, "SKILL.md"), skillMD(n), 0o644)
	}
	tests := []struct {
		size  int
		pages string
	}{
		{0, "all"}, {5, "all"}, {100, "all"}, {2, "1,2,3"}, {4, "1,2"}, {1, "1,2,3,4,5"},
	}
	for _, tt := range tests {
		snap := scanTree(t, Tree{SkillsDir: root, PageSize: tt.size})
		idx := snap.tree(false).index(snap.pageSize)
		var names []string
		total := 0
		for _, p := range idx.Pages {
			name := strings.TrimSuffix(strings.TrimPrefix(p.Href, "/skills/v1/pages/"), ".json")
			names = append(names, name)
			page, ok := snap.tree(false).page(snap.pageSize, name)
			if !ok || page.Range != p.Range {
				t.Fatalf("size %d: page %s missing or range %q != %q", tt.size, name, page.Range, p.Range)
			}
			if tt.size > 0 && len(page.Items) > tt.size {
				t.Errorf("size %d: page %s holds %d items", tt.size, name, len(page.Items))
			}
			total += len(page.Items)
		}
		if got := strings.Join(names, ","); got != tt.pages || total != 5 {
			t.Errorf("size %d: pages %s holding %d items, want %s holding 5", tt.size, got, total, tt.pages)
		}
	}
}

package catalog

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
)

func TestVersionOrder(t *testing.T) {
	tests := []struct {
		name   string
		in     []string
		sorted string // newest first
		latest string
	}{
		{"semver not string", []string{"1.9.0", "1.10.0", "1.2.0"}, "1.10.0,1.9.0,1.2.0", "1.10.0"},
		{"prerelease below release", []string{"2.0.0-rc.1", "1.0.0"}, "2.0.0-rc.1,1.0.0", "1.0.0"},
		{"prerelease latest when alone", []string{"2.0.0-rc.1", "2.0.0-beta.2"}, "2.0.0-rc.1,2.0.0-beta.2", "2.0.0-rc.1"},
		{"leading v tolerated", []string{"v1.2.0", "1.10.0"}, "1.10.0,v1.2.0", "1.10.0"},
		{"non-semver below semver", []string{"banana", "0.0.1", "apple"}, "0.0.1,banana,apple", "0.0.1"},
		{"only non-semver", []string{"banana", "apple"}, "banana,apple", "banana"},
		{"equal precedence by string", []string{"1.0.0", "v1.0.0"}, "v1.0.0,1.0.0", "v1.0.0"},
		{"build metadata", []string{"0.0.0+aaaaaaaaaaaa", "0.0.0+bbbbbbbbbbbb"}, "0.0.0+bbbbbbbbbbbb,0.0.0+aaaaaaaaaaaa", "0.0.0+bbbbbbbbbbbb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vs []*SkillVersion
			for _, v := range slices.Clone(tt.in) {
				vs = append(vs, &SkillVersion{Version: v})
			}
			sk := newSkill("x", vs)
			var got []string
			for _, v := range sk.Versions {
				got = append(got, v.Version)
			}
			if g := strings.Join(got, ","); g != tt.sorted {
				t.Errorf("order = %s, want %s", g, tt.sorted)
			}
			if sk.Latest.Version != tt.latest {
				t.Errorf("latest = %s, want %s", sk.Latest.Version, tt.latest)
			}
		})
	}
}

// TestCheckUpdateAcrossEdits: a skill without a declared version gets
// 0.0.0+<digest prefix>, so successive edits tie under semver. A client
// holding any earlier edit has an update, whatever the hex says, and one
// holding the latest has none. A declared version edited in place is
// reported when the client says what digest it holds.
func TestCheckUpdateAcrossEdits(t *testing.T) {
	root := t.TempDir()
	c := newTestCatalog(t, Source{SkillsDir: root}, Options{})
	var held []UpdateCheck // what a client that installed each edit holds
	for i := range 6 {
		writeFile(t, filepath.Join(root, "plain", "SKILL.md"), skillMD("plain")+fmt.Sprintf("Edit %d.\n", i), 0o644)
		snap, err := c.Reload(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for j, h := range held {
			if got := snap.CheckUpdate("plain", h.LatestVersion, ""); !got.HasUpdate {
				t.Errorf("edit %d: a client on edit %d (%s) is told there is no update to %s", i, j, h.LatestVersion, got.LatestVersion)
			}
			if got := snap.CheckUpdate("plain", h.LatestVersion, content.Digest(h.LatestDigest)); !got.HasUpdate {
				t.Errorf("edit %d: a client on edit %d, digest given, is told there is no update", i, j)
			}
		}
		now := snap.CheckUpdate("plain", "", "")
		if got := snap.CheckUpdate("plain", now.LatestVersion, ""); got.HasUpdate {
			t.Errorf("edit %d: a client on the latest (%s) is told to update", i, now.LatestVersion)
		}
		held = append(held, now)
	}

	writeFile(t, filepath.Join(root, "pinned", "SKILL.md"), "---\nname: pinned\ndescription: d\nversion: 1.0.0\n---\nOne.\n", 0o644)
	snap, err := c.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	before := snap.CheckUpdate("pinned", "1.0.0", "")
	writeFile(t, filepath.Join(root, "pinned", "SKILL.md"), "---\nname: pinned\ndescription: d\nversion: 1.0.0\n---\nTwo.\n", 0o644)
	if snap, err = c.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		version string
		digest  content.Digest
		want    bool
	}{
		{"in-place edit, old digest given", "1.0.0", content.Digest(before.LatestDigest), true},
		{"in-place edit, current digest given", "1.0.0", content.Digest(snap.CheckUpdate("pinned", "", "").LatestDigest), false},
		{"no digest: the version is the latest", "1.0.0", "", false},
		{"equal precedence, other spelling", "v1.0.0", "", false},
		{"equal precedence, short spelling", "1.0", "", false},
		{"equal precedence, other build metadata", "1.0.0+old", "", true},
		{"equal precedence, other spelling, same bytes", "v1.0.0", content.Digest(snap.CheckUpdate("pinned", "", "").LatestDigest), false},
		{"older", "0.9.0", "", true},
		{"newer, digest differs", "1.1.0", content.Digest(before.LatestDigest), false},
	}
	for _, tt := range tests {
		if got := snap.CheckUpdate("pinned", tt.version, tt.digest); got.HasUpdate != tt.want {
			t.Errorf("%s: hasUpdate %v, want %v", tt.name, got.HasUpdate, tt.want)
		}
	}
}

package item

import (
	"slices"
	"strings"
	"testing"
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
				vs = append(vs, &SkillVersion{VersionInfo: VersionInfo{Version: v}})
			}
			sk := New("x", vs)
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

func TestSemver(t *testing.T) {
	for in, want := range map[string]string{"v0.2.0": "0.2.0", "1.2.3-test": "1.2.3-test", "v0.2.0-dev-abc1234": "0.2.0-dev-abc1234",
		"v0.2.0-dev-abc1234-dirty": "0.2.0-dev-abc1234-dirty", "dev": DevSemver, "": DevSemver, "(devel)": DevSemver, "1.2": DevSemver,
		"v0.0.0-20261203101010-abcdefabcdef": "0.0.0-20261203101010-abcdefabcdef", "1.0.0+build.1": "1.0.0+build.1"} {
		if got := Semver(in); got != want {
			t.Errorf("Semver(%q) = %q, want %q", in, got, want)
		}
	}
}

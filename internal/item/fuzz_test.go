package item

import (
	"slices"
	"strings"
	"testing"
)

func sign(n int) int { return min(max(n, -1), 1) }

// FuzzVersionOrder: the version order is a total order (antisymmetric,
// transitive, equal only for equal strings), so every replica and every
// reload sorts an item's versions alike and picks the same latest; and
// strings of equal semver precedence always share a versionIdentity, so
// the scan refuses them side by side.
func FuzzVersionOrder(f *testing.F) {
	for _, s := range [][3]string{
		{"1.0.0", "v1.0.0", "1.0"},
		{"1.0.0+build", "1.0.0-rc.1", "2"},
		{"banana", "0.0.1", "1.10"},
		{"1.0.0-RC1", "1.0.0-rc1", "1.0.0-rc.01"},
		{"", "v", "0.0.0+abc"},
		{"18446744073709551616.0.0", "1.0.0-18446744073709551616", "1.0.0-x.1"},
		{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta"},
		{"1.0.0-beta.11", "1.0.0-beta.2", "1.0.0-rc.1"},
		{"01.02.03", "1.2.3", "v01.2.3+x"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ka, kb, kc := parseVersionKey(a), parseVersionKey(b), parseVersionKey(c)
		ab, ba := compareVersions(ka, kb), compareVersions(kb, ka)
		if sign(ab) != -sign(ba) {
			t.Fatalf("not antisymmetric: cmp(%q, %q) = %d, cmp(%q, %q) = %d", a, b, ab, b, a, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("not total: cmp(%q, %q) = %d", a, b, ab)
		}
		bc, ac := compareVersions(kb, kc), compareVersions(ka, kc)
		if ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q but cmp(%q, %q) = %d", a, b, c, a, c, ac)
		}
		if ka.sv != nil && kb.sv != nil && ka.sv.Compare(kb.sv) == 0 && versionIdentity(a) != versionIdentity(b) {
			t.Fatalf("%q and %q have equal precedence but identities %q and %q", a, b, versionIdentity(a), versionIdentity(b))
		}
		// Any input order gives the same order and the same latest.
		vs := []string{a, b, c}
		slices.Sort(vs)
		vs = slices.Compact(vs)
		order := func(in []string) (string, string) {
			items := make([]*AgentVersion, len(in))
			for i, v := range in {
				items[i] = &AgentVersion{VersionInfo: VersionInfo{Version: v}}
			}
			latest := OrderVersions(items, func(v *AgentVersion) string { return v.Version })
			var out []string
			for _, v := range items {
				out = append(out, v.Version)
			}
			return strings.Join(out, "\x00"), latest.Version
		}
		want, wantLatest := order(vs)
		slices.Reverse(vs)
		if got, latest := order(vs); got != want || latest != wantLatest {
			t.Fatalf("order depends on input order: %q (latest %q) vs %q (latest %q)", got, latest, want, wantLatest)
		}
	})
}

package catalog

import (
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// versionKey is a parsed version string, ready to compare.
type versionKey struct {
	raw string
	sv  *semver.Version // nil when raw is not semver
}

func parseVersionKey(raw string) versionKey {
	// NewVersion tolerates a leading "v" and short forms such as "1.10",
	// which users expect to sort above "1.9". Two strings of equal
	// precedence ("1.0" and "1.0.0") are told apart by compareVersions.
	sv, err := semver.NewVersion(raw)
	if err != nil {
		return versionKey{raw: raw}
	}
	return versionKey{raw: raw, sv: sv}
}

// compareVersions orders by semver precedence; strings that are not semver
// sort below all that are, then by string. Equal precedence (1.0.0 and
// v1.0.0, or build metadata only) falls back to the string, so the order is
// total and deterministic.
func compareVersions(a, b versionKey) int {
	if c := comparePrecedence(a, b); c != 0 {
		return c
	}
	return strings.Compare(a.raw, b.raw)
}

// comparePrecedence orders by semver precedence alone, build metadata
// ignored; strings that are not semver sort below all that are, and only
// an equal string ties with one.
func comparePrecedence(a, b versionKey) int {
	switch {
	case a.sv != nil && b.sv != nil:
		return a.sv.Compare(b.sv)
	case a.sv != nil:
		return 1
	case b.sv != nil:
		return -1
	}
	return strings.Compare(a.raw, b.raw)
}

// isRelease reports whether k counts as a release for the `latest` rule:
// a semver without prerelease. When a skill has no release at all, its
// highest version is latest.
func (k versionKey) isRelease() bool {
	return k.sv != nil && k.sv.Prerelease() == ""
}

// orderVersions sorts vs newest first in place and returns the latest: the
// highest release, else the highest version.
func orderVersions[T any](vs []T, version func(T) string) T {
	keys := make(map[string]versionKey, len(vs))
	for _, v := range vs {
		keys[version(v)] = parseVersionKey(version(v))
	}
	byVersion := func(v T) versionKey { return keys[version(v)] }
	slices.SortFunc(vs, func(a, b T) int { return compareVersions(byVersion(b), byVersion(a)) })
	for _, v := range vs {
		if byVersion(v).isRelease() {
			return v
		}
	}
	return vs[0]
}

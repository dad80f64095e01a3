package item

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
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

// OrderVersions sorts vs newest first in place and returns the latest: the
// highest release, else the highest version.
func OrderVersions[T any](vs []T, version func(T) string) T {
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

// versionIdentity is what two versions of one item must not share:
// semver precedence (so 1.0.0, v1.0.0, 1.0 and 1.0.0+build are one
// version), compared without letter case (1.0.0-RC1 and 1.0.0-rc1, which
// a case-insensitive filesystem cannot hold side by side). A string that
// is not semver is its own identity, folded.
func versionIdentity(raw string) string {
	k := parseVersionKey(raw)
	if k.sv == nil {
		return FoldName(raw)
	}
	id := fmt.Sprintf("%d.%d.%d", k.sv.Major(), k.sv.Minor(), k.sv.Patch())
	if pre := k.sv.Prerelease(); pre != "" {
		id += "-" + pre
	}
	return FoldName(id)
}

// SameVersions returns, for each of vs (distinct strings, in order) that
// has the identity of another, the first other one with that identity.
func SameVersions(vs []string) map[string]string {
	if len(vs) < 2 {
		return nil
	}
	groups := make(map[string][]string, len(vs))
	for _, v := range vs {
		id := versionIdentity(v)
		groups[id] = append(groups[id], v)
	}
	var out map[string]string
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[g[0]] = g[1]
		for _, v := range g[1:] {
			out[v] = g[0]
		}
	}
	return out
}

func SameVersionProblem(report, version, other string) skill.Problem {
	return skill.Errorf(report, skill.RuleVersion, "version %q is the same version as %q (equal semver precedence, or differing only in letter case); clients cannot tell them apart; keep one", version, other)
}

// FoldName is the form in which two names collide on a client's
// filesystem: canonical caseless matching (Unicode's NFD, full case
// folding, NFD again), so "café" composed and decomposed, "straße" and
// "STRASSE", and "Notes" and "notes" are each one name, as they are on
// macOS and Windows. All-ASCII names, nearly all of them, fold by
// lowercasing.
func FoldName(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return norm.NFD.String(cases.Fold().String(norm.NFD.String(name)))
		}
	}
	return strings.ToLower(name)
}

// IsUpdate reports whether latest (with digest latestDigest) is an update
// for a client holding version current (with digest, "" when unknown).
// Semver precedence decides first; where it ties, the digest decides when
// the client gave one, else the version string.
func IsUpdate(latest string, latestDigest content.Digest, current string, digest content.Digest) bool {
	lk, ck := parseVersionKey(latest), parseVersionKey(current)
	switch cmp := comparePrecedence(lk, ck); {
	case cmp != 0:
		return cmp > 0
	case digest != "":
		return digest != latestDigest
	case lk.sv != nil && ck.sv != nil:
		// Spellings of one version (1.0, v1.0.0) are not an update;
		// build metadata is what tells undeclared versions
		// (0.0.0+<digest prefix>) apart, so a different one is.
		return lk.sv.Metadata() != ck.sv.Metadata()
	default:
		return current != latest
	}
}

// DevSemver is the semver of a build that has no version of its own.
const DevSemver = "0.0.0-dev"

// Semver is v as a semver 2.0.0 string, as agent registries require of a
// card's version: without a leading "v" when the rest is strict semver
// ("v0.2.0" is "0.2.0", "0.2.0-dev-abc1234" stays), else DevSemver
// ("dev", "(devel)", "").
func Semver(v string) string {
	s := strings.TrimPrefix(v, "v")
	if _, err := semver.StrictNewVersion(s); err != nil {
		return DevSemver
	}
	return s
}

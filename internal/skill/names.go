package skill

import (
	"regexp"
	"unicode/utf16"
)

// MaxNameLen is the longest allowed skill or agent name.
const MaxNameLen = 64

// MaxVersionLen is the longest allowed version string.
const MaxVersionLen = 64

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	versionRE = regexp.MustCompile(`^[A-Za-z0-9.+-]+$`)
)

// ValidName reports whether s is a publishable skill or agent name.
func ValidName(s string) bool {
	return len(s) >= 1 && len(s) <= MaxNameLen && nameRE.MatchString(s)
}

// ValidVersion reports whether s is a publishable version string.
func ValidVersion(s string) bool {
	return len(s) >= 1 && len(s) <= MaxVersionLen && versionRE.MatchString(s)
}

// TextLen counts s the way JavaScript's String.length does (UTF-16 code
// units). The `skills` CLI applies its 1024 limit that way, which is never
// less than the rune count, so checking it keeps every client satisfied.
func TextLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

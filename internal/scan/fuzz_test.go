package scan

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// FuzzResourcePath: a path skill.ValidResourcePath accepts is a clean relative
// file path that stays inside the version folder wherever a client
// unpacks it, with no backslash, "..", control character or invalid
// UTF-8; and the collision form of a name does not depend on how its
// accents are encoded, or on ASCII letter case.
func FuzzResourcePath(f *testing.F) {
	for _, p := range []string{
		"SKILL.md", "references/guide.md", "a-b.md", "../x", "a/../b", "notes..md", "a\\b", "/abs",
		"a//b", "./a", "a/", "", ".", "caf\u00e9.md", "cafe\u0301.md", "stra\u00dfe.md", "STRASSE.md",
		"\x00", "a\x7fb", "\xff", "\u212a.md", "\u2028", "\ufffd", "C:/x", "a:b", "..", "...",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if skill.ValidResourcePath(p) {
			switch {
			case !fs.ValidPath(p), p == ".", path.IsAbs(p), path.Clean(p) != p, !filepath.IsLocal(p):
				t.Fatalf("accepted %q, which is not a clean local path", p)
			case strings.Contains(p, ".."), strings.ContainsRune(p, '\\'), !utf8.ValidString(p):
				t.Fatalf("accepted %q, which clients refuse", p)
			case !strings.HasPrefix(path.Join("version", p), "version/"):
				t.Fatalf("accepted %q, which escapes the version folder", p)
			}
			for _, r := range p {
				if r < 0x20 || r == 0x7f || r == utf8.RuneError {
					t.Fatalf("accepted %q, which holds %U", p, r)
				}
			}
		}
		if utf8.ValidString(p) && item.FoldName(norm.NFC.String(p)) != item.FoldName(norm.NFD.String(p)) {
			t.Fatalf("item.FoldName of %q differs between NFC and NFD", p)
		}
		if ascii := strings.ToValidUTF8(p, ""); isASCII(ascii) && item.FoldName(strings.ToUpper(ascii)) != item.FoldName(strings.ToLower(ascii)) {
			t.Fatalf("item.FoldName of %q depends on letter case", ascii)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

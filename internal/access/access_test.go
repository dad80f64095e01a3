package access

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	sum := sha256.Sum256([]byte("hashed-secret-0123456789"))
	file := "# tokens\n\nci  ci-secret-0123456789 *\nteam-a\tteam-a-secret-012345 team-a-* shared\nhashed " + "sha256:" + hex.EncodeToString(sum[:]) + " x-* * y\r\n"
	s, err := Parse(strings.NewReader(file), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Fatalf("%d tokens, want 3", s.Len())
	}
	for _, tc := range []struct {
		secret, name string
		allows       map[string]bool
	}{
		{"ci-secret-0123456789", "ci", map[string]bool{"anything": true}},
		{"team-a-secret-012345", "team-a", map[string]bool{"team-a-x": true, "shared": true, "team-b-x": false, "sharedx": false}},
		{"hashed-secret-0123456789", "hashed", map[string]bool{"x": true, ".hidden": true}},
	} {
		tok, ok := s.Lookup(tc.secret)
		if !ok || tok.Name != tc.name {
			t.Fatalf("Lookup(%s) = %v, %v; want %s", tc.name, tok, ok, tc.name)
		}
		// "*" is every item: the unscoped view, whatever else the line lists.
		if every := tc.name != "team-a"; tok.Scoped() == every || (tok.Scope() == "") != every {
			t.Errorf("%s: Scoped() %v, Scope() %q", tc.name, tok.Scoped(), tok.Scope())
		}
		for name, want := range tc.allows {
			if got := tok.Allows(name); got != want {
				t.Errorf("%s.Allows(%q) = %v, want %v", tc.name, name, got, want)
			}
		}
	}
	if _, ok := s.Lookup("nope-nope-nope-nope"); ok {
		t.Error("an unknown secret was found")
	}
	if _, ok := s.Lookup("sha256:" + hex.EncodeToString(sum[:])); ok {
		t.Error("the digest itself was accepted as the secret")
	}
}

func TestParseErrorsNameTheLineAndNoSecret(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"one field":      {"# c\nlonely\n", "tokens:2: want NAME SECRET PATTERN..."},
		"short secret":   {"a short *\n", "tokens:1: token \"a\": the secret is shorter"},
		"bad hash":       {"a sha256:abc *\n", "tokens:1: token \"a\": a hashed secret"},
		"bad pattern":    {"a secret-0123456789abc [x\n", "tokens:1: token \"a\": pattern \"[x\""},
		"duplicate name": {"a secret-0123456789abc *\na secret-0123456789abd *\n", "tokens:2: token name \"a\" is already used on line 1"},
		"same secret":    {"a secret-0123456789abc *\nb secret-0123456789abc *\n", "tokens:2: token \"b\" has the same secret as line 1"},
		"unsafe secret":  {"a secret/0123456789abc *\n", "tokens:1: token \"a\": the secret may hold only"},
		"bad name":       {"a=b secret-0123456789abc *\n", "tokens:1: token name \"a=b\""},
		// A line cut before its patterns (the file read half-written)
		// used to be a token that read everything.
		"no pattern":         {"a secret-0123456789abc *\nb secret-0123456789abd\n", "tokens:2: token \"b\": no PATTERN: name the items it may read, or * for every item"},
		"no final newline":   {"a secret-0123456789abc *\nb secret-0123456789abd code-*", "tokens: the file does not end with a newline"},
		"empty":              {"", "tokens: the file is empty"},
		"empty secret hash":  {"a " + hashOf("") + " *\n", "tokens:1: token \"a\": the secret is the empty secret"},
		"newline hash":       {"a " + hashOf("\n") + " *\n", "tokens:1: token \"a\": the secret is a lone newline"},
		"documented example": {"a 3q9v2Kc1Qe7oT5wXr8LmZp0aB4nD6fH *\n", "tokens:1: token \"a\": the secret is the example secret of the documentation"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.file), "tokens")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v, want prefix %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret-0123456789") {
				t.Errorf("the error holds the secret: %v", err)
			}
		})
	}
}

func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestFileReloadKeepsTokensOnError: a reading that fails, the file
// missing included, keeps the tokens in force, and says whether the
// file reads as it did the time before, so its error is logged once.
func TestFileReloadKeepsTokensOnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens")
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a secret-0123456789abc *\n")
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	first := f.Reload()
	if first.Err != nil || first.Changed || !first.Same || first.Tokens.Len() != 1 || first.Since.IsZero() {
		t.Fatalf("Reload of the unchanged file = %+v", first)
	}
	write("broken\n")
	if r := f.Reload(); r.Err == nil || !strings.Contains(r.Err.Error(), ":1:") || r.Same || r.Changed {
		t.Fatalf("Reload of a bad file = %+v", r)
	}
	if r := f.Reload(); r.Err == nil || !r.Same || r.Since != first.Since {
		t.Fatalf("Reload of the same bad file = %+v, want Same, since %s", r, first.Since)
	}
	if _, ok := f.Tokens().Lookup("secret-0123456789abc"); !ok {
		t.Fatal("a bad reload dropped the previous tokens")
	}
	write("broken again\n")
	if r := f.Reload(); r.Err == nil || r.Same {
		t.Fatalf("Reload of another bad file = %+v, want not Same", r)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	for i, same := range []bool{false, true} {
		r := f.Reload()
		if !r.Missing || r.Same != same || r.Tokens.Len() != 1 || r.Since != first.Since {
			t.Fatalf("Reload %d of a missing file = %+v", i, r)
		}
	}
	if _, ok := f.Tokens().Lookup("secret-0123456789abc"); !ok {
		t.Fatal("a missing file revoked the tokens")
	}
	write("b secret-0123456789abd *\n")
	if r := f.Reload(); r.Err != nil || !r.Changed || r.Same || !r.Since.After(first.Since) {
		t.Fatalf("Reload = %+v", r)
	}
	if _, ok := f.Tokens().Lookup("secret-0123456789abc"); ok {
		t.Fatal("a removed token still works")
	}
	if r := f.Reload(); r.Changed || !r.Same {
		t.Fatalf("an unchanged file = %+v", r)
	}
}

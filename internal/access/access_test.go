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
	file := "# tokens\n\nci  ci-secret-0123456789\nteam-a\tteam-a-secret-012345 team-a-* shared\nhashed " + "sha256:" + hex.EncodeToString(sum[:]) + "\n"
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
		{"hashed-secret-0123456789", "hashed", map[string]bool{"x": true}},
	} {
		tok, ok := s.Lookup(tc.secret)
		if !ok || tok.Name != tc.name {
			t.Fatalf("Lookup(%s) = %v, %v; want %s", tc.name, tok, ok, tc.name)
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
		"one field":      {"# c\nlonely\n", "tokens:2: want NAME SECRET"},
		"short secret":   {"a short\n", "tokens:1: token \"a\": the secret is shorter"},
		"bad hash":       {"a sha256:abc\n", "tokens:1: token \"a\": a hashed secret"},
		"bad pattern":    {"a secret-0123456789abc [x\n", "tokens:1: token \"a\": pattern \"[x\""},
		"duplicate name": {"a secret-0123456789abc\na secret-0123456789abd\n", "tokens:2: token name \"a\" is already used on line 1"},
		"same secret":    {"a secret-0123456789abc\nb secret-0123456789abc\n", "tokens:2: token \"b\" has the same secret as line 1"},
		"unsafe secret":  {"a secret/0123456789abc\n", "tokens:1: token \"a\": the secret may hold only"},
		"bad name":       {"a=b secret-0123456789abc\n", "tokens:1: token name \"a=b\""},
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

func TestFileReloadKeepsTokensOnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens")
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a secret-0123456789abc\n")
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	write("broken\n")
	if _, _, err := f.Reload(); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("Reload of a bad file: %v", err)
	}
	if _, ok := f.Tokens().Lookup("secret-0123456789abc"); !ok {
		t.Fatal("a bad reload dropped the previous tokens")
	}
	write("b secret-0123456789abd\n")
	if _, changed, err := f.Reload(); err != nil || !changed {
		t.Fatalf("Reload = %v, %v", changed, err)
	}
	if _, ok := f.Tokens().Lookup("secret-0123456789abc"); ok {
		t.Fatal("a removed token still works")
	}
	if _, changed, _ := f.Reload(); changed {
		t.Fatal("an unchanged file reported a change")
	}
}

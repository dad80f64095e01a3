// Package access owns the read tokens of a private feed: the token file's
// format, the constant-time lookup of a secret, and which item names a
// token's patterns let it see. It imports no other internal package and
// knows nothing of HTTP.
package access

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// A Token is one line of the token file. Its secret is kept only as a
// sha256 digest.
type Token struct {
	// Name labels the token in logs and metrics; it is never secret.
	Name string
	// Patterns are globs (path.Match) over skill and sub-agent names,
	// at least one; ["*"] is every item (a name holds no '/', so "*"
	// matches every one).
	Patterns []string
	sum      [sha256.Size]byte
}

// everyItem is the pattern of a token that sees every item.
const everyItem = "*"

// Scoped reports whether t sees only some items.
func (t *Token) Scoped() bool { return !slices.Equal(t.Patterns, []string{everyItem}) }

// Allows reports whether t may see the skill or sub-agent name.
func (t *Token) Allows(name string) bool {
	if !t.Scoped() {
		return true
	}
	for _, p := range t.Patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Scope names t's view: equal for tokens that see the same items, so a
// view is rendered once per pattern set, not once per token; "" for a
// token that sees every item.
func (t *Token) Scope() string {
	if !t.Scoped() {
		return ""
	}
	return strings.Join(t.Patterns, " ")
}

// Set is the tokens of one reading of the file. It never changes.
type Set struct {
	tokens []*Token
}

// Len is how many tokens s holds.
func (s *Set) Len() int { return len(s.tokens) }

// Lookup returns the token whose secret is secret. Every token is
// compared, as sha256 digests in constant time, so neither which token
// matched nor the secret's length leaks through timing.
func (s *Set) Lookup(secret string) (*Token, bool) {
	got := sha256.Sum256([]byte(secret))
	var found *Token
	for _, t := range s.tokens {
		if subtle.ConstantTimeCompare(t.sum[:], got[:]) == 1 {
			found = t
		}
	}
	return found, found != nil
}

// hashPrefix marks a SECRET given as the sha256 of the token.
const hashPrefix = "sha256:"

// Parse reads a token file: one token per line, "NAME SECRET PATTERN...",
// fields separated by spaces or tabs; '#' starts a comment line, blank
// lines are skipped. SECRET is the token, or "sha256:" and the 64 hex
// digits of its digest. Each line names at least one PATTERN, "*" for
// every item, so that a line cut before its patterns (a file read while
// it is being written) is an error, never a token that sees everything.
// For the same reason the file must end with a newline, and must not be
// empty: a file for no reader holds a comment line. file names the file
// in errors, which name the line and never echo a secret.
func Parse(r io.Reader, file string) (*Set, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	switch {
	case len(data) == 0:
		return nil, fmt.Errorf("%s: the file is empty: it is being written, or was cut (a file for no reader holds a comment line)", file)
	case data[len(data)-1] != '\n':
		return nil, fmt.Errorf("%s: the file does not end with a newline: it is being written, or was cut; end its last line with a newline", file)
	}
	s := &Set{}
	names := map[string]int{}
	sums := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseLine(strings.Fields(line))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		if first, dup := names[t.Name]; dup {
			return nil, fmt.Errorf("%s:%d: token name %q is already used on line %d; names must be unique", file, n, t.Name, first)
		}
		if first, dup := sums[t.sum]; dup {
			return nil, fmt.Errorf("%s:%d: token %q has the same secret as line %d; give each token its own", file, n, t.Name, first)
		}
		names[t.Name], sums[t.sum] = n, n
		s.tokens = append(s.tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// minSecret is the shortest secret accepted in clear: anything shorter is
// guessable. A secret given as its digest cannot be measured; the
// documentation asks for as strong a one.
const minSecret = 16

// weakSums are the digests of secrets anyone can guess, refused in
// either form: the empty secret and a lone newline, whose digests
// `printf %s "$TOKEN" | sha256sum` and `echo "$TOKEN" | sha256sum` give
// for an unset TOKEN, and the example secret of the documentation.
var weakSums = func() map[[sha256.Size]byte]string {
	m := map[[sha256.Size]byte]string{}
	for secret, what := range map[string]string{
		"":                                "the empty secret (was the variable hashed unset?)",
		"\n":                              "a lone newline (was the variable hashed unset?)",
		"3q9v2Kc1Qe7oT5wXr8LmZp0aB4nD6fH": "the example secret of the documentation",
	} {
		m[sha256.Sum256([]byte(secret))] = what
	}
	return m
}()

func parseLine(fields []string) (*Token, error) {
	if len(fields) < 2 {
		return nil, fmt.Errorf("want NAME SECRET PATTERN..., got %d field(s)", len(fields))
	}
	t := &Token{Name: fields[0]}
	if !validName(t.Name) {
		return nil, fmt.Errorf("token name %q: use letters, digits, '.', '_' and '-'", t.Name)
	}
	secret := fields[1]
	if h, ok := strings.CutPrefix(secret, hashPrefix); ok {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size || strings.ToLower(h) != h {
			return nil, fmt.Errorf("token %q: a hashed secret is %s and 64 lower-case hex digits", t.Name, hashPrefix)
		}
		copy(t.sum[:], b)
	} else {
		if len(secret) < minSecret {
			return nil, fmt.Errorf("token %q: the secret is shorter than %d characters; make one with `openssl rand -hex 24`", t.Name, minSecret)
		}
		if !validSecret(secret) {
			return nil, fmt.Errorf("token %q: the secret may hold only letters, digits, '-', '.', '_' and '~' (it goes into URLs)", t.Name)
		}
		t.sum = sha256.Sum256([]byte(secret))
	}
	if what, weak := weakSums[t.sum]; weak {
		return nil, fmt.Errorf("token %q: the secret is %s, which anyone can guess; make one with `openssl rand -hex 24`", t.Name, what)
	}
	if len(fields) == 2 {
		return nil, fmt.Errorf("token %q: no PATTERN: name the items it may read, or * for every item", t.Name)
	}
	for _, p := range fields[2:] {
		if _, err := path.Match(p, ""); err != nil || strings.Contains(p, "/") {
			return nil, fmt.Errorf("token %q: pattern %q is not a glob over names", t.Name, p)
		}
		if !slices.Contains(t.Patterns, p) {
			t.Patterns = append(t.Patterns, p)
		}
	}
	if slices.Contains(t.Patterns, everyItem) {
		t.Patterns = []string{everyItem} // the others add nothing
	}
	slices.Sort(t.Patterns)
	return t, nil
}

func validName(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return s != ""
}

// validSecret reports whether s is made of URL-unreserved characters
// (RFC 3986 §2.3), so the path form carries it unescaped.
func validSecret(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}

// Equal reports whether two readings of the file hold the same tokens.
func (s *Set) Equal(o *Set) bool {
	return slices.EqualFunc(s.tokens, o.tokens, func(a, b *Token) bool {
		return a.Name == b.Name && a.sum == b.sum && slices.Equal(a.Patterns, b.Patterns)
	})
}

// Names lists the tokens' names, for the reload log line.
func (s *Set) Names() []string {
	out := make([]string, len(s.tokens))
	for i, t := range s.tokens {
		out[i] = t.Name
	}
	return out
}

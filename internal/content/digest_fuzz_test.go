package content

import (
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"testing"
)

var (
	canonicalDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	acceptedDigest  = regexp.MustCompile(`^(sha256:)?[0-9a-f]{64}$`)
)

// FuzzDigest: ParseDigest accepts exactly "sha256:<64 lowercase hex>" and
// the bare hex, returns the canonical form, and round-trips; upper case,
// short and long forms are refused with ErrInvalidDigest. hexSum (a blob
// file's name to its bytes) takes exactly what the parser does.
func FuzzDigest(f *testing.F) {
	d := Sum([]byte("hello"))
	for _, s := range []string{string(d), d.Hex(), strings.ToUpper(d.Hex()), "SHA256:" + d.Hex(), string(d)[:70], string(d) + "0",
		"sha256:", "", "sha256:sha256:" + d.Hex(), "sha512:" + d.Hex(), " " + string(d), string(d) + "\n", "sha256:" + strings.Repeat("g", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// The Dir's decoder of file names agrees with the parser's rule
		// and round-trips.
		hexPart := strings.TrimPrefix(s, Algorithm+":")
		if b, ok := hexSum(hexPart); ok != isDigestHex(hexPart) || ok && hex.EncodeToString(b[:]) != hexPart {
			t.Fatalf("hexSum(%q) = %x, %v", hexPart, b, ok)
		}
		got, err := ParseDigest(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidDigest) || acceptedDigest.MatchString(s) {
				t.Fatalf("ParseDigest(%q): %v", s, err)
			}
			return
		}
		if !acceptedDigest.MatchString(s) || !canonicalDigest.MatchString(string(got)) || (s != string(got) && s != got.Hex()) {
			t.Fatalf("ParseDigest(%q) = %q", s, got)
		}
		for _, form := range []string{got.String(), got.Hex()} {
			if again, err := ParseDigest(form); err != nil || again != got {
				t.Fatalf("ParseDigest(%q) = %q, %v; want %q", form, again, err, got)
			}
		}
		if got.ETag() != `"`+string(got)+`"` {
			t.Fatalf("ETag = %s", got.ETag())
		}
		for _, bad := range []string{strings.ToUpper(got.Hex()), got.String()[:len(got)-1], got.String() + "0", got.Hex()[1:]} {
			if bad == got.Hex() {
				continue // all digits: upper case is the same string
			}
			if _, err := ParseDigest(bad); err == nil {
				t.Fatalf("ParseDigest(%q) accepted", bad)
			}
		}
		if sum := Sum([]byte(s)); !canonicalDigest.MatchString(string(sum)) {
			t.Fatalf("Sum gave %q", sum)
		}
	})
}

// Package content owns the bytes the server publishes: the Digest type,
// the immutable digest-keyed Store, and deterministic archives.
//
// It knows nothing about skills, HTTP or the filesystem layout; it must not
// import any other internal package.
package content

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Algorithm is the only digest algorithm the server publishes.
const Algorithm = "sha256"

// Digest identifies bytes: "sha256:" followed by 64 lowercase hex digits.
type Digest string

// ErrInvalidDigest reports a string that is not a well-formed digest.
var ErrInvalidDigest = errors.New("invalid digest")

// Sum returns the digest of b.
func Sum(b []byte) Digest {
	h := sha256.Sum256(b)
	return Digest(Algorithm + ":" + hex.EncodeToString(h[:]))
}

// ParseDigest accepts "sha256:<hex>" or a bare "<hex>" and returns the
// canonical form. Hex must be 64 lowercase digits: clients reject upper case,
// so the server never treats it as the same digest.
func ParseDigest(s string) (Digest, error) {
	hexPart := strings.TrimPrefix(s, Algorithm+":")
	if !isDigestHex(hexPart) {
		return "", fmt.Errorf("%w: %q: want %s:<64 lowercase hex>", ErrInvalidDigest, s, Algorithm)
	}
	return Digest(Algorithm + ":" + hexPart), nil
}

// isDigestHex reports whether h is 64 lowercase hex digits.
func isDigestHex(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// sum is a digest's 32 bytes: how a Dir keys the blobs it holds, without
// a string of 71 characters each.
type sum [sha256.Size]byte

// sum returns d's bytes; ok is false for a string that is not a digest.
func (d Digest) sum() (sum, bool) { return hexSum(d.Hex()) }

// hexSum is the digest whose hex part is h: 64 lowercase hex digits.
// It decodes in place, one table lookup per digit (hex.Decode would take
// a copy of h per call: Dir.Has runs for every file of a scan).
func hexSum(h string) (s sum, ok bool) {
	if len(h) != 2*sha256.Size {
		return s, false
	}
	for i := range s {
		hi, lo := hexNibble[h[2*i]], hexNibble[h[2*i+1]]
		if hi|lo > 0xf {
			return sum{}, false
		}
		s[i] = hi<<4 | lo
	}
	return s, true
}

// hexNibble is the value of each lowercase hex digit; every other byte
// maps to 0xff.
var hexNibble = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// Digest is the digest whose bytes are s.
func (s sum) Digest() Digest { return Digest(Algorithm + ":" + hex.EncodeToString(s[:])) }

// Bytes returns the 32 bytes d names, for a compact encoding of it; ok is
// false for a string that is not a digest.
func (d Digest) Bytes() (b [sha256.Size]byte, ok bool) { return d.sum() }

// DigestOf is the digest whose bytes are b (Digest.Bytes).
func DigestOf(b [sha256.Size]byte) Digest { return sum(b).Digest() }

// Hex returns the hex part of d.
func (d Digest) Hex() string { return strings.TrimPrefix(string(d), Algorithm+":") }

// String returns d as published.
func (d Digest) String() string { return string(d) }

// ETag returns d as a strong HTTP entity tag.
func (d Digest) ETag() string { return `"` + string(d) + `"` }

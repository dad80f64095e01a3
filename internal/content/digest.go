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
	sum := sha256.Sum256(b)
	return Digest(Algorithm + ":" + hex.EncodeToString(sum[:]))
}

// ParseDigest accepts "sha256:<hex>" or a bare "<hex>" and returns the
// canonical form. Hex must be 64 lowercase digits: clients reject upper case,
// so the server never treats it as the same digest.
func ParseDigest(s string) (Digest, error) {
	hexPart := strings.TrimPrefix(s, Algorithm+":")
	if len(hexPart) != 64 {
		return "", fmt.Errorf("%w: %q: want %s:<64 lowercase hex>", ErrInvalidDigest, s, Algorithm)
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("%w: %q: want %s:<64 lowercase hex>", ErrInvalidDigest, s, Algorithm)
		}
	}
	return Digest(Algorithm + ":" + hexPart), nil
}

// Hex returns the hex part of d.
func (d Digest) Hex() string { return strings.TrimPrefix(string(d), Algorithm+":") }

// String returns d as published.
func (d Digest) String() string { return string(d) }

// ETag returns d as a strong HTTP entity tag.
func (d Digest) ETag() string { return `"` + string(d) + `"` }

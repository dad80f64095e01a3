package skill

import (
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// Where a resource path must fit. A skill's files are published by serve
// and written by export into a folder or a bucket; a name one of those
// cannot store must be a problem of its own skill, found by validate, not
// an export that stops half way for every skill. These are facts of the
// targets, not settings.
const (
	// MaxNameBytes is the longest name a file system stores in one path
	// component (ext4, XFS, Btrfs, APFS; NTFS counts 255 UTF-16 units,
	// never more than the UTF-8 bytes).
	MaxNameBytes = 255
	// TempSuffixBytes is the most a target adds to a name for the
	// temporary file it writes first: gocloud.dev's file:// bucket
	// driver writes "<name>.<16 hex digits>.tmp" (21 bytes); the export's
	// folder target writes a fixed short name instead.
	TempSuffixBytes = 21
	// MaxSegmentBytes is the longest file or folder name a skill may
	// hold.
	MaxSegmentBytes = MaxNameBytes - TempSuffixBytes
	// MaxKeyBytes is the longest object key S3, Google Cloud Storage and
	// Azure Blob Storage take (1,024 bytes of UTF-8).
	MaxKeyBytes = 1024
	// KeyPrefixBytes is the longest key prefix an export puts before a
	// resource's path: "api/v1/blobs/sha256/" and 64 hex digits and "/"
	// (internal/feed's ArtifactPath; the latest-version key
	// ".well-known/skills/<name>/" is at most 84 bytes).
	KeyPrefixBytes = len("api/v1/blobs/sha256/") + 64 + len("/")
	// MaxResourcePathBytes is the longest resource path, folders
	// included, whose exported keys fit in MaxKeyBytes.
	MaxResourcePathBytes = MaxKeyBytes - KeyPrefixBytes
)

// ValidResourcePath reports whether p, a resource's slash path below its
// version folder, is one clients take: a clean relative path of valid
// UTF-8 without control characters, backslashes or "..". Clients reject
// an archive or index holding a backslash or ".." anywhere in a path (the
// skills CLI drops the whole v0.1 index), so "notes..md" is refused too.
// ResourcePathLength checks its length.
func ValidResourcePath(p string) bool {
	if !fs.ValidPath(p) || p == "." || strings.ContainsRune(p, '\\') || strings.Contains(p, "..") {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// ResourcePathLength returns why the resource path p is too long for an
// export to store ("" when it is not): a file or folder name over
// MaxSegmentBytes, or a path over MaxResourcePathBytes.
func ResourcePathLength(p string) string {
	for seg := range strings.SplitSeq(p, "/") {
		if len(seg) > MaxSegmentBytes {
			return fmt.Sprintf("the name %q is %d bytes; the limit is %d (file systems hold %d bytes per name, and an export writes each file through a temporary name up to %d bytes longer); shorten it",
				abbreviate(seg), len(seg), MaxSegmentBytes, MaxNameBytes, TempSuffixBytes)
		}
	}
	if len(p) > MaxResourcePathBytes {
		return fmt.Sprintf("the path is %d bytes; the limit is %d (an export stores the file at api/v1/blobs/sha256/<digest>/<path>, and object stores take keys of at most %d bytes); shorten the path or its folders",
			len(p), MaxResourcePathBytes, MaxKeyBytes)
	}
	return ""
}

// abbreviate shortens a long name for a message, keeping its ends.
func abbreviate(s string) string {
	const keep = 24
	if len(s) <= 2*keep+3 {
		return s
	}
	head, tail := s[:keep], s[len(s)-keep:]
	// Cut at rune starts, so the message stays valid UTF-8.
	for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + "..." + tail
}

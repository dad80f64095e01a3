package export

import (
	"context"
	"crypto/md5"
)

// Target is where an export goes: a folder, or a bucket.
type Target interface {
	// Compare says whether f is there already with the same bytes and
	// the same attributes (Content-Type, Cache-Control, no
	// Content-Encoding). It is called for many files at once.
	Compare(ctx context.Context, f File) (Change, error)
	// Write stores f whole: a reader sees the old object or the new one,
	// never a part.
	Write(ctx context.Context, f File) error
	Delete(ctx context.Context, key string) error
	// Read returns an object's bytes; ok is false when there is none.
	Read(ctx context.Context, key string) (b []byte, ok bool, err error)
	Close() error
}

// Change is how the object at a file's key differs from the file.
type Change int

const (
	Same     Change = iota // the same bytes and attributes
	Missing                // no object at the key
	Bytes                  // other bytes
	Metadata               // the same bytes, other attributes
)

// A File is one object of an export.
type File struct {
	// Key is the object's name: its URL path below the base, unescaped,
	// without the leading slash.
	Key          string
	Body         []byte
	ContentType  string
	CacheControl string
	// ContentDisposition is "attachment" for a file a browser would run
	// script in (ArtifactType), "" for the rest.
	ContentDisposition string
	// rank orders the writes: what documents point at goes first, so a
	// reader never follows a link to an object not written yet.
	rank int
}

// md5Of is the MD5 buckets report for an object written whole.
func md5Of(b []byte) []byte {
	sum := md5.Sum(b)
	return sum[:]
}

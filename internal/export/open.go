package export

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"

	// file:// is always there; s3://, gs:// and azblob:// come from
	// drivers_*.go, each of which a build tag can leave out.
	_ "gocloud.dev/blob/fileblob"
)

// Open returns the target out names: a bucket URL (s3://, gs://,
// azblob://, file://, with the query parameters of gocloud.dev/blob's
// drivers), or else a folder, created if missing.
func Open(ctx context.Context, out string) (Target, error) {
	if scheme, _, ok := strings.Cut(out, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, `/\`) {
		if tag, optional := optionalDrivers[scheme]; optional && !blob.DefaultURLMux().ValidBucketScheme(scheme) {
			return nil, fmt.Errorf("open bucket %s: this skillserver was built with -tags %s, which leaves the %s:// driver out, and there is no skillserver-export (the full build, which it runs for such a URL) in its folder; run skillserver-export, which the release archives, the container image and make build put beside skillserver, or a build without that tag", out, tag, scheme)
		}
		b, err := blob.OpenBucket(ctx, out)
		if err != nil {
			return nil, fmt.Errorf("open bucket %s: %w", out, err)
		}
		u := &bucket{b: b}
		if scheme == "file" {
			// The file:// driver follows symbolic links: the export
			// checks every key's path for them itself, through the
			// folder the driver writes into.
			if u.root, err = os.OpenRoot(fileBucketDir(out)); err != nil {
				b.Close()
				return nil, fmt.Errorf("open bucket %s: %w", out, err)
			}
		}
		return u, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("create the output folder: %w", err)
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		return nil, fmt.Errorf("open the output folder: %w", err)
	}
	return &folder{root: root}, nil
}

// servedByExtension reports whether t is a folder on disk that a host
// serves by file extension: the folder target, or a file:// bucket.
func servedByExtension(t Target) bool {
	switch t := t.(type) {
	case *folder:
		return true
	case *bucket:
		return t.root != nil
	}
	return false
}

// fileBucketDir is the folder of a file:// bucket URL, as gocloud.dev's
// fileblob driver reads it (a "." host makes the path relative).
func fileBucketDir(out string) string {
	u, err := url.Parse(out)
	if err != nil {
		return out // the driver opened it; it parses
	}
	p := u.Path
	if u.Host == "." || os.PathSeparator != '/' {
		p = strings.TrimPrefix(p, "/")
	}
	return filepath.FromSlash(p)
}

package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// The bucket schemes --out takes: s3://, gs://, azblob://, file://.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// Target is where an export goes: a folder, or a bucket.
type Target interface {
	// Same reports whether f is there already with the same bytes.
	Same(ctx context.Context, f File) (bool, error)
	// Write stores f whole: a reader sees the old object or the new one,
	// never a part.
	Write(ctx context.Context, f File) error
	Delete(ctx context.Context, key string) error
	// Read returns an object's bytes; ok is false when there is none.
	Read(ctx context.Context, key string) (b []byte, ok bool, err error)
	Close() error
}

// Open returns the target out names: a bucket URL (s3://, gs://,
// azblob://, file://, with the query parameters of gocloud.dev/blob's
// drivers), or else a folder, created if missing.
func Open(ctx context.Context, out string) (Target, error) {
	if scheme, _, ok := strings.Cut(out, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, `/\`) {
		b, err := blob.OpenBucket(ctx, out)
		if err != nil {
			return nil, fmt.Errorf("open bucket %s: %w", out, err)
		}
		return &bucket{b: b}, nil
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

// folder writes files under a directory, each through a temporary file
// renamed into place, and only files whose bytes differ. It goes through an os.Root, so no key leaves it.
type folder struct{ root *os.Root }

func (d *folder) Same(_ context.Context, f File) (bool, error) {
	b, ok, err := d.Read(context.Background(), f.Key)
	return ok && bytes.Equal(b, f.Body), err
}

func (d *folder) Write(_ context.Context, f File) error {
	name := filepath.FromSlash(f.Key)
	if dir := filepath.Dir(name); dir != "." {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := filepath.Join(filepath.Dir(name), ".tmp-"+filepath.Base(name))
	w, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	// No fsync: readers see the old file or the new one either way (the
	// rename), and after a crash the next export compares every file's
	// bytes and rewrites what is wrong. An fsync per file made the cold
	// export of the 10,000-skill benchmark tree take 261 s instead of 76.
	_, err = w.Write(f.Body)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		_ = d.root.Remove(tmp)
	}
	return err
}

func (d *folder) Delete(_ context.Context, key string) error {
	name := filepath.FromSlash(key)
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Folders the removal emptied go too; a folder still holding
	// anything stays (Remove fails on it).
	for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
		if d.root.Remove(dir) != nil {
			break
		}
	}
	return nil
}

func (d *folder) Read(_ context.Context, key string) ([]byte, bool, error) {
	b, err := d.root.ReadFile(filepath.FromSlash(key))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return b, true, nil
}

func (d *folder) Close() error { return d.root.Close() }

// bucket uploads to a gocloud.dev/blob bucket. It lists the bucket once
// and compares MD5s, so an object with the same bytes is not uploaded
// again (content-addressed keys rarely change at all).
type bucket struct {
	b      *blob.Bucket
	listed map[string][]byte // key -> MD5 (nil when the driver gives none)
}

func (u *bucket) Same(ctx context.Context, f File) (bool, error) {
	if u.listed == nil {
		u.listed = map[string][]byte{}
		it := u.b.List(nil)
		for {
			obj, err := it.Next(ctx)
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return false, fmt.Errorf("list the bucket: %w", err)
			}
			if !obj.IsDir {
				u.listed[obj.Key] = obj.MD5
			}
		}
	}
	sum, ok := u.listed[f.Key]
	if !ok {
		return false, nil
	}
	if sum == nil { // no MD5 in the listing: ask for the attributes
		a, err := u.b.Attributes(ctx, f.Key)
		if err != nil {
			return false, nil
		}
		sum = a.MD5
	}
	return bytes.Equal(sum, md5Of(f.Body)), nil
}

func (u *bucket) Write(ctx context.Context, f File) error {
	return u.b.WriteAll(ctx, f.Key, f.Body, &blob.WriterOptions{
		ContentType: f.ContentType, CacheControl: f.CacheControl, ContentMD5: md5Of(f.Body),
	})
}

func (u *bucket) Delete(ctx context.Context, key string) error {
	if err := u.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

func (u *bucket) Read(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := u.b.ReadAll(ctx, key)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return b, true, nil
}

func (u *bucket) Close() error { return u.b.Close() }

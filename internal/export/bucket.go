package export

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// bucket uploads to a gocloud.dev/blob bucket. It lists the bucket once,
// so a key not there costs no request, then asks for the attributes of
// each key that is (no download): an object is uploaded again when its
// bytes (MD5 and size), Content-Type or Cache-Control differ from the
// file's, or it has a Content-Encoding, which the export never sets (a
// client would decode the bytes it hashes). An S3 multipart upload (what
// the S3 driver makes of objects of 16 MiB or more) has an ETag that is
// no MD5; it is compared with the ETag of the file cut in parts of
// partSize, and only when that differs too are the bytes read and
// compared.
type bucket struct {
	b *blob.Bucket
	// root is the folder of a file:// bucket, whose driver follows
	// symbolic links: every key is checked for them there (noLinks),
	// with its ".attrs" file; nil for other buckets.
	root *os.Root

	mu     sync.Mutex
	listed map[string]listing // nil until listed
}

// listing is what the bucket's listing says of one object.
type listing struct {
	size int64
	md5  []byte // nil when the listing gives none
}

// md5Metadata is the object metadata key under which the export records
// the MD5 of the bytes it wrote (hex), for stores whose own MD5 (an S3
// ETag) is not of the data.
const md5Metadata = "skillserver-md5"

// sameMediaType compares two Content-Type values as media types, so a
// store that respells one ("text/markdown;charset=utf-8") does not make
// every export upload it again.
func sameMediaType(a, b string) bool {
	if a == b {
		return true
	}
	ta, pa, errA := mime.ParseMediaType(a)
	tb, pb, errB := mime.ParseMediaType(b)
	return errA == nil && errB == nil && ta == tb && maps.EqualFunc(pa, pb, strings.EqualFold)
}

// partSize is the size of the parts of the bucket's multipart uploads,
// set rather than the driver's default so the ETag S3 gives such an
// upload is known (multipartETag).
const partSize = 8 << 20

// multipartETag is the ETag S3 gives an object uploaded in parts of
// partSize: the MD5 of the parts' MD5s, a dash and the number of parts.
func multipartETag(b []byte) string {
	var sums []byte
	n := 0
	for off := 0; off < len(b) || n == 0; off += partSize {
		sums = append(sums, md5Of(b[off:min(off+partSize, len(b))])...)
		n++
	}
	return fmt.Sprintf("%x-%d", md5Of(sums), n)
}

// fileAttrs is the suffix of the file gocloud.dev's file:// driver keeps
// an object's attributes in, beside it.
const fileAttrs = ".attrs"

// list lists the bucket the first time it is called.
func (u *bucket) list(ctx context.Context) (map[string]listing, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.listed != nil {
		return u.listed, nil
	}
	listed := map[string]listing{}
	it := u.b.List(nil)
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list the bucket: %w", err)
		}
		if !obj.IsDir {
			listed[obj.Key] = listing{size: obj.Size, md5: obj.MD5}
		}
	}
	u.listed = listed
	return listed, nil
}

func (u *bucket) Compare(ctx context.Context, f File) (Change, error) {
	if u.root != nil && noLinks(u.root, f.Key, false) != nil {
		return Missing, nil // no object of this bucket: Write replaces or refuses it
	}
	listed, err := u.list(ctx)
	if err != nil {
		return 0, err
	}
	l, ok := listed[f.Key]
	switch {
	case !ok:
		return Missing, nil
	case l.size != int64(len(f.Body)):
		return Bytes, nil // no attributes needed
	}
	a, err := u.b.Attributes(ctx, f.Key)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound: // removed since the listing
		return Missing, nil
	case err != nil:
		return 0, err
	}
	want := md5Of(f.Body)
	sum := a.MD5
	if sum == nil {
		sum = l.md5
	}
	switch {
	case a.Size != int64(len(f.Body)):
		return Bytes, nil
	case sum != nil && bytes.Equal(sum, want):
	case a.Metadata[md5Metadata] == hex.EncodeToString(want):
		// What this export wrote, where the store's MD5 is not of the
		// data: S3 encrypting with SSE-KMS or SSE-C keys gives such
		// ETags, and every export would upload the whole bucket again.
	case sum != nil:
		return Bytes, nil
	case strings.Trim(a.ETag, `"`) != multipartETag(f.Body):
		same, err := u.holds(ctx, f.Key, f.Body)
		if err != nil {
			return 0, err
		}
		if !same {
			return Bytes, nil
		}
	}
	if !sameMediaType(a.ContentType, f.ContentType) || a.CacheControl != f.CacheControl || a.ContentDisposition != f.ContentDisposition || a.ContentEncoding != "" {
		return Metadata, nil
	}
	return Same, nil
}

func (u *bucket) Write(ctx context.Context, f File) error {
	if u.root != nil {
		if err := u.unlink(f.Key); err != nil {
			return err
		}
	}
	sum := md5Of(f.Body)
	return u.b.WriteAll(ctx, f.Key, f.Body, &blob.WriterOptions{
		ContentType: f.ContentType, CacheControl: f.CacheControl, ContentDisposition: f.ContentDisposition,
		ContentMD5: sum, BufferSize: partSize,
		Metadata: map[string]string{md5Metadata: hex.EncodeToString(sum)},
	})
}

// unlink readies key of a file:// bucket for a write: a symbolic link on
// its path is refused; one at the key itself or at its attributes file is
// removed (the driver would write through the latter), not followed.
func (u *bucket) unlink(key string) error {
	if err := noLinks(u.root, key, true); err != nil {
		return err
	}
	for _, name := range []string{key, key + fileAttrs} {
		fi, err := u.root.Lstat(filepath.FromSlash(name))
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if err := u.root.Remove(filepath.FromSlash(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (u *bucket) Delete(ctx context.Context, key string) error {
	if u.root != nil {
		if err := noLinks(u.root, key, false); err != nil {
			return err
		}
	}
	if err := u.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

// holds reports whether the object key holds exactly body, reading it as
// a stream: compares run side by side, and an object of a store whose
// ETags say nothing (no MD5, not the multipart ETag expected) may be as
// large as an archive gets, so none is held whole. It reads at most one
// byte past len(body).
func (u *bucket) holds(ctx context.Context, key string, body []byte) (bool, error) {
	r, err := u.b.NewReader(ctx, key, nil)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound:
		return false, nil
	case err != nil:
		return false, err
	}
	defer r.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf[:min(len(buf), len(body)+1)])
		if n > len(body) || !bytes.Equal(buf[:n], body[:n]) {
			return false, nil
		}
		body = body[n:]
		switch {
		case errors.Is(err, io.EOF):
			return len(body) == 0, nil
		case err != nil:
			return false, err
		}
	}
}

func (u *bucket) Read(ctx context.Context, key string) ([]byte, bool, error) {
	if u.root != nil && noLinks(u.root, key, false) != nil {
		return nil, false, nil
	}
	b, err := u.b.ReadAll(ctx, key)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return b, true, nil
}

func (u *bucket) Close() error {
	err := u.b.Close()
	if u.root != nil {
		err = errors.Join(err, u.root.Close())
	}
	return err
}

package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// file:// is always there; s3://, gs:// and azblob:// come from
	// drivers_*.go, each of which a build tag can leave out.
	_ "gocloud.dev/blob/fileblob"
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

// Change is how the object at a file's key differs from the file.
type Change int

const (
	Same     Change = iota // the same bytes and attributes
	Missing                // no object at the key
	Bytes                  // other bytes
	Metadata               // the same bytes, other attributes
)

// folder writes files under a directory, each through a temporary file
// renamed into place, and only files whose bytes differ. It goes through
// an os.Root, so no key leaves it, and it neither writes, reads nor
// removes through a symbolic link at all (noLinks): the export makes
// none, so one in its path is someone else's.
type folder struct{ root *os.Root }

// Compare compares bytes only: a file has no attributes to compare (the
// host sets the headers, by path). A symbolic link where the file
// should be is no file: it is replaced.
func (d *folder) Compare(ctx context.Context, f File) (Change, error) {
	b, ok, err := d.Read(ctx, f.Key)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return Missing, nil
	case !bytes.Equal(b, f.Body):
		return Bytes, nil
	}
	return Same, nil
}

func (d *folder) Write(_ context.Context, f File) error {
	if err := noLinks(d.root, f.Key, true); err != nil {
		return err
	}
	name := filepath.FromSlash(f.Key)
	if dir := filepath.Dir(name); dir != "." {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// The temporary name is short whatever the file's name: a name of
	// 255 bytes, the most a file system takes, would have none longer.
	tmp := filepath.Join(filepath.Dir(name), tempName(f.Key))
	// One left by a crash, or anything else there, link included.
	if err := d.root.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	w, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
		// A link at name is replaced, not followed.
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		_ = d.root.Remove(tmp)
	}
	return err
}

// tempName is the name of the temporary file the folder writes key
// through, in key's folder: ".tmp-" and 16 hex digits of a hash of the
// key, 21 bytes. Scans skip names starting with a dot, so no resource
// has one; the same key has the same one, so a crash leaves at most one
// per file, which the next write of it removes.
func tempName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return ".tmp-" + hex.EncodeToString(sum[:8])
}

func (d *folder) Delete(_ context.Context, key string) error {
	if err := noLinks(d.root, key, false); err != nil {
		return err
	}
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

// Read reads the file at key; a symbolic link on the way, or a folder,
// is no file.
func (d *folder) Read(_ context.Context, key string) ([]byte, bool, error) {
	if err := noLinks(d.root, key, false); err != nil {
		return nil, false, nil
	}
	b, err := d.root.ReadFile(filepath.FromSlash(key))
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		// No file there: a file stands where a folder of key should, or
		// a folder where key should. The write then fails, for this file.
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return b, true, nil
}

func (d *folder) Close() error { return d.root.Close() }

// A linkError is a key whose path in the output passes through a
// symbolic link, which the export does not follow: on a write it is the
// file's failure, on a prune the key is forgotten.
type linkError struct {
	key  string
	link string // the slash path of the link, below the output
}

func (e *linkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link; the export does not follow links in its output", e.link)
}

// noLinks returns a *linkError when a folder on key's path below root is
// a symbolic link, or key itself is one, unless leafOK (a write renames
// over a link, which replaces it). A missing name ends the check: nothing
// below it exists. It checks, then the caller acts: a link made in
// between is still refused by os.Root when it leaves root, but one to
// elsewhere inside it would be followed.
func noLinks(root *os.Root, key string, leafOK bool) error {
	segs := strings.Split(key, "/")
	for i := range segs {
		name := strings.Join(segs[:i+1], "/")
		fi, err := root.Lstat(filepath.FromSlash(name))
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return nil
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink == 0:
			continue
		case i == len(segs)-1 && leafOK:
			return nil
		}
		return &linkError{key: key, link: name}
	}
	return nil
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

// fileAttrs is the suffix of the file gocloud.dev's file:// driver keeps
// an object's attributes in, beside it.
const fileAttrs = ".attrs"

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

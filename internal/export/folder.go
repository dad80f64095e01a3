package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// folder writes files under a directory, each through a temporary file
// renamed into place, and only files whose bytes differ. It goes through
// an os.Root, so no key leaves it, and it neither writes, reads nor
// removes through a symbolic link at all (noLinks): the export makes
// none, so one in its path is someone else's.
type folder struct{ root *os.Root }

// tempName is the name of the temporary file the folder writes key
// through, in key's folder: ".tmp-" and 16 hex digits of a hash of the
// key, 21 bytes. Scans skip names starting with a dot, so no resource
// has one; the same key has the same one, so a crash leaves at most one
// per file, which the next write of it removes.
func tempName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return ".tmp-" + hex.EncodeToString(sum[:8])
}

// A linkError is a key whose path in the output passes through a
// symbolic link, which the export does not follow: on a write it is the
// file's failure, on a prune the key is forgotten.
type linkError struct {
	key  string
	link string // the slash path of the link, below the output
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

func (e *linkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link; the export does not follow links in its output", e.link)
}

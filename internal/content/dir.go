package content

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gofrs/flock"
	"golang.org/x/sync/singleflight"
)

// Dir is a content-addressed directory of blobs, the state directory's
// blobs/ folder: each blob is one read-only file named by its digest,
// blobs/sha256/<first two hex digits>/<64 hex digits>. A blob is written
// once (a temporary file in tmp/, then a rename, so no reader ever sees
// half of one), never modified, and removed only by Sweep.
//
// Nothing is fsynced: every blob is derived from the tree, and a blob is
// verified against its name the first time this process opens it (and
// again whenever its size or modification time changed), so a blob a
// crash cut short is found, removed and written again by the next scan,
// never served.
//
// One process owns a Dir: OpenDir takes an exclusive lock on the lock
// file, and a second process is refused it with ErrDirLocked.
type Dir struct {
	path  string // the state directory
	blobs string // path/blobs/sha256
	tmp   string // path/tmp: temporary files, on the same filesystem
	lock  *flock.Flock

	mu      sync.Mutex
	present map[sum]fileState

	tmpSeq atomic.Int64 // names of temporary files

	verifying singleflight.Group // by digest, size and time
	hot       *hotBlobs          // nil: none kept (SetHotBytes)

	faults [faultKinds]atomic.Int64
	// writing is false after a write failed, until one succeeds: the
	// first failure of a run is reported, not every one.
	writing atomic.Bool
	report  func(Fault)
}

// fileState is what is known of a blob's file: its size and modification
// time when it was last verified (or written) by this process; a blob
// only listed, not yet verified, has size -1, which no file matches.
type fileState struct {
	size  int64
	mtime int64 // nanoseconds
}

// FaultKind names what went wrong with a blob of a Dir.
type FaultKind int

const (
	// FaultWrite: a blob could not be written (a full disk, a read-only
	// or vanished directory); it is held in memory instead.
	FaultWrite FaultKind = iota
	// FaultCorrupt: a blob's bytes do not match its name; it is removed
	// and not served.
	FaultCorrupt
	// FaultRead: a blob listed as present could not be opened or read
	// (removed behind the server's back).
	FaultRead
	faultKinds
)

func (k FaultKind) String() string {
	switch k {
	case FaultWrite:
		return "write"
	case FaultCorrupt:
		return "corrupt"
	default:
		return "read"
	}
}

// Fault is one failure of a Dir, as reported to the function given to
// OpenDir.
type Fault struct {
	Kind   FaultKind
	Digest Digest
	Path   string
	Err    error
}

// ErrDirLocked is returned by OpenDir when another process holds the
// state directory.
var ErrDirLocked = errors.New("in use by another skillserver process")

// ErrCorrupt is returned for a blob whose bytes do not match its name.
var ErrCorrupt = errors.New("blob does not match its digest")

// Layout of a state directory, written once here.
const (
	lockName  = "lock"
	blobsName = "blobs"
	tmpName   = "tmp"
)

// OpenDir opens (creating it if needed) the state directory path, locks
// it, empties its tmp/ folder (what a crash left there) and lists the
// blobs it holds. report, if set, is told of faults: every corrupt or
// unreadable blob, and the first write failure after a success.
func OpenDir(path string, report func(Fault)) (*Dir, error) {
	d := &Dir{path: path, blobs: filepath.Join(path, blobsName, Algorithm), tmp: filepath.Join(path, tmpName),
		present: map[sum]fileState{}, report: report}
	d.writing.Store(true)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	d.lock = flock.New(filepath.Join(path, lockName))
	locked, err := d.lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", d.lock.Path(), err)
	}
	if !locked {
		return nil, fmt.Errorf("%s: %w; give each process its own state_dir", path, ErrDirLocked)
	}
	if err := os.RemoveAll(d.tmp); err != nil {
		d.Close()
		return nil, err
	}
	if err := os.MkdirAll(d.tmp, 0o755); err != nil {
		d.Close()
		return nil, err
	}
	for i := range 256 { // every shard's folder, so a write need not make one
		if err := os.MkdirAll(filepath.Join(d.blobs, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			d.Close()
			return nil, err
		}
	}
	if err := d.list(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// list records the blobs on disk by name; each is verified when it is
// first opened. Files whose names are not digests are left alone.
func (d *Dir) list() error {
	shards, err := os.ReadDir(d.blobs)
	if err != nil {
		return err
	}
	for _, s := range shards {
		if !s.IsDir() || len(s.Name()) != 2 {
			continue
		}
		names, err := os.ReadDir(filepath.Join(d.blobs, s.Name()))
		if err != nil {
			return err
		}
		for _, n := range names {
			if k, ok := hexSum(n.Name()); ok && n.Type().IsRegular() && n.Name()[:2] == s.Name() {
				d.present[k] = fileState{size: -1}
			}
		}
	}
	return nil
}

// Path is the state directory.
func (d *Dir) Path() string { return d.path }

// Close releases the lock. Blobs stay on disk for the next process.
func (d *Dir) Close() error {
	if d == nil || d.lock == nil {
		return nil
	}
	return d.lock.Unlock()
}

func (d *Dir) file(dg Digest) string {
	h := dg.Hex()
	return filepath.Join(d.blobs, h[:2], h)
}

// Has reports whether the directory holds a blob named dg (not yet
// verified, if this process has not opened it).
func (d *Dir) Has(dg Digest) bool {
	k, ok := dg.sum()
	if !ok {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok = d.present[k]
	return ok
}

// Len is the number of blobs on disk.
func (d *Dir) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.present)
}

// Faults counts the faults of each kind since OpenDir.
func (d *Dir) Faults() map[FaultKind]int64 {
	out := make(map[FaultKind]int64, faultKinds)
	for k := range faultKinds {
		out[k] = d.faults[k].Load()
	}
	return out
}

func (d *Dir) fault(f Fault) {
	d.faults[f.Kind].Add(1)
	if f.Kind == FaultWrite && !d.writing.Swap(false) {
		return // reported when the run of failures began
	}
	if d.report != nil {
		d.report(f)
	}
}

// Write stores data, whose digest is dg, unless the directory holds it.
func (d *Dir) Write(dg Digest, data []byte) error {
	if d.Has(dg) {
		return nil
	}
	final := d.file(dg)
	err := d.write(dg, final, data)
	if err != nil {
		err = fmt.Errorf("write blob %s: %w", dg, err)
		d.fault(Fault{Kind: FaultWrite, Digest: dg, Path: final, Err: err})
		return err
	}
	d.writing.Store(true)
	return nil
}

// write writes data as the blob dg, at final.
func (d *Dir) write(dg Digest, final string, data []byte) error {
	// The lock makes this process the folder's only writer, so a counter
	// names temporary files uniquely; created read-only, written through
	// the descriptor opened for writing.
	tmp := filepath.Join(d.tmp, strconv.FormatInt(d.tmpSeq.Add(1), 10))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder vanished under the server: make it again.
		if err = os.MkdirAll(d.tmp, 0o755); err == nil {
			f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
		if errors.Is(err, fs.ErrNotExist) { // the shard's folder vanished
			if err = os.MkdirAll(filepath.Dir(final), 0o755); err == nil {
				err = os.Rename(tmp, final)
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d.record(dg, fileState{size: int64(len(data)), mtime: fi.ModTime().UnixNano()})
	return nil
}

// Open opens the blob dg for reading, after checking that its bytes
// match its name when this process has not verified them yet or its
// size or modification time changed since. A blob that does not match
// is removed, reported and not opened (ErrCorrupt); the next scan that
// needs it writes it again.
func (d *Dir) Open(dg Digest) (*os.File, int64, error) {
	path := d.file(dg)
	f, err := os.Open(path)
	if err != nil {
		d.lost(dg, path, err)
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		d.lost(dg, path, err)
		return nil, 0, err
	}
	size, mtime := fi.Size(), fi.ModTime().UnixNano()
	k, _ := dg.sum()
	d.mu.Lock()
	st, ok := d.present[k]
	ok = ok && st.size == size && st.mtime == mtime
	d.mu.Unlock()
	if ok {
		return f, size, nil
	}
	// One verification per blob at a time: clients asking for a blob
	// together wait for one hash of it, not one each.
	key := fmt.Sprintf("%s %d %d", dg, size, mtime)
	if _, err, _ := d.verifying.Do(key, func() (any, error) { return nil, d.verify(dg, path, f, size, mtime) }); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// verify hashes the blob dg open as f (size bytes, modified at mtime)
// without moving f's offset, and records it verified; a blob that does
// not match its name is removed and reported.
func (d *Dir) verify(dg Digest, path string, f *os.File, size, mtime int64) error {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		d.lost(dg, path, err)
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != dg.Hex() {
		d.corrupt(dg, path)
		return fmt.Errorf("%s: %w", path, ErrCorrupt)
	}
	d.record(dg, fileState{size: size, mtime: mtime})
	return nil
}

// Read returns the whole blob dg, verified as Open does.
func (d *Dir) Read(dg Digest) ([]byte, error) {
	f, size, err := d.Open(dg)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		d.lost(dg, d.file(dg), err)
		return nil, err
	}
	return b, nil
}

// lost forgets a blob that could not be opened or read, so that the next
// scan writes it again.
func (d *Dir) lost(dg Digest, path string, err error) {
	d.forget(dg)
	d.fault(Fault{Kind: FaultRead, Digest: dg, Path: path, Err: err})
}

func (d *Dir) corrupt(dg Digest, path string) {
	d.hot.forget(dg)
	d.forget(dg)
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	d.fault(Fault{Kind: FaultCorrupt, Digest: dg, Path: path, Err: errors.Join(ErrCorrupt, err)})
}

// record notes what is known of the file of the blob dg.
func (d *Dir) record(dg Digest, st fileState) {
	if k, ok := dg.sum(); ok {
		d.mu.Lock()
		d.present[k] = st
		d.mu.Unlock()
	}
}

// forget notes that the blob dg has no file.
func (d *Dir) forget(dg Digest) {
	if k, ok := dg.sum(); ok {
		d.mu.Lock()
		delete(d.present, k)
		d.mu.Unlock()
	}
}

// Sweep removes every blob keep does not want and returns how many it
// removed. keep is called with d's lock held: it must not call d.
func (d *Dir) Sweep(keep func(Digest) bool) (int, error) {
	d.mu.Lock()
	var gone []Digest
	for k := range d.present {
		if dg := k.Digest(); !keep(dg) {
			gone = append(gone, dg)
			delete(d.present, k)
		}
	}
	d.mu.Unlock()
	var errs []error
	for _, dg := range gone {
		d.hot.forget(dg)
		if err := os.Remove(d.file(dg)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return len(gone), errors.Join(errs...)
}

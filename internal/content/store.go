package content

import (
	"bytes"
	"io"
	"maps"
	"os"
	"sync"
)

// Store is an immutable set of blobs keyed by their digest. A Store is
// built once by a Builder and never changes afterwards, so readers need no
// locks.
//
// A Store built over a Dir keeps only the digests and sizes of its blobs
// in memory; the bytes are the Dir's files. Without a Dir, or for a blob
// the Dir could not take (a full disk), the bytes are held in memory.
//
// A Store may sit on a base Store: it then holds only what it added, and
// finds the rest in the base. Reloads that change a few items build such
// overlays instead of copying every blob; a full reload builds a flat
// store again.
type Store struct {
	base *Store // nil, or a flat store
	blobSet
	bytes int64
	dir   *Dir // nil: every blob is in memory
}

// blob is one blob of a Store: its bytes when they are held in memory
// (an empty blob always is), else nil and the Dir's file holds them.
type blob struct {
	data []byte
	size int64
}

func (b blob) inMemory() bool { return b.data != nil }

// blobSet is the blobs a Store or Builder holds itself: the size of each,
// and the bytes of those held in memory. Over a Dir nearly none are, so
// the bytes are a map of their own, and the map every blob is in holds
// 8 bytes beside each digest.
type blobSet struct {
	sizes map[Digest]int64
	mem   map[Digest][]byte // nil until a blob is held in memory
}

func newBlobSet() blobSet { return blobSet{sizes: map[Digest]int64{}} }

func (bs blobSet) get(d Digest) (blob, bool) {
	size, ok := bs.sizes[d]
	if !ok {
		return blob{}, false
	}
	return blob{data: bs.mem[d], size: size}, true
}

func (bs *blobSet) set(d Digest, b blob) {
	bs.sizes[d] = b.size
	if b.inMemory() {
		if bs.mem == nil {
			bs.mem = map[Digest][]byte{}
		}
		bs.mem[d] = b.data
	}
}

func (bs blobSet) clone() blobSet {
	return blobSet{sizes: maps.Clone(bs.sizes), mem: maps.Clone(bs.mem)}
}

func (s *Store) lookup(d Digest) (blob, bool) {
	for ; s != nil; s = s.base {
		if b, ok := s.get(d); ok {
			return b, true
		}
	}
	return blob{}, false
}

// Get returns the bytes with digest d, read from the Dir when they are
// not in memory. The slice must not be modified.
func (s *Store) Get(d Digest) ([]byte, bool) {
	b, ok := s.Blob(d)
	if !ok {
		return nil, false
	}
	data, err := b.Bytes()
	return data, err == nil
}

// Read returns the bytes with digest d as Get does, without keeping
// them in the Dir's hot cache (see blob.read).
func (s *Store) Read(d Digest) ([]byte, bool) {
	e, ok := s.lookup(d)
	if !ok {
		return nil, false
	}
	return e.read(d, s.dir)
}

// Blob returns the blob with digest d, for serving without reading it
// whole.
func (s *Store) Blob(d Digest) (Blob, bool) {
	b, ok := s.lookup(d)
	if !ok {
		return Blob{}, false
	}
	return Blob{digest: d, size: b.size, data: b.data, dir: s.dir}, true
}

// Digests lists every digest the store holds, in no order.
func (s *Store) Digests() []Digest {
	var out []Digest
	for ; s != nil; s = s.base {
		for d := range s.sizes {
			out = append(out, d)
		}
	}
	return out
}

// Has reports whether the store holds d.
func (s *Store) Has(d Digest) bool {
	_, ok := s.lookup(d)
	return ok
}

// Len is the number of distinct blobs.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	return len(s.sizes) + s.base.Len()
}

// Bytes is the total size of all distinct blobs. An overlay counts its
// base whole, including blobs of items removed since the base was built.
func (s *Store) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes + s.base.Bytes()
}

// MemoryBytes is the part of Bytes held in memory rather than in the Dir.
func (s *Store) MemoryBytes() int64 {
	var n int64
	for ; s != nil; s = s.base {
		for _, data := range s.mem {
			n += int64(len(data))
		}
	}
	return n
}

// Dir is the directory the store's blobs are written to, or nil.
func (s *Store) Dir() *Dir {
	if s == nil {
		return nil
	}
	return s.dir
}

// OverlayLen is the number of blobs an overlay holds itself (0 for a flat
// store).
func (s *Store) OverlayLen() int {
	if s == nil || s.base == nil {
		return 0
	}
	return len(s.sizes)
}

// OverlayBytes is the size of the blobs an overlay holds itself (0 for
// a flat store).
func (s *Store) OverlayBytes() int64 {
	if s == nil || s.base == nil {
		return 0
	}
	return s.bytes
}

// Flat reports whether s holds all of its blobs itself (no base).
func (s *Store) Flat() bool { return s != nil && s.base == nil }

// EachMissing calls fn with the digest and size of every blob s holds
// that other does not. What the two share through a base is skipped
// without being visited, so after a partial reload the cost follows the
// overlay, not the store.
func (s *Store) EachMissing(other *Store, fn func(Digest, int64)) {
	if s == nil || s == other || other != nil && other.base == s {
		return // other holds all of s
	}
	visit := func(sizes map[Digest]int64) {
		for d, size := range sizes {
			if !other.Has(d) {
				fn(d, size)
			}
		}
	}
	visit(s.sizes)
	if s.base != nil && s.base != other && (other == nil || s.base != other.base) {
		visit(s.base.sizes)
	}
}

// Blob is one blob of a Store, to be read or served.
type Blob struct {
	digest Digest
	size   int64
	data   []byte
	dir    *Dir
}

// BytesBlob is data as a Blob held in memory, for bytes built per request.
func BytesBlob(data []byte) Blob {
	if data == nil {
		data = []byte{}
	}
	return Blob{digest: Sum(data), size: int64(len(data)), data: data}
}

// Digest is the blob's digest.
func (b Blob) Digest() Digest { return b.digest }

// Size is the blob's length in bytes.
func (b Blob) Size() int64 { return b.size }

// InMemory returns the blob's bytes when it is held in memory.
func (b Blob) InMemory() ([]byte, bool) { return b.data, b.data != nil }

// Bytes returns the whole blob: its bytes in memory, or from its file,
// through the Dir's hot cache when the blob is small enough for it (so
// a page, an MCP read or a ClawHub download of a small file does not
// read it again per call). The bytes are shared: the caller must not
// change them.
func (b Blob) Bytes() ([]byte, error) {
	if b.data != nil || b.dir == nil {
		return b.data, nil
	}
	if data, ok, err := b.dir.Small(b.digest, b.size); ok {
		return data, err
	}
	return b.dir.Read(b.digest)
}

// Open returns a reader of the blob: its file (verified; see Dir.Open),
// or a reader of its bytes in memory. The caller closes it.
func (b Blob) Open() (io.ReadSeekCloser, error) {
	if b.data != nil || b.dir == nil {
		return nopCloser{bytes.NewReader(b.data)}, nil
	}
	f, _, err := b.dir.Open(b.digest)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Small returns the bytes of a blob kept in a file when it is small
// enough for the Dir's hot cache (Dir.Small); ok is false otherwise, and
// for a blob in memory (InMemory has its bytes).
func (b Blob) Small() (data []byte, ok bool, err error) {
	if b.data != nil || b.dir == nil {
		return nil, false, nil
	}
	return b.dir.Small(b.digest, b.size)
}

// OpenFile is Open for a blob kept in a file: the *os.File itself, which
// net/http can send with sendfile. ok is false for a blob in memory.
func (b Blob) OpenFile() (f *os.File, ok bool, err error) {
	if b.data != nil || b.dir == nil {
		return nil, false, nil
	}
	f, _, err = b.dir.Open(b.digest)
	return f, true, err
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// Builder collects blobs for a new Store. It is safe for concurrent use.
type Builder struct {
	mu   sync.Mutex
	base *Store
	blobSet
	bytes int64
	dir   *Dir
}

// NewBuilder returns an empty Builder for a flat Store whose blobs are
// written to dir (nil: held in memory).
func NewBuilder(dir *Dir) *Builder {
	return &Builder{blobSet: newBlobSet(), dir: dir}
}

// NewOverlay returns a Builder for a Store that keeps everything prev
// holds and adds to it without copying prev's base, into prev's Dir.
func NewOverlay(prev *Store) *Builder {
	if prev == nil {
		return NewBuilder(nil)
	}
	if prev.base == nil {
		return &Builder{base: prev, blobSet: newBlobSet(), dir: prev.dir}
	}
	return &Builder{base: prev.base, blobSet: prev.clone(), bytes: prev.bytes, dir: prev.dir}
}

// Dir is the directory the builder writes blobs to, or nil.
func (b *Builder) Dir() *Dir { return b.dir }

// Put adds b and returns its digest. Identical bytes are stored once.
func (b *Builder) Put(data []byte) Digest {
	d := Sum(data)
	b.PutDigested(d, data)
	return d
}

// PutDigested adds data whose digest the caller already computed. Over a
// Dir the bytes are written to it and not kept; when the Dir cannot take
// them (the fault is reported once), they are kept in memory.
func (b *Builder) PutDigested(d Digest, data []byte) {
	b.mu.Lock()
	_, held := b.sizes[d]
	held = held || b.base.Has(d)
	b.mu.Unlock()
	if held {
		return
	}
	e := blob{data: data, size: int64(len(data))}
	if data == nil {
		e.data = []byte{}
	}
	if b.dir != nil && len(data) > 0 && b.dir.Write(d, data) == nil {
		e.data = nil
	}
	b.add(d, e)
}

func (b *Builder) add(d Digest, e blob) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.sizes[d]; ok || b.base.Has(d) {
		return
	}
	b.set(d, e)
	b.bytes += e.size
}

// Reuse adds the blob d of size bytes without its bytes: from the Dir
// when it holds d, else from the store from (a previous scan's) when it
// holds them in memory. It reports false when neither does; the caller
// then reads the bytes and puts them.
func (b *Builder) Reuse(d Digest, size int64, from *Store) bool {
	if b.Has(d) {
		return true
	}
	e, ok := b.source(d, size, from)
	if ok {
		b.add(d, e)
	}
	return ok
}

// Carry adds the blob d as from holds it (in memory or in the Dir): a
// version kept from a previous scan brings its blobs along.
func (b *Builder) Carry(d Digest, from *Store) {
	if e, ok := from.lookup(d); ok {
		b.add(d, e)
	}
}

// Available reports whether Reuse would find d, adding nothing.
func (b *Builder) Available(d Digest, size int64, from *Store) bool {
	if b.Has(d) {
		return true
	}
	_, ok := b.source(d, size, from)
	return ok
}

func (b *Builder) source(d Digest, size int64, from *Store) (blob, bool) {
	if size == 0 {
		return blob{data: []byte{}}, true
	}
	if old, ok := from.lookup(d); ok && old.inMemory() {
		return old, true
	}
	if b.dir != nil && b.dir.Has(d) {
		return blob{size: size}, true
	}
	return blob{}, false
}

// Has reports whether the builder (or the store it overlays) holds d.
func (b *Builder) Has(d Digest) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.sizes[d]
	return ok || b.base.Has(d)
}

// Get returns the bytes the builder (or the store it overlays) holds for
// d, read from the Dir when they are not in memory.
func (b *Builder) Get(d Digest) ([]byte, bool) {
	b.mu.Lock()
	e, ok := b.get(d)
	b.mu.Unlock()
	if !ok {
		if e, ok = b.base.lookup(d); !ok {
			return nil, false
		}
	}
	return e.read(d, b.dir)
}

// read returns e's bytes (it is the blob d of dir): held in memory, in
// the hot cache, or read from its file. Unlike Blob.Bytes it leaves the
// hot cache as it is: the scan's reads (a SKILL.md to parse again, an
// archive's deflated entries) are not what clients ask for.
func (e blob) read(d Digest, dir *Dir) ([]byte, bool) {
	if e.data != nil || dir == nil {
		return e.data, true
	}
	data, err := dir.readThroughHot(d)
	return data, err == nil
}

// Store freezes the builder into a Store. The Builder must not be used
// afterwards.
func (b *Builder) Store() *Store {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Store{base: b.base, blobSet: b.blobSet, bytes: b.bytes, dir: b.dir}
	b.blobSet = blobSet{}
	return s
}

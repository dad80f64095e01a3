package content

import (
	"maps"
	"sync"
)

// Store is an immutable set of blobs keyed by their digest. A Store is
// built once by a Builder and never changes afterwards, so readers need no
// locks.
//
// A Store may sit on a base Store: it then holds only what it added, and
// finds the rest in the base. Reloads that change a few items build such
// overlays instead of copying every blob; a full reload builds a flat
// store again.
type Store struct {
	base  *Store // nil, or a flat store
	blobs map[Digest][]byte
	bytes int64
}

// Get returns the bytes with digest d. The slice must not be modified.
func (s *Store) Get(d Digest) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	if b, ok := s.blobs[d]; ok {
		return b, true
	}
	return s.base.Get(d)
}

// Has reports whether the store holds d.
func (s *Store) Has(d Digest) bool {
	_, ok := s.Get(d)
	return ok
}

// Len is the number of distinct blobs.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	return len(s.blobs) + s.base.Len()
}

// Bytes is the total size of all distinct blobs. An overlay counts its
// base whole, including blobs of items removed since the base was built.
func (s *Store) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes + s.base.Bytes()
}

// OverlayLen is the number of blobs an overlay holds itself (0 for a flat
// store).
func (s *Store) OverlayLen() int {
	if s == nil || s.base == nil {
		return 0
	}
	return len(s.blobs)
}

// EachMissing calls fn with every blob s holds that other does not.
// What the two share through a base is skipped without being visited, so
// after a partial reload the cost follows the overlay, not the store.
func (s *Store) EachMissing(other *Store, fn func(Digest, []byte)) {
	if s == nil || s == other || other != nil && other.base == s {
		return // other holds all of s
	}
	visit := func(blobs map[Digest][]byte) {
		for d, b := range blobs {
			if !other.Has(d) {
				fn(d, b)
			}
		}
	}
	visit(s.blobs)
	if s.base != nil && s.base != other && (other == nil || s.base != other.base) {
		visit(s.base.blobs)
	}
}

// OverlayBytes is the size of the blobs an overlay holds itself (0 for
// a flat store).
func (s *Store) OverlayBytes() int64 {
	if s == nil || s.base == nil {
		return 0
	}
	return s.bytes
}

// Builder collects blobs for a new Store. It is safe for concurrent use.
type Builder struct {
	mu    sync.Mutex
	base  *Store
	blobs map[Digest][]byte
	bytes int64
}

// NewBuilder returns an empty Builder for a flat Store.
func NewBuilder() *Builder {
	return &Builder{blobs: make(map[Digest][]byte)}
}

// NewOverlay returns a Builder for a Store that keeps everything prev
// holds and adds to it without copying prev's base.
func NewOverlay(prev *Store) *Builder {
	if prev == nil {
		return NewBuilder()
	}
	if prev.base == nil {
		return &Builder{base: prev, blobs: make(map[Digest][]byte)}
	}
	return &Builder{base: prev.base, blobs: maps.Clone(prev.blobs), bytes: prev.bytes}
}

// Put adds b and returns its digest. Identical bytes are stored once.
func (b *Builder) Put(data []byte) Digest {
	d := Sum(data)
	b.PutDigested(d, data)
	return d
}

// PutDigested adds data whose digest the caller already computed.
func (b *Builder) PutDigested(d Digest, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.blobs[d]; ok || b.base.Has(d) {
		return
	}
	b.blobs[d] = data
	b.bytes += int64(len(data))
}

// Get returns the bytes the builder (or the store it overlays) holds for
// d, so that a caller that read the same bytes again can keep one copy.
func (b *Builder) Get(d Digest) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if data, ok := b.blobs[d]; ok {
		return data, true
	}
	return b.base.Get(d)
}

// Store freezes the builder into a Store. The Builder must not be used
// afterwards.
func (b *Builder) Store() *Store {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Store{base: b.base, blobs: b.blobs, bytes: b.bytes}
	b.blobs = nil
	return s
}

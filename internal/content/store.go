package content

// Store is an immutable set of blobs keyed by their digest. A Store is
// built once by a Builder and never changes afterwards, so readers need no
// locks.
type Store struct {
	blobs map[Digest][]byte
	bytes int64
}

// Get returns the bytes with digest d. The slice must not be modified.
func (s *Store) Get(d Digest) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	b, ok := s.blobs[d]
	return b, ok
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
	return len(s.blobs)
}

// Bytes is the total size of all distinct blobs.
func (s *Store) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes
}

// Builder collects blobs for a new Store. It is not safe for concurrent use.
type Builder struct {
	blobs map[Digest][]byte
	bytes int64
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{blobs: make(map[Digest][]byte)}
}

// Put adds b and returns its digest. Identical bytes are stored once.
func (b *Builder) Put(data []byte) Digest {
	d := Sum(data)
	b.PutDigested(d, data)
	return d
}

// PutDigested adds data whose digest the caller already computed.
func (b *Builder) PutDigested(d Digest, data []byte) {
	if _, ok := b.blobs[d]; ok {
		return
	}
	b.blobs[d] = data
	b.bytes += int64(len(data))
}

// Store freezes the builder into a Store. The Builder must not be used
// afterwards.
func (b *Builder) Store() *Store {
	s := &Store{blobs: b.blobs, bytes: b.bytes}
	b.blobs = nil
	return s
}

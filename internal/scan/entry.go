package scan

import (
	"fmt"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
	"github.com/skillserver/skillserver/internal/skill"
)

// entryScanner is what the scanners of both roots share: the scan's
// inputs and the entry being filled.
type entryScanner[V item.Version] struct {
	scanBase
	cur *Entry[V]
}

func newEntryScanner[V item.Version](base scanBase) entryScanner[V] {
	return entryScanner[V]{scanBase: base, cur: &Entry[V]{Gen: base.generation}}
}

func (s *entryScanner[V]) problem(p skill.Problem) { s.cur.Problems = append(s.cur.Problems, p) }

// finish keeps the last good versions of key from last (the previous
// scan's entries of the root) and returns the entry, or nil when there is
// nothing to keep.
func (s *entryScanner[V]) finish(last map[string]*Entry[V], key string) *Entry[V] {
	s.cur.keepLastGood(s.blobs, s.prev, last, key, s.t.report)
	if s.cur.Item == nil && len(s.cur.Problems) == 0 && !s.cur.Linked {
		return nil
	}
	return s.cur
}

// scanBase is what the scanners of one entry need: the root, the blob
// builder of the store being built, the entry's cache, and the previous
// scan for last good versions.
type scanBase struct {
	t          *treeRoot
	lim        Limits
	blobs      *content.Builder
	ec         *entryScan
	prev       *Result // nil on the first scan
	generation uint64
}

// cachedRead is a fileReader through the entry's cache: a file whose stat
// is unchanged, and whose bytes are at hand, is not read again. The cache
// knows a file by its path below the root, whose bytes the item's
// resource path shares (listFiles).
func (s *scanBase) cachedRead(f *versionFile, read func() ([]byte, error)) error {
	data, c, err := s.ec.file(f.full, f.st, read, func(b []byte) []skill.Problem { return fileChecks(s.t.report(f.full), f.rel, b) }, s.have)
	if err != nil {
		return err
	}
	f.read, f.data, f.digest, f.size, f.problems = true, data, c.digest, c.size, c.problems
	return nil
}

// prevStore is the previous scan's store, or nil.
func (s *scanBase) prevStore() *content.Store {
	if s.prev == nil {
		return nil
	}
	return s.prev.Store
}

// have reports whether the bytes of d (size long) are at hand without
// reading the tree: in the store being built, the previous one, or the
// state directory.
func (s *scanBase) have(d content.Digest, size int64) bool {
	return s.blobs.Available(d, size, s.prevStore())
}

// bytesOf returns f's bytes: those read, else the store's copy, else the
// file read again (and refused if it changed since its digest was
// taken).
func (s *scanBase) bytesOf(f *versionFile) ([]byte, error) {
	if f.data != nil || f.size == 0 {
		return f.data, nil
	}
	if b, ok := s.stored(f.digest); ok {
		return b, nil
	}
	b, err := s.t.readPath(f.full, f.size)
	if err != nil {
		return nil, err
	}
	if content.Sum(b) != f.digest {
		return nil, fmt.Errorf("%s changed while it was scanned", f.full)
	}
	return b, nil
}

// stored returns the bytes of d from the store being built or the
// previous one.
func (s *scanBase) stored(d content.Digest) ([]byte, bool) {
	if b, ok := s.blobs.Get(d); ok {
		return b, true
	}
	return s.prevStore().Read(d)
}

// put stores f's bytes in the store being built: reused without reading
// when they are at hand, else read (bytesOf).
func (s *scanBase) put(f *versionFile) error {
	if f.data != nil {
		s.blobs.PutDigested(f.digest, f.data)
		return nil
	}
	if s.blobs.Reuse(f.digest, f.size, s.prevStore()) {
		return nil
	}
	b, err := s.bytesOf(f)
	if err != nil {
		return err
	}
	s.blobs.PutDigested(f.digest, b)
	return nil
}

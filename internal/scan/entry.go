package scan

import (
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
	s.cur.keepLastGood(s.blobs, s.prev, last, key)
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
// is unchanged is not read again.
func (s *scanBase) cachedRead(f *versionFile, read func() ([]byte, error)) ([]byte, content.Digest, error) {
	return s.ec.file(s.t.report(f.full), f.st, read, s.blobs.Get)
}

package scan

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// An entryCache is kept between scans as bytes (encodeEntry), one slice
// per entry, and decoded only when a scan opens the entry: a few hundred
// bytes in one allocation instead of a tree of rows, strings and slices
// that would outlive the scan among the snapshot's own objects and leave
// holes in the heap once dropped. The same bytes are what a shard on disk
// holds (persist.go), and equal bytes mean an unchanged entry.
//
// The encoding: every number a varint (unsigned for counts, lengths and
// inodes), every string its length and bytes, a digest its 32 bytes (tag
// 1) or, if it is not one, its string (tag 0), a slice that may be nil
// its length plus one (0: nil). Each table is its row count, then its
// rows in key order, each row its key and value:
//
//	entry:   files zips skills agents
//	file:    size mtime inode readAt digest problems
//	zip:     digest size deflated (a table of span: off len)
//	parsed:  digest value problems
//	problem: path rule severity message
//
// A decoded entry's table keys are views of its bytes (decoder.key).
//
// A change of any of these, or of a field of skill.SkillMD, skill.AgentMD
// or skill.Problem, changes cacheMagic (a field left out of the encoding
// fails TestEntryCodecRoundTrip).

// encodeEntry returns e's bytes; e must be frozen.
func encodeEntry(e *entryCache) []byte { return appendEntry(nil, e) }

// appendEntry appends e's bytes to dst.
func appendEntry(dst []byte, e *entryCache) []byte {
	w := encoder{b: dst}
	putTable(&w, e.files, func(w *encoder, f cachedFile) {
		w.varint(f.size)
		w.varint(f.mtime)
		w.uvarint(f.inode)
		w.varint(f.readAt)
		w.digest(f.digest)
		w.problems(f.problems)
	})
	putTable(&w, e.zips, func(w *encoder, z cachedZip) {
		w.digest(z.digest)
		w.varint(z.size)
		putTable(w, z.deflated, func(w *encoder, s content.Span) {
			w.varint(s.Off)
			w.varint(s.Len)
		})
	})
	putTable(&w, e.skills, func(w *encoder, p parsedSkill) {
		w.digest(p.digest)
		v := p.value
		w.str(v.Name)
		w.str(v.Description)
		w.str(v.License)
		w.str(v.Compatibility)
		w.str(v.AllowedTools)
		w.meta(v.Metadata)
		w.str(v.Version)
		w.problems(p.problems)
	})
	putTable(&w, e.agents, func(w *encoder, p parsedAgent) {
		w.digest(p.digest)
		v := p.value
		w.str(v.Name)
		w.str(v.Description)
		w.strs(v.Tools)
		w.str(v.ModelRole)
		w.varint(int64(v.TimeoutSeconds))
		w.varint(int64(v.PrefillTimeoutSeconds))
		w.str(v.Visibility)
		w.boolean(v.EmitStructuredFindings)
		w.meta(v.Metadata)
		w.str(v.Version)
		w.problems(p.problems)
	})
	return w.b
}

// errEntryCodec reports bytes encodeEntry did not write.
var errEntryCodec = errors.New("malformed cache entry")

// decodeEntry is the entryCache whose bytes are b (encodeEntry).
func decodeEntry(b []byte) (*entryCache, error) {
	r := decoder{b: b}
	e := &entryCache{}
	e.files = getTable(&r, func(r *decoder) cachedFile {
		return cachedFile{size: r.varint(), mtime: r.varint(), inode: r.uvarint(), readAt: r.varint(), digest: r.digest(), problems: r.problems()}
	})
	e.zips = getTable(&r, func(r *decoder) cachedZip {
		z := cachedZip{digest: r.digest(), size: r.varint()}
		z.deflated = getTable(r, func(r *decoder) content.Span { return content.Span{Off: r.varint(), Len: r.varint()} })
		return z
	})
	e.skills = getTable(&r, func(r *decoder) parsedSkill {
		p := parsedSkill{digest: r.digest()}
		p.value = skill.SkillMD{Name: r.str(), Description: r.str(), License: r.str(), Compatibility: r.str(),
			AllowedTools: r.str(), Metadata: r.meta(), Version: r.str()}
		p.problems = r.problems()
		return p
	})
	e.agents = getTable(&r, func(r *decoder) parsedAgent {
		p := parsedAgent{digest: r.digest()}
		p.value = skill.AgentMD{Name: r.str(), Description: r.str(), Tools: r.strs(), ModelRole: r.str(),
			TimeoutSeconds: int(r.varint()), PrefillTimeoutSeconds: int(r.varint()), Visibility: r.str(),
			EmitStructuredFindings: r.boolean(), Metadata: r.meta(), Version: r.str()}
		p.problems = r.problems()
		return p
	})
	if r.err == nil && len(r.b) != 0 {
		r.err = errEntryCodec
	}
	if r.err != nil {
		return nil, r.err
	}
	return e, nil
}

func putTable[T any](w *encoder, t table[T], put func(*encoder, T)) {
	w.uvarint(uint64(len(t.rows)))
	for _, r := range t.rows {
		w.str(r.key)
		put(w, r.v)
	}
}

// getTable reads a table putTable wrote: its rows are in key order, so it
// is frozen as read. Rows out of order are malformed.
func getTable[T any](r *decoder, get func(*decoder) T) table[T] {
	n := r.count()
	if n == 0 {
		return table[T]{}
	}
	t := table[T]{rows: make([]row[T], 0, n), frozen: true}
	for range n {
		k := r.key()
		if len(t.rows) > 0 && k <= t.rows[len(t.rows)-1].key {
			r.fail()
		}
		if r.err != nil {
			return table[T]{}
		}
		t.rows = append(t.rows, row[T]{k, get(r)})
	}
	return t
}

type encoder struct{ b []byte }

func (w *encoder) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *encoder) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }

func (w *encoder) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *encoder) boolean(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// strs writes ss, telling nil from empty.
func (w *encoder) strs(ss []string) {
	if ss == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(ss)) + 1)
	for _, s := range ss {
		w.str(s)
	}
}

func (w *encoder) digest(d content.Digest) {
	if b, ok := d.Bytes(); ok {
		w.b = append(w.b, 1)
		w.b = append(w.b, b[:]...)
		return
	}
	w.b = append(w.b, 0)
	w.str(string(d))
}

func (w *encoder) problems(ps []skill.Problem) {
	w.uvarint(uint64(len(ps)))
	for _, p := range ps {
		w.str(p.Path)
		w.str(p.Rule)
		w.str(string(p.Severity))
		w.str(p.Message)
	}
}

// meta writes m, telling absent (nil) from empty, and each entry's list
// from none.
func (w *encoder) meta(m skill.Meta) {
	if m == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(m)) + 1)
	for _, e := range m {
		w.str(e.Key)
		w.str(e.Value)
		w.strs(e.List)
	}
}

// decoder reads what encoder wrote; the first malformed read sets err,
// after which every read returns a zero value.
type decoder struct {
	b   []byte
	err error
}

func (r *decoder) fail() {
	if r.err == nil {
		r.err = errEntryCodec
	}
	r.b = nil
}

func (r *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *decoder) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number of items that each take at least one byte: more
// than the bytes left is malformed, so no bad count allocates.
func (r *decoder) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *decoder) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *decoder) str() string { return string(r.bytes(r.uvarint())) }

// key reads a table's key as a view of the bytes, not a copy: a decoded
// entry is the previous generation of one entry's scan, whose keys are
// only looked up (the new generation is keyed by the scan's own paths
// and digests), and the bytes are never written.
func (r *decoder) key() string {
	b := r.bytes(r.uvarint())
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (r *decoder) boolean() bool {
	b := r.bytes(1)
	if len(b) == 1 && b[0] > 1 {
		r.fail()
	}
	return len(b) == 1 && b[0] == 1
}

// nilable reads the count of a slice strs or meta wrote: -1 for nil.
// Like count, it refuses more items than bytes left.
func (r *decoder) nilable() int {
	n := r.uvarint()
	if n == 0 {
		return -1
	}
	if n-1 > uint64(len(r.b)) {
		r.fail()
		return -1
	}
	return int(n - 1)
}

func (r *decoder) strs() []string {
	n := r.nilable()
	if n < 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

func (r *decoder) digest() content.Digest {
	switch tag := r.bytes(1); {
	case len(tag) == 0:
		return ""
	case tag[0] == 1:
		var b [32]byte
		copy(b[:], r.bytes(32))
		if r.err != nil {
			return ""
		}
		return content.DigestOf(b)
	case tag[0] == 0:
		return content.Digest(r.str())
	}
	r.fail()
	return ""
}

func (r *decoder) problems() []skill.Problem {
	n := r.count()
	if n == 0 {
		return nil
	}
	ps := make([]skill.Problem, n)
	for i := range ps {
		ps[i] = skill.Problem{Path: r.str(), Rule: r.str(), Severity: r.severity(), Message: r.str()}
	}
	return ps
}

// severity reads a problem's severity, the package's own string for
// the two it has.
func (r *decoder) severity() skill.Severity {
	switch b := r.bytes(r.uvarint()); string(b) {
	case string(skill.SeverityError):
		return skill.SeverityError
	case string(skill.SeverityWarning):
		return skill.SeverityWarning
	default:
		return skill.Severity(b)
	}
}

func (r *decoder) meta() skill.Meta {
	n := r.nilable()
	if n < 0 {
		return nil
	}
	m := make(skill.Meta, n)
	for i := range m {
		m[i] = skill.MetaEntry{Key: r.str(), Value: r.str(), List: r.strs()}
	}
	return m
}

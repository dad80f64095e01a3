package provenance

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The commit's time is read from the object database as git stores it: a
// loose object (zlib, "commit <size>\x00" then the text) or an entry of a
// pack (found through its version 2 index), possibly a delta against
// another entry. Everything read is bounded: objects by maxFileBytes,
// delta chains by maxDeltaDepth.

// maxDeltaDepth bounds a chain of deltas; git's default depth is 50.
const maxDeltaDepth = 100

// Pack entry types (gitformat-pack).
const (
	objCommit   = 1
	objOfsDelta = 6
	objRefDelta = 7
)

var errObjectNotFound = errors.New("object not found")

// commitTime is the committer time of the commit id in the object
// database under common (the repository's common directory).
func commitTime(common, id string) (time.Time, error) {
	objects := filepath.Join(common, "objects")
	typ, data, err := readObject(objects, id)
	if err != nil {
		return time.Time{}, fmt.Errorf("commit %s: %w", id, err)
	}
	if typ != objCommit {
		return time.Time{}, fmt.Errorf("%s is not a commit", id)
	}
	return committerTime(data)
}

// committerTime parses the "committer NAME <EMAIL> SECONDS ZONE" header of
// a commit's text.
func committerTime(data []byte) (time.Time, error) {
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			break // the headers end at the first empty line
		}
		rest, ok := strings.CutPrefix(line, "committer ")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '>')
		fields := strings.Fields(rest[i+1:])
		if i < 0 || len(fields) != 2 {
			break
		}
		sec, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			break
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Time{}, errors.New("commit has no committer time")
}

// readObject returns the type and content of object id: loose, or from
// any pack.
func readObject(objects, id string) (int, []byte, error) {
	if len(id) < 3 {
		return 0, nil, errObjectNotFound
	}
	if typ, data, err := readLoose(filepath.Join(objects, id[:2], id[2:])); !errors.Is(err, os.ErrNotExist) {
		return typ, data, err
	}
	raw, err := hex.DecodeString(id)
	if err != nil {
		return 0, nil, err
	}
	idxs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	sort.Strings(idxs)
	for _, idx := range idxs {
		typ, data, err := readPacked(objects, idx, raw, 0)
		if !errors.Is(err, errObjectNotFound) {
			return typ, data, err
		}
	}
	return 0, nil, errObjectNotFound
}

// readLoose reads a loose object file.
func readLoose(path string) (int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	b, err := inflate(f, maxFileBytes+64)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	header, data, ok := bytes.Cut(b, []byte{0})
	kind, size, _ := strings.Cut(string(header), " ")
	if !ok || strconv.Itoa(len(data)) != size {
		return 0, nil, fmt.Errorf("%s: not a loose object", path)
	}
	if kind != "commit" {
		return 0, data, nil
	}
	return objCommit, data, nil
}

// inflate reads the zlib stream in r, refusing more than limit bytes.
func inflate(r io.Reader, limit int64) ([]byte, error) {
	z, err := zlib.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	b, err := io.ReadAll(io.LimitReader(z, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("object larger than %d bytes", limit)
	}
	return b, err
}

// readPacked looks id up in the pack index idx and reads its entry.
func readPacked(objects, idx string, id []byte, depth int) (int, []byte, error) {
	f, err := os.Open(idx)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	off, err := lookup(f, id)
	if err != nil {
		return 0, nil, err
	}
	pack, err := os.Open(strings.TrimSuffix(idx, ".idx") + ".pack")
	if err != nil {
		return 0, nil, err
	}
	defer pack.Close()
	return readEntry(objects, idx, pack, off, len(id), depth)
}

// lookup finds id's offset in the pack through a version 2 index: a
// fan-out table of 256 counts, the sorted object names, their CRCs, then
// 31-bit offsets whose top bit points into a table of 64-bit ones. It
// reads only the entries its binary search visits.
func lookup(idx *os.File, id []byte) (int64, error) {
	var head [8 + 256*4]byte
	if _, err := idx.ReadAt(head[:], 0); err != nil {
		return 0, fmt.Errorf("%s: %w", idx.Name(), err)
	}
	if !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return 0, fmt.Errorf("%s: not a version 2 pack index", idx.Name())
	}
	fanout := func(b int) int64 { return int64(binary.BigEndian.Uint32(head[8+4*b:])) }
	n, hs := fanout(255), int64(len(id))
	lo, hi := int64(0), fanout(int(id[0]))
	if id[0] > 0 {
		lo = fanout(int(id[0]) - 1)
	}
	if lo > hi || hi > n {
		return 0, fmt.Errorf("%s: bad fan-out table", idx.Name())
	}
	names := int64(len(head))
	name := make([]byte, hs)
	var readErr error
	i := lo + int64(sort.Search(int(hi-lo), func(k int) bool {
		if _, err := idx.ReadAt(name, names+(lo+int64(k))*hs); err != nil {
			readErr = err
			return true
		}
		return bytes.Compare(name, id) >= 0
	}))
	if readErr != nil {
		return 0, fmt.Errorf("%s: %w", idx.Name(), readErr)
	}
	if i >= hi {
		return 0, errObjectNotFound
	}
	if _, err := idx.ReadAt(name, names+i*hs); err != nil || !bytes.Equal(name, id) {
		return 0, errObjectNotFound
	}
	offsets := names + n*hs + n*4
	var b [8]byte
	if _, err := idx.ReadAt(b[:4], offsets+i*4); err != nil {
		return 0, fmt.Errorf("%s: %w", idx.Name(), err)
	}
	off := binary.BigEndian.Uint32(b[:4])
	if off&0x80000000 == 0 {
		return int64(off), nil
	}
	if _, err := idx.ReadAt(b[:], offsets+n*4+int64(off&0x7fffffff)*8); err != nil {
		return 0, fmt.Errorf("%s: %w", idx.Name(), err)
	}
	return int64(binary.BigEndian.Uint64(b[:])), nil
}

// readEntry reads the pack entry at off, resolving deltas: an offset
// delta's base is an earlier entry of the same pack, a ref delta's is
// named and looked up in this pack's index.
func readEntry(objects, idx string, pack *os.File, off int64, hashSize, depth int) (int, []byte, error) {
	if depth > maxDeltaDepth {
		return 0, nil, fmt.Errorf("%s: a delta chain longer than %d", pack.Name(), maxDeltaDepth)
	}
	r := bufio.NewReader(io.NewSectionReader(pack, off, 1<<62))
	c, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	typ, size := int(c>>4&7), int64(c&15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = r.ReadByte(); err != nil || shift > 56 {
			return 0, nil, fmt.Errorf("%s: bad entry header at %d", pack.Name(), off)
		}
		size |= int64(c&0x7f) << shift
	}
	if size > maxFileBytes {
		return 0, nil, fmt.Errorf("%s: object at %d is larger than %d bytes", pack.Name(), off, maxFileBytes)
	}
	var baseType int
	var base []byte
	switch typ {
	case objOfsDelta:
		// A big-endian base-128 number, each continuation adding one.
		c, err := r.ReadByte()
		rel := int64(c & 0x7f)
		for err == nil && c&0x80 != 0 && rel <= off {
			c, err = r.ReadByte()
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if err != nil || c&0x80 != 0 || rel <= 0 || rel > off {
			return 0, nil, fmt.Errorf("%s: bad delta base at %d", pack.Name(), off)
		}
		baseType, base, err = readEntry(objects, idx, pack, off-rel, hashSize, depth+1)
		if err != nil {
			return 0, nil, err
		}
	case objRefDelta:
		id := make([]byte, hashSize)
		if _, err := io.ReadFull(r, id); err != nil {
			return 0, nil, err
		}
		baseType, base, err = readPacked(objects, idx, id, depth+1)
		if err != nil {
			return 0, nil, err
		}
	}
	data, err := inflate(r, size)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: entry at %d: %w", pack.Name(), off, err)
	}
	if base == nil {
		return typ, data, nil
	}
	out, err := applyDelta(base, data)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: entry at %d: %w", pack.Name(), off, err)
	}
	return baseType, out, nil
}

// applyDelta rebuilds an object from its base and a delta: the sizes of
// both, then instructions that copy a range of the base or insert bytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	bad := errors.New("malformed delta")
	varint := func() (int, bool) {
		n, shift := 0, 0
		for len(delta) > 0 && shift < 63 {
			c := delta[0]
			delta = delta[1:]
			n |= int(c&0x7f) << shift
			if c&0x80 == 0 {
				return n, true
			}
			shift += 7
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(base) || dstSize > maxFileBytes {
		return nil, bad
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n int
			for i, shift := 0, 0; i < 7; i, shift = i+1, shift+8 {
				if op&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, bad
				}
				if i < 4 {
					off |= int(delta[0]) << shift
				} else {
					n |= int(delta[0]) << (shift - 32)
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, base[off:off+n]...)
		case op > 0:
			if int(op) > len(delta) || len(out)+int(op) > dstSize {
				return nil, bad
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, bad
		}
	}
	if len(out) != dstSize {
		return nil, bad
	}
	return out, nil
}

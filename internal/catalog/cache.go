package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strconv"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/content"
)

// scanCache lets a rescan skip unchanged work: files whose path, size,
// modification time and inode are unchanged are not re-read or re-hashed,
// and archives of unchanged file sets are not rebuilt. A Catalog keeps one
// across reloads; each scan records what it used in a fresh generation, so
// entries for deleted files do not accumulate and a failed scan leaves the
// previous generation intact.
type scanCache struct {
	files map[string]cachedFile
	zips  map[string]cachedZip
	// next collects the entries the running scan used.
	nextFiles map[string]cachedFile
	nextZips  map[string]cachedZip
	// Hits and misses of the running scan, for the reload log.
	fileHits, fileMisses int
}

type cachedFile struct {
	size   int64
	mtime  int64
	inode  uint64
	readAt time.Time
	digest content.Digest
	data   []byte
}

type cachedZip struct {
	digest content.Digest
	data   []byte
}

// inDoubt is how close to the moment it was read a file's modification
// time may be before the cache no longer trusts it: a write in the same
// timestamp tick as the read would otherwise go unnoticed.
const inDoubt = 2 * time.Second

func newScanCache() *scanCache {
	return &scanCache{files: map[string]cachedFile{}, zips: map[string]cachedZip{}}
}

func (c *scanCache) begin() {
	c.nextFiles = make(map[string]cachedFile, len(c.files))
	c.nextZips = make(map[string]cachedZip, len(c.zips))
	c.fileHits, c.fileMisses = 0, 0
}

// commit makes the finished scan's entries the cache. After a partial
// scan, entries of the previous generation stay while the new snapshot
// still holds their bytes (they belong to entries that were reused).
func (c *scanCache) commit(store *content.Store, partial bool) {
	if partial {
		for k, e := range c.files {
			if _, ok := c.nextFiles[k]; !ok && store.Has(e.digest) {
				c.nextFiles[k] = e
			}
		}
		for k, e := range c.zips {
			if _, ok := c.nextZips[k]; !ok && store.Has(e.digest) {
				c.nextZips[k] = e
			}
		}
	}
	c.files, c.zips = c.nextFiles, c.nextZips
	c.nextFiles, c.nextZips = nil, nil
}

func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// lookup returns the cached bytes of the file key when info shows it
// unchanged since it was read.
func (c *scanCache) lookup(key string, info fs.FileInfo) (cachedFile, bool) {
	e, ok := c.files[key]
	if !ok || e.size != info.Size() || e.mtime != info.ModTime().UnixNano() || e.inode != inodeOf(info) {
		return cachedFile{}, false
	}
	if !info.ModTime().Before(e.readAt.Add(-inDoubt)) {
		// Modified around the time it was read: confirm by digest.
		return cachedFile{}, false
	}
	return e, true
}

// file returns the bytes and digest of the file key, from the cache when
// info shows it unchanged, else by calling read.
func (c *scanCache) file(key string, info fs.FileInfo, read func() ([]byte, error)) ([]byte, content.Digest, error) {
	if e, ok := c.lookup(key, info); ok {
		c.fileHits++
		c.nextFiles[key] = e
		return e.data, e.digest, nil
	}
	readAt := time.Now()
	data, err := read()
	if err != nil {
		return nil, "", err
	}
	c.fileMisses++
	d := content.Sum(data)
	if prev, ok := c.files[key]; ok && prev.digest == d {
		data = prev.data // same bytes: keep sharing one slice with older snapshots
	}
	c.nextFiles[key] = cachedFile{size: info.Size(), mtime: info.ModTime().UnixNano(), inode: inodeOf(info), readAt: readAt, digest: d, data: data}
	return data, d, nil
}

// zip returns the archive of files, reusing the one built for the same
// paths, modes and digests.
func (c *scanCache) zip(files []content.ArchiveFile, digests []content.Digest) ([]byte, content.Digest, error) {
	h := sha256.New()
	for i, f := range files {
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatBool(f.Executable)))
		h.Write([]byte(digests[i]))
		h.Write([]byte{0})
	}
	key := hex.EncodeToString(h.Sum(nil))
	if e, ok := c.zips[key]; ok {
		c.nextZips[key] = e
		return e.data, e.digest, nil
	}
	if e, ok := c.nextZips[key]; ok {
		return e.data, e.digest, nil
	}
	data, err := content.BuildZip(files)
	if err != nil {
		return nil, "", err
	}
	e := cachedZip{digest: content.Sum(data), data: data}
	c.nextZips[key] = e
	return e.data, e.digest, nil
}

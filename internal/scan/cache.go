package scan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// Cache lets a rescan skip unchanged work: files whose path, size,
// modification time and inode are unchanged are not re-read or re-hashed,
// unchanged front matter is not parsed again, and archives of unchanged
// file sets are not rebuilt. A catalogue keeps one across reloads.
//
// It is kept per top-level entry (one skill folder, one agent name), so a
// reload that rescans one entry replaces one entry's cache, and entries
// that disappeared take their cache with them. Each scan of an entry
// writes a fresh entryCache from what it used; commit makes those the
// cache, and a failed scan commits nothing.
//
// A cache kept on disk (OpenCache) holds in memory only what it has not
// saved: Save drops the entries of each shard it wrote (or found
// unchanged), and a scan that opens an entry reads the entry's shard
// back (committed). Between reloads the server then holds its snapshot
// and no copy of what the scan knew about the files.
type Cache struct {
	// entries are the committed entry caches held in memory, each as
	// its bytes (codec.go): all of them, or, on disk, those of the
	// resident shards. Read by scans (through committed) and written by
	// commit, Save and Restore.
	entries map[string][]byte

	mu      sync.Mutex
	next    map[string][]byte // written by the running scan
	changed []string          // keys whose new cache differs from the old, this scan
	ignored []error           // shards read back during this scan and not trusted

	hits, misses atomic.Int64 // files taken from the cache / read, this scan
	zipped       atomic.Int64 // archives built (deflated), this scan

	persist *persisted // where it is kept on disk (persist.go); nil: memory only
}

type entryCache struct {
	files  table[cachedFile]
	zips   table[cachedZip]
	skills table[parsedSkill] // by the SKILL.md's path below the root
	agents table[parsedAgent] // by the agent file's path below the root
}

func newEntryCache() *entryCache { return &entryCache{} }

// freeze makes e read-only and quick to search, for the next scan.
func (e *entryCache) freeze() {
	e.files.freeze()
	e.zips.freeze()
	e.skills.freeze()
	e.agents.freeze()
}

type cachedFile struct {
	size   int64
	mtime  int64
	inode  uint64
	readAt int64 // when the file was read, in Unix nanoseconds
	digest content.Digest
	// problems are what the per-file rules found in the bytes (see
	// fileChecks): kept, so an unchanged file is not read to check it.
	problems []skill.Problem
}

type cachedZip struct {
	digest content.Digest
	size   int64
	// deflated locates each entry's deflated bytes in the archive by the
	// digest of the file, for later archives that hold the same file.
	deflated table[content.Span]
}

// parsed is a front matter parse result, valid for the same bytes
// (digest). The name the file must declare (its folder's or its own) is
// part of the path it is kept under, so it needs no check of its own.
type parsed[T any] struct {
	digest   content.Digest
	value    T
	problems []skill.Problem
}

type (
	parsedSkill = parsed[skill.SkillMD]
	parsedAgent = parsed[skill.AgentMD]
)

// inDoubt is how close to the moment it was read a file's modification
// time may be before the cache no longer trusts it: a write in the same
// timestamp tick as the read would otherwise go unnoticed.
const inDoubt = 2 * time.Second

// Len is the number of entries the cache holds in memory (all of them,
// until the first Save of a cache kept on disk); c may be nil.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.entries)
}

// Mark is what a Cache held at one moment (Cache.Mark).
type Mark struct {
	entries map[string][]byte
	disk    shardState // of a cache kept on disk
}

// Mark returns what c holds now, for Restore after one full scan.
func (c *Cache) Mark() Mark {
	m := Mark{entries: c.entries}
	if c.persist != nil {
		m.disk = c.persist.shardState
	}
	return m
}

// Restore makes c hold what it did at m again, for a full scan since m
// whose result is not kept (catalog.Catalog.Verify found nothing to
// publish): the tables that scan wrote go with its result, instead of
// replacing ones that say the same. Only a full scan may run since m (a
// partial one changes the committed tables in place). The shards are as
// they were at m: those to be saved then still are, and those the scan
// read back are dropped again.
func (c *Cache) Restore(m Mark) {
	c.entries = m.entries
	if c.persist != nil {
		c.persist.shardState = m.disk
		c.evict()
	}
}

func NewCache() *Cache {
	return &Cache{entries: map[string][]byte{}}
}

func (c *Cache) begin() {
	c.next = map[string][]byte{}
	c.changed, c.ignored = nil, nil
	c.hits.Store(0)
	c.misses.Store(0)
	c.zipped.Store(0)
}

// commit makes the finished scan's entry caches the cache. After a full
// scan they replace everything; after a partial one, only the entries that
// were rescanned (an entry without a new cache was removed).
//
// The entries whose cache changed, or that are gone, are marked for the
// next Save; an entry scanned again with every file, parse and archive
// reused is not written again.
func (c *Cache) commit(full bool, rescanned []string) {
	dirty := c.changed
	if full {
		for k := range c.entries {
			if _, ok := c.next[k]; !ok {
				dirty = append(dirty, k)
			}
		}
		c.entries = c.next
		if c.persist != nil {
			// A shard the scan did not read back holds no entry that
			// is left (each was opened), only ones since removed.
			for i := range cacheShards {
				if !c.persist.resident[i] {
					c.persist.resident[i], c.persist.dirty[i] = true, true
				}
			}
		}
	} else {
		for _, k := range rescanned {
			if e, ok := c.next[k]; ok {
				c.entries[k] = e
			} else {
				delete(c.entries, k)
				dirty = append(dirty, k)
			}
		}
	}
	c.markDirty(dirty)
	c.next, c.changed = nil, nil
}

// entryScan is the cache as one entry's scan sees it: the previous
// generation to read from, and the new one it fills.
type entryScan struct {
	c         *Cache
	key       string
	prevBytes []byte      // as committed; nil when the entry was not cached
	prev      *entryCache // prevBytes decoded; nil when the entry was not cached
	next      *entryCache
	// made is set once next holds a row prev did not: a file read, a
	// parse, an archive built. Until then every row of next is one of
	// prev's, under its key.
	made bool
}

func (c *Cache) open(key string) *entryScan {
	e := &entryScan{c: c, key: key, prevBytes: c.committed(key), next: newEntryCache()}
	if e.prevBytes != nil {
		prev, err := decodeEntry(e.prevBytes)
		if err != nil {
			c.mu.Lock()
			c.ignored = append(c.ignored, fmt.Errorf("scan cache: entry %s: %w; it is scanned again", key, err))
			c.mu.Unlock()
			e.prevBytes = nil
		}
		e.prev = prev
	}
	return e
}

// encodeBufs hold the bytes of an entry being encoded (close), so that
// only an entry that changed allocates, and only its length.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// close hands the entry's new cache to the running scan, as bytes: the
// tables it was built in are garbage from here on. An entry whose bytes
// are the previous ones keeps them and is not changed: one that made no
// row and kept as many as prev has is that without being encoded (a full
// rescan of an unchanged tree encodes nothing).
func (e *entryScan) close() {
	e.next.freeze()
	changed, b := true, e.prevBytes
	if p := e.prev; p != nil && !e.made && p.files.len() == e.next.files.len() && p.zips.len() == e.next.zips.len() &&
		p.skills.len() == e.next.skills.len() && p.agents.len() == e.next.agents.len() {
		changed = false
	} else {
		buf := encodeBufs.Get().(*[]byte)
		*buf = appendEntry((*buf)[:0], e.next)
		if changed = !bytes.Equal(*buf, e.prevBytes); changed {
			b = bytes.Clone(*buf)
		}
		encodeBufs.Put(buf)
	}
	e.c.mu.Lock()
	if changed {
		e.c.changed = append(e.c.changed, e.key)
	}
	e.c.next[e.key] = b
	e.c.mu.Unlock()
}

// file returns the digest of the file key and the problems check found
// in its bytes. When its stat shows it unchanged since it was read and
// have says its bytes are still at hand (in the store being built, the
// previous one or the state directory), they come from the cache and
// data is nil; else read reads the file and data holds its bytes.
func (e *entryScan) file(key string, st stat, read func() ([]byte, error), check func([]byte) []skill.Problem, have func(content.Digest, int64) bool) (data []byte, f cachedFile, err error) {
	var old cachedFile
	var known bool
	if e.prev != nil {
		old, known = e.prev.files.get(key)
	}
	if known && old.size == st.size && old.mtime == st.modNanos() && old.inode == st.ino &&
		st.modNanos() < old.readAt-int64(inDoubt) && // else modified around the read: confirm by digest
		have(old.digest, old.size) {
		e.c.hits.Add(1)
		e.next.files.set(key, old)
		return nil, old, nil
	}
	readAt := time.Now().UnixNano()
	data, err = read()
	if err != nil {
		return nil, cachedFile{}, err
	}
	e.made = true
	e.c.misses.Add(1)
	f = cachedFile{size: int64(len(data)), mtime: st.modNanos(), inode: st.ino, readAt: readAt, digest: content.Sum(data)}
	if known && old.digest == f.digest {
		f.problems = old.problems // the same bytes: the same findings
	} else {
		f.problems = check(data)
	}
	e.next.files.set(key, f)
	return data, f, nil
}

// parseSkill parses a SKILL.md (known to the cache by key, its path below
// the root; path is how problems name it), or reuses the result for the
// same bytes. load gives the bytes when they must be parsed.
func (e *entryScan) parseSkill(key, path, folder string, d content.Digest, load func() ([]byte, error), lim skill.Limits) (skill.SkillMD, []skill.Problem) {
	var prev *table[parsedSkill]
	if e.prev != nil {
		prev = &e.prev.skills
	}
	return reuseParse(&e.made, prev, &e.next.skills, key, d, func() (skill.SkillMD, []skill.Problem) {
		data, err := load()
		if err != nil {
			return skill.SkillMD{}, []skill.Problem{skill.Errorf(path, skill.RuleRead, "cannot read: %s", describeErr(err))}
		}
		return skill.ParseSkill(path, folder, data, lim)
	})
}

// parseAgent parses an agent-md file (key and path as for parseSkill), or
// reuses the result for the same bytes.
func (e *entryScan) parseAgent(key, path, want string, d content.Digest, load func() ([]byte, error), lim skill.Limits) (skill.AgentMD, []skill.Problem) {
	var prev *table[parsedAgent]
	if e.prev != nil {
		prev = &e.prev.agents
	}
	return reuseParse(&e.made, prev, &e.next.agents, key, d, func() (skill.AgentMD, []skill.Problem) {
		data, err := load()
		if err != nil {
			return skill.AgentMD{}, []skill.Problem{skill.Errorf(path, skill.RuleRead, "cannot read: %s", describeErr(err))}
		}
		return skill.ParseAgent(path, want, data, lim)
	})
}

// reuseParse returns prev's result for key when it was parsed from the
// same bytes, else parses and sets made; either way the result goes into
// next.
func reuseParse[T any](made *bool, prev, next *table[parsed[T]], key string, d content.Digest, parse func() (T, []skill.Problem)) (T, []skill.Problem) {
	if p, ok := prev.get(key); ok && p.digest == d {
		next.set(key, p)
		return p.value, p.problems
	}
	*made = true
	v, ps := parse()
	next.set(key, parsed[T]{digest: d, value: v, problems: ps})
	return v, ps
}

// zip returns the digest and size of the archive of files, reusing the
// one built for the same paths, modes and digests when its bytes are at
// hand (have). A new archive reuses the deflated entries of the entry's
// other archives for files they hold too, so a version that changed one
// file compresses one file. load gives a file's bytes; get an archive's.
// put stores a new archive.
func (e *entryScan) zip(files []content.ArchiveFile, digests []content.Digest, load func(i int) ([]byte, error),
	have func(content.Digest, int64) bool, get func(content.Digest) ([]byte, bool), put func(content.Digest, []byte)) (content.Digest, int64, error) {
	h := sha256.New()
	for i, f := range files {
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatBool(f.Executable)))
		h.Write([]byte(digests[i]))
		h.Write([]byte{0})
	}
	key := hex.EncodeToString(h.Sum(nil))
	if z, ok := e.next.zips.get(key); ok {
		return z.digest, z.size, nil
	}
	if e.prev != nil {
		if z, ok := e.prev.zips.get(key); ok && have(z.digest, z.size) {
			e.next.zips.set(key, z)
			return z.digest, z.size, nil
		}
	}
	archives := map[content.Digest][]byte{} // read once each
	for i := range files {
		if files[i].Data == nil {
			data, err := load(i)
			if err != nil {
				return "", 0, err
			}
			files[i].Data = data
		}
		files[i].Deflated = e.deflated(digests[i], get, archives)
	}
	data, err := content.BuildZip(skill.FileName, files)
	if err != nil {
		return "", 0, err
	}
	e.c.zipped.Add(1)
	e.made = true
	spans, err := content.ZipSpans(data)
	if err != nil {
		return "", 0, err
	}
	z := cachedZip{digest: content.Sum(data), size: int64(len(data))}
	for i, f := range files {
		z.deflated.set(string(digests[i]), spans[f.Path])
	}
	z.deflated.freeze()
	put(z.digest, data)
	e.next.zips.set(key, z)
	return z.digest, z.size, nil
}

// deflated returns the deflated bytes of the file with digest d from an
// archive this entry built in this scan or the last, or nil. Archives
// are read through get, each once (archives holds those read).
func (e *entryScan) deflated(d content.Digest, get func(content.Digest) ([]byte, bool), archives map[content.Digest][]byte) []byte {
	for _, c := range []*entryCache{e.next, e.prev} {
		if c == nil {
			continue
		}
		for _, zr := range c.zips.rows {
			z := zr.v
			sp, ok := z.deflated.get(string(d))
			if !ok {
				continue
			}
			data, read := archives[z.digest]
			if !read {
				data, _ = get(z.digest)
				archives[z.digest] = data
			}
			if b, ok := sp.Of(data); ok {
				return b
			}
		}
	}
	return nil
}

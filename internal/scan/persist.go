package scan

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
)

// A Cache persisted in a folder of the state directory lets a restart
// over an unchanged tree stat its files and reuse every digest, parse and
// archive, reading and deflating nothing. The cache is split by entry key
// into cacheShards files, so a reload that rescanned one entry rewrites
// one shard. Each shard is a header line (cacheMagic), the stamp of the
// build and settings that wrote it, its entries in key order (each its
// key and its bytes, codec.go, both as a length and the bytes), and the
// SHA-256 of all that: a shard that is truncated, corrupt, foreign, or
// written by another build or with other limits is ignored (its entries
// are scanned again), never trusted.

const (
	cacheShards = 256
	cacheMagic  = "skillserver scan cache 2\n"
)

// persisted says where a Cache is kept and the state of its shards.
type persisted struct {
	dir   string
	stamp string
	shardState
	reading [cacheShards]sync.Mutex // held while the shard is read back
}

// shardState is, per shard, whether it changed since it was written
// (dirty) and whether its entries are in Cache.entries (resident). A
// dirty shard is resident.
type shardState struct {
	dirty, resident [cacheShards]bool
}

// CacheStamp is the stamp of the running program and lim: the program's
// Go build ID (which changes with any change to what was compiled; read
// from its ELF note, else the SHA-256 of the whole executable) and the
// limits, which decide what a parse finds.
func CacheStamp(lim Limits) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if id, ok := elfBuildID(exe); ok {
		h.Write(id)
	} else {
		f, err := os.Open(exe)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(h, "\n%+v", lim)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// elfBuildID is the Go build ID note of the ELF executable exe.
func elfBuildID(exe string) ([]byte, bool) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return nil, false
	}
	id, err := sec.Data()
	return id, err == nil && len(id) > 0
}

// OpenCache returns the Cache kept in dir (created if missing) for stamp.
// Shards that cannot be trusted are left out and returned as errors, one
// each, for the log; the cache then holds what the rest do.
func OpenCache(dir, stamp string) (*Cache, []error) {
	c := NewCache()
	c.persist = &persisted{dir: dir, stamp: stamp}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.persist = nil
		return c, []error{fmt.Errorf("scan cache: %w; it is kept in memory only", err)}
	}
	// Shards decode on every core; their results are taken in order.
	type read struct {
		entries map[string][]byte
		err     error
	}
	reads := make([]read, cacheShards)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				reads[i].entries, reads[i].err = readShard(shardPath(dir, i), stamp)
			}
		})
	}
	for i := range cacheShards {
		next <- i
	}
	close(next)
	wg.Wait()
	var order []string
	ignored := map[string][]string{} // why -> shard paths
	for i, r := range reads {
		var why shardError
		switch {
		case errors.Is(r.err, fs.ErrNotExist):
		case errors.As(r.err, &why):
			if ignored[why.why] == nil {
				order = append(order, why.why)
			}
			ignored[why.why] = append(ignored[why.why], shardPath(dir, i))
			c.persist.dirty[i] = true // rewritten by the next save
		default:
			for k, e := range r.entries {
				c.entries[k] = e
			}
		}
	}
	for i := range c.persist.resident {
		c.persist.resident[i] = true
	}
	var errs []error
	for _, why := range order {
		errs = append(errs, fmt.Errorf("scan cache: %d of %d shards (%s first) ignored: %s; their entries are scanned again", len(ignored[why]), cacheShards, ignored[why][0], why))
	}
	return c, errs
}

func shardPath(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("%02x.cache", i)) }

func shardOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % cacheShards)
}

// fresh returns an empty Cache kept where c is: every shard is written
// again by its first save.
func (c *Cache) fresh() *Cache {
	n := NewCache()
	if c.persist != nil {
		n.persist = &persisted{dir: c.persist.dir, stamp: c.persist.stamp}
		for i := range n.persist.dirty {
			n.persist.dirty[i], n.persist.resident[i] = true, true
		}
	}
	return n
}

// Fresh returns an empty Cache kept where c is, for a reload that cannot
// trust what c holds (one abandoned while it was scanning).
func (c *Cache) Fresh() *Cache { return c.fresh() }

// markDirty records that the entries of keys changed.
func (c *Cache) markDirty(keys []string) {
	if c.persist == nil {
		return
	}
	for _, k := range keys {
		c.persist.dirty[shardOf(k)] = true
	}
}

// Save writes the shards that changed since they were last written, each
// to a temporary file renamed over the old one. A cache not kept on disk
// saves nothing. It must not run during a scan with c.
func (c *Cache) Save() error {
	if c.persist == nil {
		return nil
	}
	var shards [cacheShards][]string // keys
	for k := range c.entries {
		if i := shardOf(k); c.persist.dirty[i] {
			shards[i] = append(shards[i], k)
		}
	}
	var errs []error
	for i := range cacheShards {
		if !c.persist.dirty[i] {
			continue
		}
		if len(shards[i]) == 0 {
			// Nothing to keep: no file, and none left from before.
			if err := os.Remove(shardPath(c.persist.dir, i)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			c.persist.dirty[i] = false
			continue
		}
		if err := writeShard(c.persist.dir, shardPath(c.persist.dir, i), c.persist.stamp, shards[i], c.entries); err != nil {
			errs = append(errs, err)
			continue
		}
		c.persist.dirty[i] = false
	}
	c.evict()
	return errors.Join(errs...)
}

// evict drops from memory the entries of every shard the disk holds as
// they are (not dirty); a scan reads them back when it opens one
// (committed).
func (c *Cache) evict() {
	kept := map[string][]byte{}
	for k, e := range c.entries {
		if c.persist.dirty[shardOf(k)] {
			kept[k] = e
		}
	}
	c.entries = kept
	c.persist.resident = c.persist.dirty
}

// committed returns the committed bytes of key's cache, or nil. A cache
// kept on disk reads the key's shard back first when Save dropped it; a
// shard that cannot be trusted any more is ignored (its entries are
// scanned again, and it is written again by the next Save) and reported
// by takeIgnored. Scans of several entries call it at once.
func (c *Cache) committed(key string) []byte {
	p := c.persist
	if p == nil {
		return c.entries[key]
	}
	i := shardOf(key)
	p.reading[i].Lock()
	defer p.reading[i].Unlock()
	c.mu.Lock()
	resident := p.resident[i]
	c.mu.Unlock()
	if !resident {
		entries, err := readShard(shardPath(p.dir, i), p.stamp)
		c.mu.Lock()
		var why shardError
		switch {
		case errors.Is(err, fs.ErrNotExist): // saved with no entries
		case errors.As(err, &why):
			c.ignored = append(c.ignored, fmt.Errorf("scan cache: shard %s ignored: %s; its entries are scanned again", shardPath(p.dir, i), why.why))
			p.dirty[i] = true
		default:
			for k, e := range entries {
				c.entries[k] = e
			}
		}
		p.resident[i] = true
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

// takeIgnored returns what the scan could not use of the cache (shards
// committed ignored, entries open could not decode), as errors for the
// log.
func (c *Cache) takeIgnored() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	errs := c.ignored
	c.ignored = nil
	return errs
}

// writeShard writes the entries of keys to path.
func writeShard(dir, path, stamp string, keys []string, entries map[string][]byte) error {
	slices.Sort(keys)
	n := len(cacheMagic) + len(stamp) + 1 + sha256.Size
	for _, k := range keys {
		n += len(k) + len(entries[k]) + 2*binary.MaxVarintLen64
	}
	w := encoder{b: make([]byte, 0, n)}
	w.b = append(w.b, cacheMagic...)
	w.b = append(w.b, stamp...)
	w.b = append(w.b, '\n')
	for _, k := range keys {
		w.str(k)
		w.uvarint(uint64(len(entries[k])))
		w.b = append(w.b, entries[k]...)
	}
	sum := sha256.Sum256(w.b)
	w.b = append(w.b, sum[:]...)
	f, err := os.CreateTemp(dir, "shard-")
	if err != nil {
		return fmt.Errorf("scan cache: %w", err)
	}
	_, err = f.Write(w.b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("scan cache %s: %w", path, err)
	}
	return nil
}

// shardError is why a shard was not trusted.
type shardError struct{ why string }

func (e shardError) Error() string { return e.why }

// readShard returns the entries of the shard at path, each its bytes:
// slices of what was read, which they keep.
func readShard(path, stamp string) (map[string][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, shardError{describeErr(err)}
	}
	if len(data) < len(cacheMagic)+sha256.Size || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, shardError{"not a scan cache of this format"}
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if want := sha256.Sum256(body); !bytes.Equal(sum, want[:]) {
		return nil, shardError{"checksum mismatch (truncated or corrupt)"}
	}
	rest := body[len(cacheMagic):]
	line, payload, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok {
		return nil, shardError{"no stamp"}
	}
	if string(line) != stamp {
		return nil, shardError{"written by another build of skillserver or with other limits"}
	}
	out := map[string][]byte{}
	r := decoder{b: payload}
	for len(r.b) > 0 && r.err == nil {
		k := r.str()
		out[k] = slices.Clip(r.bytes(r.uvarint()))
	}
	if r.err != nil {
		return nil, shardError{"cannot decode: " + r.err.Error()}
	}
	return out, nil
}

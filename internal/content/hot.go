package content

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2/simplelru"
)

// hotBlobs keeps the bytes of small blobs recently served from a Dir, so
// that a file a few kilobytes long goes out as bytes in memory, with its
// headers in one write, rather than opened, checked and sent with
// sendfile per request: for such a file that costs more than the copy it
// saves. It holds at most max bytes, the least recently used going
// first; a blob larger than max/hotShare is never kept.
type hotBlobs struct {
	mu    sync.Mutex
	lru   *lru.LRU[Digest, []byte]
	bytes int64
	max   int64
}

// hotShare bounds one blob's share of the hot cache.
const hotShare = 16

// SetHotBytes bounds the memory that keeps recently served small blobs
// (blob_cache_max_bytes); 0 keeps none. Call it before serving.
func (d *Dir) SetHotBytes(max int64) {
	if max <= 0 {
		d.hot = nil
		return
	}
	h := &hotBlobs{max: max}
	h.lru, _ = lru.NewLRU[Digest, []byte](int(max), func(_ Digest, b []byte) { h.bytes -= int64(len(b)) })
	d.hot = h
}

// Small returns the bytes of the blob dg, size bytes long, when it is
// small enough to keep in the hot cache: from the cache, or read
// (verified, as Open does) and kept. ok is false for a blob too large, or
// when there is no hot cache; the caller then serves the file.
func (d *Dir) Small(dg Digest, size int64) (data []byte, ok bool, err error) {
	h := d.hot
	if h == nil || size > h.max/hotShare {
		return nil, false, nil
	}
	h.mu.Lock()
	data, ok = h.lru.Get(dg)
	h.mu.Unlock()
	if ok {
		return data, true, nil
	}
	if data, err = d.Read(dg); err != nil {
		return nil, true, err
	}
	h.mu.Lock()
	if !h.lru.Contains(dg) {
		h.lru.Add(dg, data)
		h.bytes += int64(len(data))
		for h.bytes > h.max {
			h.lru.RemoveOldest()
		}
	}
	h.mu.Unlock()
	return data, true, nil
}

// readThroughHot returns the blob dg from the hot cache when it is there,
// else reads it (verified) without keeping it.
func (d *Dir) readThroughHot(dg Digest) ([]byte, error) {
	if h := d.hot; h != nil {
		h.mu.Lock()
		data, ok := h.lru.Peek(dg)
		h.mu.Unlock()
		if ok {
			return data, nil
		}
	}
	return d.Read(dg)
}

// forget drops dg from the hot cache (a blob swept or found corrupt).
func (h *hotBlobs) forget(dg Digest) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.lru.Remove(dg)
	h.mu.Unlock()
}

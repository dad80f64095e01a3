package feed

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/skillserver/skillserver/internal/content"
)

// Document is an encoded JSON document and the digest of its bytes.
type Document struct {
	Body   []byte
	Digest content.Digest

	// gzipLevel is how hard Gzip compresses: the best level for documents
	// kept for the snapshot's lifetime, a fast one for those in the shared
	// cache, which a stream of new bases can make again and again.
	gzipLevel int
	// served is set once the document was found in a cache: a document
	// spliced for a request is served uncompressed, so a request for a
	// base nobody asked for before costs no compression.
	served atomic.Bool
	// account, if set, is told the size of the compressed form once made,
	// for the cache that holds d.
	account    func(n int64)
	gzipOnce   sync.Once
	gzipBody   []byte
	gzipDigest content.Digest
}

// minGzip is the smallest document worth compressing.
const minGzip = 1024

// sharedGzipLevel compresses documents of the shared cache: on a 540 KB
// index, level 3 takes a quarter of the time of the best level and makes
// 3% more bytes (docs/architecture.md, Documents).
const sharedGzipLevel = 3

// Gzip returns the document gzip-compressed and that representation's
// digest, computed once; ok is false for documents too small to gain, and
// for a document the shared cache did not hold yet (the next request for
// it gets gzip). The bytes are deterministic (no name, no time in the
// header).
func (d *Document) Gzip() (body []byte, digest content.Digest, ok bool) {
	if len(d.Body) < minGzip || !d.served.Load() {
		return nil, "", false
	}
	d.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, d.gzipLevel)
		_, _ = zw.Write(d.Body)
		_ = zw.Close()
		d.gzipBody = buf.Bytes()
		d.gzipDigest = content.Sum(d.gzipBody)
		if d.account != nil {
			d.account(int64(len(d.gzipBody)))
		}
	})
	return d.gzipBody, d.gzipDigest, true
}

type template struct {
	segs [][]byte // the document's bytes between the places of the base
	size int      // sum of len(segs)
}

func (t *template) splice(base string) []byte {
	b := make([]byte, 0, t.size+(len(t.segs)-1)*len(base))
	for i, seg := range t.segs {
		if i > 0 {
			b = append(b, base...)
		}
		b = append(b, seg...)
	}
	return b
}

// jsonText is s as encoded inside a JSON string of a published document.
func jsonText(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b := encodeDocument(s).Body // "...", then a newline
			return string(b[1 : len(b)-2])
		}
	}
	return s
}

// Encode renders v in the published JSON style: two-space indent,
// trailing newline, no HTML escaping. Every JSON body the server writes,
// documents, search results and errors alike, goes through it.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeDocument is Encode for a document of the feed.
func encodeDocument(v any) *Document {
	b, err := Encode(v)
	if err != nil {
		// Every document is built from strings, numbers and slices the
		// snapshot owns; failing to encode one is a programming error.
		panic(fmt.Sprintf("encode document: %v", err))
	}
	return &Document{Body: b, Digest: content.Sum(b)}
}

// NewDocument wraps bytes made for one request (a page of search
// results) as a Document, compressed fast when a client asks for gzip.
func NewDocument(body []byte) *Document {
	d := &Document{Body: body, Digest: content.Sum(body), gzipLevel: sharedGzipLevel}
	d.served.Store(true)
	return d
}

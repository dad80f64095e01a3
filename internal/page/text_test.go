package page

import (
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// countingBlobs is a Blobs that counts the reads of each digest.
type countingBlobs struct {
	data  map[content.Digest][]byte
	reads map[content.Digest]int
}

func (c *countingBlobs) Get(d content.Digest) ([]byte, bool) {
	c.reads[d]++
	b, ok := c.data[d]
	return b, ok
}

func (c *countingBlobs) Blob(content.Digest) (content.Blob, bool) { return content.Blob{}, false }

// TestTextReadsOnlyWhatItShows: a file over MaxViewBytes is not read at
// all (the pages list every file of every version), text within it is
// shown, binary bytes and a missing blob are not.
func TestTextReadsOnlyWhatItShows(t *testing.T) {
	blobs := &countingBlobs{data: map[content.Digest][]byte{}, reads: map[content.Digest]int{}}
	res := func(s string) item.Resource {
		d := content.Sum([]byte(s))
		blobs.data[d] = []byte(s)
		return item.Resource{Path: s, Digest: d, Size: int64(len(s))}
	}
	p := New(Options{MaxViewBytes: 8})
	small, big, binary := res("fits"), res("longer than eight"), res("a\x00b")
	if b, ok := p.text(blobs, small); !ok || string(b) != "fits" {
		t.Errorf("small text: %q %v", b, ok)
	}
	if _, ok := p.text(blobs, big); ok || blobs.reads[big.Digest] != 0 {
		t.Errorf("a file over the bound: shown %v, read %d times; want neither", ok, blobs.reads[big.Digest])
	}
	if _, ok := p.text(blobs, binary); ok {
		t.Error("a file with a NUL byte is shown as text")
	}
	if _, ok := p.text(blobs, item.Resource{Path: "gone", Size: 1}); ok {
		t.Error("a missing blob is shown as text")
	}
}

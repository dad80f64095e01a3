package export

import (
	"bytes"
	"testing"

	"gocloud.dev/blob/memblob"
)

// TestBucketHolds: the streaming comparison a bucket falls back to when
// an object's ETag says nothing answers true for exactly the bytes, and
// false for a prefix, a longer object, a changed byte or no object.
func TestBucketHolds(t *testing.T) {
	ctx := t.Context()
	u := &bucket{b: memblob.OpenBucket(nil)}
	defer u.Close()
	body := bytes.Repeat([]byte("0123456789abcdef"), 20_000) // 320,000 bytes: several reads
	if err := u.b.WriteAll(ctx, "k", body, nil); err != nil {
		t.Fatal(err)
	}
	changed := bytes.Clone(body)
	changed[len(changed)-1] ^= 1
	for _, tt := range []struct {
		name string
		key  string
		want []byte
		same bool
	}{
		{"the same bytes", "k", body, true},
		{"the object is longer", "k", body[:len(body)-1], false},
		{"the object is shorter", "k", append(bytes.Clone(body), 'x'), false},
		{"its last byte differs", "k", changed, false},
		{"empty against the object", "k", nil, false},
		{"no object", "missing", body, false},
	} {
		same, err := u.holds(ctx, tt.key, tt.want)
		if err != nil || same != tt.same {
			t.Errorf("%s: holds = %v, %v; want %v", tt.name, same, err, tt.same)
		}
	}
}

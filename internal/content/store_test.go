package content

import (
	"slices"
	"testing"
)

func TestStoreEachMissing(t *testing.T) {
	b := NewBuilder(nil)
	a, x := b.Put([]byte("a")), b.Put([]byte("x"))
	flat := b.Store()
	o := NewOverlay(flat)
	n := o.Put([]byte("new"))
	over := o.Store()
	o2 := NewOverlay(over)
	m := o2.Put([]byte("more"))
	over2 := o2.Store()
	b = NewBuilder(nil)
	b.PutDigested(a, []byte("a"))
	rebuilt := b.Store()

	missing := func(s, other *Store) []Digest {
		var out []Digest
		s.EachMissing(other, func(d Digest, _ int64) { out = append(out, d) })
		slices.Sort(out)
		return out
	}
	sorted := func(ds ...Digest) []Digest { slices.Sort(ds); return ds }
	tests := []struct {
		name      string
		s, other  *Store
		want      []Digest
		overlayed int64
	}{
		{"a store against itself", flat, flat, nil, 0},
		{"a base against its overlay", flat, over, nil, 0},
		{"an overlay against a later one on the same base", over, over2, nil, int64(len("new"))},
		{"a later overlay against an earlier one", over2, over, []Digest{m}, int64(len("new") + len("more"))},
		{"an overlay against a flat rebuild", over, rebuilt, sorted(x, n), int64(len("new"))},
		{"against nothing", flat, nil, sorted(a, x), 0},
	}
	for _, tt := range tests {
		if got := missing(tt.s, tt.other); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		if got := tt.s.OverlayBytes(); got != tt.overlayed {
			t.Errorf("%s: OverlayBytes %d, want %d", tt.name, got, tt.overlayed)
		}
	}
}

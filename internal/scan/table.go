package scan

import (
	"cmp"
	"slices"
)

// table is a small map from string keys, held as a slice of pairs: an
// entry's cache holds a few files, parses and archives, where a Go map
// would cost a whole group of slots each. A table being filled is
// searched from its end; freeze sorts it once, after which lookups are a
// binary search. The last value set for a key wins.
type table[T any] struct {
	rows   []row[T]
	frozen bool
}

type row[T any] struct {
	key string
	v   T
}

func (t *table[T]) set(key string, v T) {
	t.rows = append(t.rows, row[T]{key, v})
	t.frozen = false
}

func (t *table[T]) get(key string) (T, bool) {
	if t == nil {
		var zero T
		return zero, false
	}
	if t.frozen {
		if i, ok := slices.BinarySearchFunc(t.rows, key, func(r row[T], k string) int { return cmp.Compare(r.key, k) }); ok {
			return t.rows[i].v, true
		}
	} else {
		for i := len(t.rows) - 1; i >= 0; i-- {
			if t.rows[i].key == key {
				return t.rows[i].v, true
			}
		}
	}
	var zero T
	return zero, false
}

// freeze sorts the rows by key, keeping the last value set for each, and
// trims the slice to its length.
func (t *table[T]) freeze() {
	if t.frozen {
		return
	}
	slices.SortStableFunc(t.rows, func(a, b row[T]) int { return cmp.Compare(a.key, b.key) })
	out := t.rows[:0]
	for i, r := range t.rows {
		if i+1 < len(t.rows) && t.rows[i+1].key == r.key {
			continue // a later value for the same key follows
		}
		out = append(out, r)
	}
	t.rows = slices.Clip(out)
	t.frozen = true
}

func (t *table[T]) len() int { return len(t.rows) }

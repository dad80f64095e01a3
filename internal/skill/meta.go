package skill

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Meta is a front matter's metadata mapping: each key with its value,
// sorted by key. It is a slice rather than a Go map because every
// published version keeps one: a map costs several hundred bytes even for
// the three keys a skill typically has.
type Meta []MetaEntry

// MetaEntry is one key of a Meta.
type MetaEntry struct {
	Key string
	// Value is a scalar's value; "" for a list, whose value (String) is
	// made from its items when asked for rather than kept beside them.
	Value string
	// List holds a YAML list's items, so an item holding a comma ("Review
	// this, then that") stays one item; nil for a scalar.
	List []string
}

// String is e's value as a string: a YAML list's items joined with ", ".
func (e MetaEntry) String() string {
	if e.List != nil {
		return strings.Join(e.List, ", ")
	}
	return e.Value
}

func (m Meta) find(key string) (MetaEntry, bool) {
	i, ok := slices.BinarySearchFunc(m, key, func(e MetaEntry, k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		return MetaEntry{}, false
	}
	return m[i], true
}

// Get returns the value of key, and whether m has it.
func (m Meta) Get(key string) (string, bool) {
	e, ok := m.find(key)
	return e.String(), ok
}

// Items returns the items of key when its value was a YAML list.
func (m Meta) Items(key string) ([]string, bool) {
	e, ok := m.find(key)
	return e.List, ok && e.List != nil
}

// MarshalJSON encodes m as the JSON object of its keys and string values,
// in key order: the bytes a map[string]string encodes to.
func (m Meta) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the encoder of the whole document escapes, or not
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(e.Key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(e.String()); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

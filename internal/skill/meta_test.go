package skill

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A Meta encodes to the bytes the map[string]string it replaced did, with
// the document's encoder deciding on HTML escaping either way.
func TestMetaEncodesAsTheMapDid(t *testing.T) {
	meta := Meta{{Key: "a<b", Value: "x & y"}, {Key: "tags", List: []string{"p", "q"}}, {Key: "z", Value: "\u2028\xff\"é"}}
	asMap := map[string]string{"a<b": "x & y", "tags": "p, q", "z": "\u2028\xff\"é"}
	for _, escape := range []bool{true, false} {
		encode := func(v any) string {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(escape)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		got := encode(struct {
			M Meta `json:"m,omitempty"`
		}{meta})
		want := encode(struct {
			M map[string]string `json:"m,omitempty"`
		}{asMap})
		if got != want {
			t.Errorf("escape HTML %v: Meta encodes as %s, the map as %s", escape, got, want)
		}
	}
	if b, err := json.Marshal(struct {
		M Meta `json:"m,omitempty"`
	}{Meta{}}); err != nil || string(b) != "{}" {
		t.Errorf("an empty Meta: %s %v, want it left out", b, err)
	}
	if v, ok := meta.Get("tags"); !ok || v != "p, q" {
		t.Errorf("Get(tags) = %q %v", v, ok)
	}
	if l, ok := meta.Items("tags"); !ok || len(l) != 2 {
		t.Errorf("Items(tags) = %q %v", l, ok)
	}
	if _, ok := meta.Items("z"); ok {
		t.Error("Items of a scalar says it is a list")
	}
	if _, ok := meta.Get("absent"); ok {
		t.Error("Get of an absent key found it")
	}
}

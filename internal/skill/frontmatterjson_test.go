package skill

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The front matter is published whole, keys in the file's order, each
// value typed as YAML 1.2's core schema types it: what a host comparing
// it with its own parse of the file sees.
func TestFrontmatterJSON(t *testing.T) {
	data := "---\n" +
		"name: demo\n" +
		"description: Uses <b> & \"quotes\" and ünïcode\n" +
		"license: MIT\n" +
		"version: 1.10\n" +
		"metadata:\n" +
		"  version: \"1.10\"\n" +
		"  tags: [a, b]\n" +
		"  count: 3\n" +
		"  ok: true\n" +
		"  none: ~\n" +
		"  when: 2026-01-02\n" +
		"  far: .inf\n" +
		"nested:\n" +
		"  - {x: 1, y: [0x1F, -2.5e3]}\n" +
		"---\nBody.\n"
	fm := FrontmatterJSON([]byte(data))
	want := `{"name":"demo","description":"Uses <b> & \"quotes\" and ünïcode","license":"MIT","version":1.1,` +
		`"metadata":{"version":"1.10","tags":["a","b"],"count":3,"ok":true,"none":null,"when":"2026-01-02","far":".inf"},"nested":[{"x":1,"y":[31,-2500]}]}`
	if string(fm) != want {
		t.Errorf("front matter\n got %s\nwant %s", fm, want)
	}
	if withBOM := FrontmatterJSON(append([]byte("\xEF\xBB\xBF"), data...)); string(withBOM) != want {
		t.Errorf("front matter after a byte order mark\n got %s\nwant %s", withBOM, want)
	}
	var v map[string]any
	if err := json.Unmarshal(fm, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if !reflect.DeepEqual(v["metadata"].(map[string]any)["tags"], []any{"a", "b"}) {
		t.Errorf("tags %v", v["metadata"])
	}
}

// A block that does not parse publishes nothing.
func TestFrontmatterJSONOnlyWhenParsed(t *testing.T) {
	for _, data := range []string{"---\nname: [demo\n---\n", "no block\n", "---\nname: a\n--- b\n---\n"} {
		if fm := FrontmatterJSON([]byte(data)); fm != nil {
			t.Errorf("front matter %s of %q, which does not parse", fm, data)
		}
	}
}

package scan

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/skill"
)

// fill sets every field of the struct v points to, recursively, to a
// value of its own (n counts them), so a field the codec forgets is a
// difference after a round trip. Slices get two elements.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * -7)
	case reflect.Uint64:
		v.SetUint(uint64(*n) << 40)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("fill: no rule for %s", v.Type())
	}
}

func filled[T any](t *testing.T, n *int) T {
	var v T
	fill(t, reflect.ValueOf(&v).Elem(), n)
	return v
}

// sampleEntry is an entry cache with every field of every row set, two
// rows per table; its SKILL.md parse has problems of both severities.
func sampleEntry(t *testing.T) *entryCache {
	n := 0
	e := &entryCache{}
	for _, k := range []string{"a/SKILL.md", "a/ref.md"} {
		e.files.set(k, cachedFile{size: 12, mtime: -3, inode: 1 << 50, readAt: 1_700_000_000_000_000_000,
			digest: content.Sum([]byte(k)), problems: []skill.Problem{filled[skill.Problem](t, &n)}})
	}
	for _, k := range []string{"k1", "k2"} {
		z := cachedZip{digest: content.Sum([]byte(k)), size: 99}
		z.deflated.set(string(content.Sum([]byte("x"))), content.Span{Off: 7, Len: 8})
		z.deflated.set("not a digest", content.Span{Off: 1 << 40, Len: 0})
		z.deflated.freeze()
		e.zips.set(k, z)
	}
	sev := []skill.Problem{skill.Errorf("p", skill.RuleName, "e"), skill.Warnf("p", skill.RuleName, "w")}
	e.skills.set("a/SKILL.md", parsedSkill{digest: content.Sum([]byte("md")), value: filled[skill.SkillMD](t, &n), problems: sev})
	e.skills.set("b/SKILL.md", parsedSkill{digest: "", value: skill.SkillMD{Metadata: skill.Meta{{Key: "tags", List: []string{}}}}})
	e.agents.set("x.md", parsedAgent{digest: content.Sum([]byte("agent")), value: filled[skill.AgentMD](t, &n), problems: []skill.Problem{filled[skill.Problem](t, &n)}})
	e.agents.set("y.md", parsedAgent{value: skill.AgentMD{Tools: []string{}, Metadata: skill.Meta{}}})
	e.freeze()
	return e
}

// TestEntryCodecRoundTrip: every field of every row comes back, nil and
// empty slices (metadata absent or empty, a list without items) stay
// apart, and the same entry always makes the same bytes.
func TestEntryCodecRoundTrip(t *testing.T) {
	e := sampleEntry(t)
	b := encodeEntry(e)
	back, err := decodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, e) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, e)
	}
	if again := encodeEntry(back); !bytes.Equal(again, b) {
		t.Errorf("the decoded entry encodes to other bytes")
	}
	p, _ := back.skills.get("a/SKILL.md")
	if p.problems[0].Severity != skill.SeverityError || p.problems[1].Severity != skill.SeverityWarning {
		t.Errorf("severities %q, %q", p.problems[0].Severity, p.problems[1].Severity)
	}
	empty, err := decodeEntry(encodeEntry(newEntryCache()))
	if err != nil || !reflect.DeepEqual(empty, newEntryCache()) {
		t.Errorf("empty entry: %+v, %v", empty, err)
	}
}

// TestEntryCodecRefusesMalformedBytes: every truncation of an entry's
// bytes, and bytes after its end, are an error, never a panic or a
// partial entry; rows out of key order are malformed too.
func TestEntryCodecRefusesMalformedBytes(t *testing.T) {
	b := encodeEntry(sampleEntry(t))
	for n := range len(b) {
		if e, err := decodeEntry(b[:n]); !errors.Is(err, errEntryCodec) || e != nil {
			t.Fatalf("truncated to %d of %d bytes: %v, %v", n, len(b), e, err)
		}
	}
	if _, err := decodeEntry(append(bytes.Clone(b), 0)); !errors.Is(err, errEntryCodec) {
		t.Errorf("a byte after the entry: %v", err)
	}
	var unordered entryCache
	unordered.files.rows = []row[cachedFile]{{key: "b"}, {key: "a"}}
	if _, err := decodeEntry(encodeEntry(&unordered)); !errors.Is(err, errEntryCodec) {
		t.Errorf("rows out of order: %v", err)
	}
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f} // a row count of 4 billion
	if _, err := decodeEntry(huge); !errors.Is(err, errEntryCodec) {
		t.Errorf("a row count larger than the bytes: %v", err)
	}
}

// FuzzDecodeEntry: any bytes decode to an entry or an error, never a
// panic; an entry decoded re-encodes to bytes that decode to it again.
func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(newEntryCache()))
	f.Add([]byte{1, 1, 'k', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := decodeEntry(encodeEntry(e))
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Errorf("re-encoded entry: %v\n got %+v\nwant %+v", err, again, e)
		}
	})
}

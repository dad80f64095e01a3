package skill

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestResourcePathLength: a file or folder name of MaxSegmentBytes bytes
// and a path of MaxResourcePathBytes are fine, one byte more is not;
// bytes are UTF-8 bytes, not characters; the message names the limit and
// the fix and stays valid UTF-8 when it shortens a name.
func TestResourcePathLength(t *testing.T) {
	if MaxSegmentBytes != 234 || MaxResourcePathBytes != 939 {
		t.Fatalf("MaxSegmentBytes %d, MaxResourcePathBytes %d; docs/source-tree.md says 234 and 939", MaxSegmentBytes, MaxResourcePathBytes)
	}
	name := func(n int) string { return strings.Repeat("n", n) }
	// Folders of 200 bytes and a file making the path n bytes long.
	path := func(n int) string {
		p := strings.Repeat(strings.Repeat("d", 200)+"/", 4)
		return p + name(n-len(p))
	}
	for _, tt := range []struct {
		path string
		want string // in the message; "" for no problem
	}{
		{"notes.md", ""},
		{name(MaxSegmentBytes), ""},
		{name(MaxSegmentBytes + 1), "is 235 bytes; the limit is 234"},
		{name(255), "is 255 bytes; the limit is 234"},
		{"docs/" + name(MaxSegmentBytes+1) + "/x.md", "is 235 bytes"},
		{strings.Repeat("é", MaxSegmentBytes/2), ""},
		{strings.Repeat("é", MaxSegmentBytes/2+1), "is 236 bytes"},
		{strings.Repeat("€", 79), "is 237 bytes"},
		{path(MaxResourcePathBytes), ""},
		{path(MaxResourcePathBytes + 1), "the path is 940 bytes; the limit is 939"},
	} {
		got := ResourcePathLength(tt.path)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("ResourcePathLength(%d bytes) = %q; want %q", len(tt.path), got, tt.want)
		}
		if got != "" && (!utf8.ValidString(got) || !strings.Contains(got, "shorten")) {
			t.Errorf("ResourcePathLength(%d bytes) = %q: not valid UTF-8, or no fix", len(tt.path), got)
		}
	}
}

package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// fakeVerdict is what a hostile server would like a reader to see.
const fakeVerdict = "0 errors, 0 warnings: clients will work with this feed"

// hostile clears the screen, retitles the window, starts a line of its
// own with a fake verdict, and adds DEL, a C1 CSI, a bidi override and
// isolate, and the Unicode line and paragraph separators.
const hostile = "\x1b[2J\x1b[H\x1b]0;pwned\x07\r\n\n" + fakeVerdict + "\n\x7f\u009b31m\u202e\u2066\u2028\u2029"

// verdictLine is the report's verdict line.
var verdictLine = regexp.MustCompile(`^\d+ errors?, \d+ warnings?: clients will (NOT )?work with this feed$`)

// unsafeOutput lists what of out could drive or mislead a terminal: a
// control character other than the layout's own (allowed), DEL, a C1
// control, a bidi control, a line or paragraph separator, invalid UTF-8.
func unsafeOutput(out []byte, allowed string) []string {
	var bad []string
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			bad = append(bad, "invalid UTF-8")
		case r < 0x20 && !strings.ContainsRune(allowed, r), r == 0x7f, r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
			r == 0x2028, r == 0x2029:
			bad = append(bad, fmt.Sprintf("%U at byte %d", r, i))
		}
		i += n
	}
	return bad
}

// checkTextLayout requires out to have exactly the report's lines: the
// header, per finding a blank line, its head, its message and its URL
// if any, then a blank line and the verdict, which is the only line that
// looks like one.
func checkTextLayout(t *testing.T, r *Report, out string) {
	t.Helper()
	want := 3
	for _, f := range r.Findings {
		want += 3
		if f.URL != "" {
			want++
		}
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasSuffix(out, "\n") || len(lines) != want {
		t.Fatalf("%d lines, want %d (%d findings): %q", len(lines), want, len(r.Findings), out)
	}
	for i, l := range lines {
		last := i == len(lines)-1
		switch {
		case verdictLine.MatchString(l) != last:
			t.Errorf("line %d %q: only the last line is a verdict", i+1, l)
		case last && verdictLine.MatchString(l) && strings.Contains(l, " NOT ") == r.OK:
			t.Errorf("verdict %q, ok %v", l, r.OK)
		case i == 0 || last || l == "" || strings.HasPrefix(l, "error   ") || strings.HasPrefix(l, "warning ") || strings.HasPrefix(l, "        "):
		default:
			t.Errorf("line %d %q is none of the report's lines", i+1, l)
		}
	}
}

// TestTextReportEscapesTheServer: a feed on a real socket puts control
// characters, bidi overrides and a fake verdict line into names, versions,
// URLs, page ranges, digests and $schema values. The text report shows
// them escaped: the only control characters in it are its own newlines,
// and its only verdict is the real one. The JSON report carries the same
// strings, escaped as JSON, and decodes to the same report.
func TestTextReportEscapesTheServer(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var doc any
		switch r.URL.Path {
		case "/.well-known/agent-skills/index.json":
			doc = map[string]any{"$schema": RFCSchema, "skills": []any{
				map[string]any{"name": "evil" + hostile, "version": "1" + hostile, "type": "skill-md", "description": "d", "url": srv.URL + "/a.md", "digest": "sha256:" + strings.Repeat("0", 64)},
				map[string]any{"name": "b", "version": "1" + hostile, "type": "skill-md", "description": "d", "url": "http://elsewhere.invalid/" + hostile, "digest": "sha256:" + strings.Repeat("0", 64)},
				map[string]any{"name": "c", "version": "2", "type": "skill-md", "description": "d", "url": srv.URL + "/c.md?" + hostile, "digest": "sha256:" + hostile},
			}}
		case "/manifest.json":
			doc = map[string]any{"$schema": hostile, "versions": map[string]any{"v1": map[string]any{
				"self": map[string]any{"href": "/manifest.json"}, "skills": map[string]any{"href": "/skills/v1/index.json"}}}}
		case "/skills/v1/index.json":
			doc = map[string]any{"kind": "skill-index", "pages": []any{
				map[string]any{"range": "a-m" + hostile, "href": "/skills/v1/missing.json"},
				map[string]any{"range": "n-z", "href": "/skills/v1/page" + hostile},
				map[string]any{"range": "x", "href": "/skills/v1/page.json"},
			}}
		case "/skills/v1/page.json":
			doc = map[string]any{"kind": "skill-page", "items": []any{map[string]any{
				"name": "x", "latestVersion": "2", "href": "/skills/v1/x.json",
				"versionRange": map[string]any{"min": "2", "max": "1" + hostile, "count": 2}}}}
		case "/skills/v1/x.json":
			doc = map[string]any{"kind": "skill", "name": "x", "latestVersion": "2", "versions": []any{
				map[string]any{"version": "1" + hostile, "digest": hostile, "href": "/skills/v1/x/1.json"},
				map[string]any{"version": "2", "digest": hostile, "href": "/skills/v1/x/2.json"},
			}}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)

	r, err := Run(t.Context(), Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, b := range unsafeOutput(text.Bytes(), "\n") {
		t.Errorf("the text report holds %s", b)
	}
	checkTextLayout(t, r, out)
	// Escaped, not dropped: the reader sees what the server sent.
	for _, want := range []string{`evil\x1b[2J\x1b[H\x1b]0;pwned\a\r\n\n0 errors, 0 warnings`, `\x7f\u009b31m\u202e\u2066\u2028\u2029`, "skill page a-m" + `\x1b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %s:\n%s", want, out)
		}
	}
	t.Logf("the report:\n%s", out)

	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, b := range unsafeOutput(js.Bytes(), "\n") {
		t.Errorf("the JSON report holds %s", b)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || !reflect.DeepEqual(&back, r) {
		t.Errorf("the JSON report decodes to %+v (%v), want %+v", back, err, r)
	}
}

// FuzzTextReport puts arbitrary strings in every field a server controls
// (item, URL, message; and the feed URL and path token the user gives):
// no control character reaches the text report, it has exactly the lines
// its findings make, and the JSON report decodes to what plain
// encoding/json would give.
func FuzzTextReport(f *testing.F) {
	f.Add("http://127.0.0.1:8080", "skill a 1.0.0", "GET answered 404, want 200", "http://127.0.0.1:8080/a.md", "")
	f.Add("https://h/t/tok", "skill "+hostile, "versions 1"+hostile+" are not newest first", "https://h/t/tok/x"+hostile, "tok")
	f.Add("", "", "", "", "")
	f.Add("\n", "\r\n"+fakeVerdict+"\n", "\u2028"+fakeVerdict, "\x85\u009b\u202e", "\n")
	f.Add("http://h", "\xff\xfe\x1b", "\xc2\x9b2J", "\U000e0001\u200b\ufeff", "\x00")
	f.Fuzz(func(t *testing.T, base, item, msg, u, token string) {
		vs := []*Violation{
			{Rule: RuleStatus, Item: item, URL: u, Msg: msg},
			{Rule: RuleRedirect, Item: msg, URL: item, Msg: u},
			{Rule: RuleName, Item: item + u, Msg: msg + base},
			{Rule: RuleFetch, Msg: item},
		}
		r := newReport(base, Summary{Skills: len(item), Requests: len(msg)}, vs, token)
		var text bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		for _, b := range unsafeOutput(text.Bytes(), "\n") {
			t.Errorf("the text report holds %s:\n%q", b, text.String())
		}
		checkTextLayout(t, r, text.String())

		var js bytes.Buffer
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		for _, b := range unsafeOutput(js.Bytes(), "\n") {
			t.Errorf("the JSON report holds %s:\n%q", b, js.String())
		}
		plain, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var got, want Report
		if err := json.Unmarshal(js.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(plain, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the JSON report decodes to %+v, encoding/json's to %+v", got, want)
		}
	})
}

// TestEscapeText: what escapeText keeps and how it writes the rest.
func TestEscapeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"skill code-review 1.0.0", "skill code-review 1.0.0"},
		{`quoted "a\x1b" stays`, `quoted "a\x1b" stays`},
		{"naïve 日本語 ✓ \ufffd", "naïve 日本語 ✓ \ufffd"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"\x1b]0;title\x07", `\x1b]0;title\a`},
		{"a\r\nb\tc\x00", `a\r\nb\tc\x00`},
		{"\x7f\u0085\u009b", `\x7f\u0085\u009b`},
		{"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"\u2028\u2029\u00a0\u200b\ufeff\U000e0001", `\u2028\u2029\u00a0\u200b\ufeff\U000e0001`},
		{"bad \xff\xc2 utf-8", `bad \xff\xc2 utf-8`},
	}
	for _, tt := range tests {
		if got := escapeText(tt.in); got != tt.want {
			t.Errorf("escapeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

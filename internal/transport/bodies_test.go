package transport

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFastPathAnswersAsServeContent compares writeBytes with
// http.ServeContent, which Bytes.Serve used for every request before, on
// the requests fastPath gives it: the same status, headers and body.
func TestFastPathAnswersAsServeContent(t *testing.T) {
	const etag = `"sha256:0123abcd"`
	body := []byte(`{"skills":[]}` + "\n")
	for _, tc := range []struct {
		name, method, inm string
		encoding          string
	}{
		{name: "GET", method: "GET"},
		{name: "HEAD", method: "HEAD"},
		{name: "GET gzip", method: "GET", encoding: "gzip"},
		{name: "match", method: "GET", inm: etag},
		{name: "match HEAD", method: "HEAD", inm: etag},
		{name: "match gzip", method: "GET", inm: etag, encoding: "gzip"},
		{name: "weak match", method: "GET", inm: "W/" + etag},
		{name: "in a list", method: "GET", inm: `"other", ` + etag},
		{name: "list with empty items", method: "GET", inm: ` ,, "other" ,` + etag + " "},
		{name: "star", method: "GET", inm: "*"},
		{name: "no match", method: "GET", inm: `"other"`},
		{name: "unquoted", method: "GET", inm: "sha256:0123abcd"},
		{name: "bad list stops the scan", method: "GET", inm: `"other", junk, ` + etag},
		{name: "unterminated", method: "GET", inm: `"sha256:0123abcd`},
		{name: "control character", method: "GET", inm: "\"a\x01b\", " + etag},
		{name: "empty tag", method: "GET", inm: `""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "/x", nil)
			if tc.inm != "" {
				req.Header.Set("If-None-Match", tc.inm)
			}
			if !fastPath(req) {
				t.Fatal("fastPath refused the request")
			}
			answer := func(serve func(http.ResponseWriter)) *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				h := rec.Header()
				h.Set("Content-Type", "application/json; charset=utf-8")
				h.Set("ETag", etag)
				h.Set("Cache-Control", "public, max-age=30")
				if tc.encoding != "" {
					h.Set("Content-Encoding", tc.encoding)
				}
				var w http.ResponseWriter = rec
				if tc.method == http.MethodHead {
					w = &statusWriter{ResponseWriter: rec, head: true} // as a Layer drops it
				}
				serve(w)
				return rec
			}
			fast := answer(func(w http.ResponseWriter) { writeBytes(w, req, body) })
			ref := answer(func(w http.ResponseWriter) {
				http.ServeContent(&errorWriter{ResponseWriter: w, size: len(body)}, req, "", time.Time{}, bytes.NewReader(body))
			})
			if fast.Code != ref.Code {
				t.Errorf("status %d, ServeContent %d", fast.Code, ref.Code)
			}
			if !bytes.Equal(fast.Body.Bytes(), ref.Body.Bytes()) {
				t.Errorf("body %q, ServeContent %q", fast.Body, ref.Body)
			}
			keys := func(h http.Header) []string {
				var out []string
				for k, v := range h {
					out = append(out, k+": "+strings.Join(v, ", "))
				}
				slices.Sort(out)
				return out
			}
			if got, want := keys(fast.Header()), keys(ref.Header()); !slices.Equal(got, want) {
				t.Errorf("headers\n%q\nServeContent\n%q", got, want)
			}
		})
	}
}

// TestFastPathLeavesTheRestToServeContent: ranges and the rarer
// preconditions, and other methods, are not the fast path's.
func TestFastPathLeavesTheRestToServeContent(t *testing.T) {
	for _, tc := range []struct {
		method, header, value string
		fast                  bool
	}{
		{"GET", "", "", true},
		{"HEAD", "If-None-Match", `"a"`, true},
		{"GET", "If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT", true},
		{"GET", "Range", "bytes=0-1", false},
		{"GET", "If-Match", `"a"`, false},
		{"GET", "If-Unmodified-Since", "Mon, 01 Jan 2024 00:00:00 GMT", false},
		{"GET", "If-Range", `"a"`, false},
		{"POST", "", "", false},
	} {
		req := httptest.NewRequest(tc.method, "/x", nil)
		if tc.header != "" {
			req.Header.Set(tc.header, tc.value)
		}
		if got := fastPath(req); got != tc.fast {
			t.Errorf("%s with %s: fastPath = %v, want %v", tc.method, tc.header, got, tc.fast)
		}
	}
}

// Every suffix range of an empty file is empty: ServeContent answered
// them with a 206 and "Content-Range: bytes 0--1/0". Like its other
// ranges past the end of an empty file, they now get a plain 200.
func TestEmptyBodySuffixRange(t *testing.T) {
	for _, rng := range []string{"bytes=-5", "bytes=-0", "bytes=- 1, -2"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Range", rng)
		Bytes{}.Serve(w, r, nil)
		if w.Code != http.StatusOK || w.Header().Get("Content-Range") != "" || w.Body.Len() != 0 {
			t.Errorf("Range %q on an empty body: %d, Content-Range %q, %d bytes; want a 200 without one",
				rng, w.Code, w.Header().Get("Content-Range"), w.Body.Len())
		}
	}
}

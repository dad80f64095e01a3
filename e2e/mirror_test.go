//go:build e2e

package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/feed"
)

// mirror is a static copy of a feed: the body of every 200 the check
// read, by URL path. In JSON documents the feed's origin is mirrorOrigin,
// filled in with the static host's when the mirror is written.
type mirror struct {
	files map[string][]byte
	json  map[string]bool
}

const mirrorOrigin = "http://mirror.invalid"

// recorder is a transport that keeps what the check fetched.
type recorder struct {
	origin string
	tr     *http.Transport
	mu     sync.Mutex
	m      *mirror
}

func (rec *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rec.tr.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if mt == "application/json" {
		rec.m.json[req.URL.Path] = true
		b = bytes.ReplaceAll(b, []byte(rec.origin), []byte(mirrorOrigin))
	}
	rec.m.files[req.URL.Path] = b
	return resp, nil
}

// recordMirror mirrors the feed at base by checking it.
func recordMirror(t *testing.T, base string) *mirror {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	defer tr.CloseIdleConnections()
	rec := &recorder{origin: base, tr: tr, m: &mirror{files: map[string][]byte{}, json: map[string]bool{}}}
	r, err := check.Run(t.Context(), check.Options{URL: base, Transport: rec})
	if err != nil || !r.OK || len(r.Findings) != 0 {
		t.Fatalf("mirroring %s: %v %+v", base, err, r)
	}
	return rec.m
}

func (m *mirror) clone() *mirror {
	return &mirror{files: maps.Clone(m.files), json: maps.Clone(m.json)}
}

func (m *mirror) rfcIndex(t *testing.T) []check.RFCEntry {
	t.Helper()
	var idx struct{ Skills []check.RFCEntry }
	if err := json.Unmarshal(m.files[feed.DocRFCIndex.Patterns()[0]], &idx); err != nil {
		t.Fatal(err)
	}
	return idx.Skills
}

func (m *mirror) entry(t *testing.T, name string) check.RFCEntry {
	t.Helper()
	for _, e := range m.rfcIndex(t) {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("the mirror's RFC index has no %s", name)
	return check.RFCEntry{}
}

// path is the mirror's file of an advertised URL.
func (m *mirror) path(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.files[pu.Path]; !ok {
		t.Fatalf("the mirror has no %s", pu.Path)
	}
	return pu.Path
}

// replaceJSON replaces old with new in every JSON document.
func (m *mirror) replaceJSON(old, new string) {
	for p := range m.json {
		m.files[p] = bytes.ReplaceAll(m.files[p], []byte(old), []byte(new))
	}
}

// setArtifact replaces the artifact of e with body, and its digest
// everywhere (in digests and in URLs that name it), so only what body
// breaks is broken.
func (m *mirror) setArtifact(t *testing.T, e check.RFCEntry, body []byte) {
	t.Helper()
	p := m.path(t, e.URL)
	oldHex, newHex := content.Digest(e.Digest).Hex(), content.Sum(body).Hex()
	delete(m.files, p)
	m.files[strings.ReplaceAll(p, oldHex, newHex)] = body
	m.replaceJSON(oldHex, newHex)
}

// editJSON decodes the document at p, lets edit change it and encodes it
// back.
func (m *mirror) editJSON(t *testing.T, p string, edit func(doc map[string]any)) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(m.files[p]))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	edit(doc)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	m.files[p] = append(b, '\n')
}

func (m *mirror) write(t *testing.T, root, origin string) {
	t.Helper()
	for p, b := range m.files {
		if m.json[p] {
			b = bytes.ReplaceAll(b, []byte(mirrorOrigin), []byte(origin))
		}
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rezip returns the entries of archive plus extra, as a new zip.
func rezip(t *testing.T, archive []byte, extra map[string]string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, extra[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// artifactURL is the URL of a skill's artifact as the mirror's RFC index
// advertises it.
func artifactURL(name string) func(t *testing.T, m *mirror) string {
	return func(t *testing.T, m *mirror) string { return m.entry(t, name).URL }
}

// docURL is the URL of a document of the mirror.
func docURL(path string) func(t *testing.T, m *mirror) string {
	return func(*testing.T, *mirror) string { return mirrorOrigin + path }
}

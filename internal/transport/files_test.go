package transport

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tempFile writes body to a file and opens it for reading.
func tempFile(t *testing.T, body []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(p, body, 0o444); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestFileAnswersAsBytes: a blob served from its file answers every
// request exactly as the same bytes served from memory do: the same
// status, headers and body for GET, HEAD, revalidation, ranges and failed
// preconditions.
func TestFileAnswersAsBytes(t *testing.T) {
	const etag = `"sha256:0123abcd"`
	body := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	bs := Bytes{MaxRanges: 4}
	for _, tc := range []struct {
		name, method string
		header       [2]string
	}{
		{name: "GET", method: "GET"},
		{name: "HEAD", method: "HEAD"},
		{name: "match", method: "GET", header: [2]string{"If-None-Match", etag}},
		{name: "no match", method: "GET", header: [2]string{"If-None-Match", `"other"`}},
		{name: "range", method: "GET", header: [2]string{"Range", "bytes=100-199"}},
		{name: "suffix range", method: "GET", header: [2]string{"Range", "bytes=-10"}},
		{name: "two ranges", method: "GET", header: [2]string{"Range", "bytes=0-0,10-19"}},
		{name: "too many ranges", method: "GET", header: [2]string{"Range", "bytes=0-0,1-1,2-2,3-3,4-4"}},
		{name: "unsatisfiable", method: "GET", header: [2]string{"Range", "bytes=999999-"}},
		{name: "empty suffix", method: "GET", header: [2]string{"Range", "bytes=-0"}},
		{name: "if-match fails", method: "GET", header: [2]string{"If-Match", `"other"`}},
		{name: "if-match holds", method: "GET", header: [2]string{"If-Match", etag}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(serve func(http.ResponseWriter, *http.Request)) *httptest.ResponseRecorder {
				req := httptest.NewRequest(tc.method, "/x", nil)
				if tc.header[0] != "" {
					req.Header.Set(tc.header[0], tc.header[1])
				}
				rec := httptest.NewRecorder()
				rec.Header().Set("ETag", etag)
				rec.Header().Set("Content-Type", "application/zip")
				var w http.ResponseWriter = rec
				if tc.method == http.MethodHead {
					w = &statusWriter{ResponseWriter: rec, head: true}
				}
				serve(w, req)
				return rec
			}
			mem := answer(func(w http.ResponseWriter, r *http.Request) { bs.Serve(w, r, body) })
			file := answer(func(w http.ResponseWriter, r *http.Request) {
				bs.File(w, r, tempFile(t, body), int64(len(body)))
			})
			if file.Code != mem.Code {
				t.Errorf("status %d, from memory %d", file.Code, mem.Code)
			}
			// A multipart answer's boundary is random: compare without it.
			strip := func(b []byte, h http.Header) string {
				_, boundary, _ := strings.Cut(h.Get("Content-Type"), "boundary=")
				if boundary == "" {
					return string(b)
				}
				return strings.ReplaceAll(string(b), boundary, "B")
			}
			if strip(file.Body.Bytes(), file.Header()) != strip(mem.Body.Bytes(), mem.Header()) {
				t.Errorf("body of %d bytes, from memory %d", file.Body.Len(), mem.Body.Len())
			}
			keys := func(h http.Header) []string {
				var out []string
				for k, v := range h {
					if k == "Content-Type" && strings.Contains(v[0], "boundary=") {
						v = []string{"multipart/byteranges"}
					}
					if k == "Content-Length" && strings.Contains(h.Get("Content-Type"), "boundary=") {
						continue // the boundary's length varies
					}
					out = append(out, k+": "+strings.Join(v, ", "))
				}
				slices.Sort(out)
				return out
			}
			if got, want := keys(file.Header()), keys(mem.Header()); !slices.Equal(got, want) {
				t.Errorf("headers\n%q\nfrom memory\n%q", got, want)
			}
		})
	}
}

// TestFileIsSentByTheKernel: over a real TCP connection through the
// Layer (its stall deadline on) and the tracked connection, a file's
// bytes reach the connection's ReadFrom, which sends them with sendfile:
// all but the first 512 that net/http copies itself. A range is sent the
// same way.
func TestFileIsSentByTheKernel(t *testing.T) {
	body := make([]byte, 3<<20+12345) // several sendChunks
	for i := range body {
		body[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, body, 0o444); err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		w.Header().Set("ETag", `"x"`)
		Bytes{}.File(w, r, f, int64(len(body)))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, ln := NewHTTPServer(NewLayer(LayerOptions{WriteStallTimeout: time.Minute}).Wrap(h), ln, ConnLimits{MaxConns: 4, ReadHeaderTimeout: time.Minute}, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String() + "/"

	fetch := func(rangeHeader string) []byte {
		req, _ := http.NewRequest("GET", url, nil)
		if rangeHeader != "" {
			req.Header.Set("Range", rangeHeader)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := KernelBytes()
	if got := fetch(""); !bytes.Equal(got, body) {
		t.Fatalf("GET: %d bytes, want the file's %d", len(got), len(body))
	}
	if sent := KernelBytes() - before; sent != int64(len(body))-512 {
		t.Errorf("GET: the kernel sent %d bytes of %d, want all but net/http's first 512", sent, len(body))
	}
	before = KernelBytes()
	if got := fetch("bytes=1000-2099999"); !bytes.Equal(got, body[1000:2100000]) {
		t.Fatalf("range: %d bytes, want %d", len(got), 2100000-1000)
	}
	if sent := KernelBytes() - before; sent != 2100000-1000-512 {
		t.Errorf("range: the kernel sent %d bytes, want %d", sent, 2100000-1000-512)
	}
}

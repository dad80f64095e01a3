package transport

import (
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

// Bytes serves pre-encoded bodies: bytes held whole in memory, their
// ETag set by the caller.
type Bytes struct {
	// MaxRanges is the most ranges a Range header may name before it is
	// ignored and the whole body sent; 0 allows any number.
	MaxRanges int
	// Error, if set, answers an error status http.ServeContent chose
	// (412, 416) in the server's own format, in place of its text.
	Error func(w http.ResponseWriter, status int)
}

// Serve answers with b under http.ServeContent's semantics
// (If-None-Match, Range, HEAD), its error statuses through Error. The usual
// request, a GET or HEAD with at most If-None-Match, is answered here:
// a 304, or the headers and the whole body in one Write (ServeContent
// copies through a 32 KiB buffer, a write system call each). Range and
// the rarer preconditions (If-Match, If-Unmodified-Since, If-Range) go
// to ServeContent. If-Modified-Since needs no case: these bytes have no
// modification time, so ServeContent ignores it too.
func (bs Bytes) Serve(w http.ResponseWriter, r *http.Request, b []byte) {
	if fastPath(r) {
		writeBytes(w, r, b)
		return
	}
	r = bs.ranged(r, int64(len(b)))
	http.ServeContent(&errorWriter{ResponseWriter: w, size: len(b), fail: bs.Error}, r, "", time.Time{}, bytes.NewReader(b))
}

// ranged is r with its Range header as ServeContent should see it for a
// body of size bytes (rangeHeader), a copy when that changes it.
func (bs Bytes) ranged(r *http.Request, size int64) *http.Request {
	h := r.Header.Get("Range")
	if h == "" {
		return r
	}
	fixed := rangeHeader(h, int(size), bs.MaxRanges)
	if fixed == h {
		return r
	}
	r2 := *r
	r2.Header = r.Header.Clone()
	if fixed == "" {
		r2.Header.Del("Range")
	} else {
		r2.Header.Set("Range", fixed)
	}
	return &r2
}

// fastPath reports whether writeBytes answers r as ServeContent would.
// The header map is indexed directly: its keys are canonical, and this
// runs on every artifact and document request.
func fastPath(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	h := r.Header
	return len(h["Range"]) == 0 && len(h["If-Match"]) == 0 && len(h["If-Unmodified-Since"]) == 0 && len(h["If-Range"]) == 0
}

// writeBytes answers a fastPath request with b and the ETag already set:
// 304 when If-None-Match names it (or is "*"), with the headers
// ServeContent removes from a 304; else 200 with Content-Length and the
// whole body at once.
func writeBytes(w http.ResponseWriter, r *http.Request, b []byte) {
	if notModified(w, r) {
		return
	}
	h := w.Header()
	h["Accept-Ranges"] = acceptRangesBytes
	h["Content-Length"] = headerValue(w, slotContentLength, strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		writeWhole(w, b)
	}
}

// notModified answers a fastPath request whose If-None-Match names the
// ETag already set (or is "*") with a 304, without the headers
// ServeContent removes from one, and reports whether it did.
func notModified(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	inm := r.Header["If-None-Match"]
	if len(inm) == 0 || !noneMatchFails(inm[0], h["Etag"]) {
		return false
	}
	delete(h, "Content-Type")
	delete(h, "Content-Length")
	delete(h, "Content-Encoding")
	w.WriteHeader(http.StatusNotModified)
	return true
}

// File answers with the file f, size bytes long and its ETag set by the
// caller, under the same semantics as Serve. The body is copied into the
// response, which hands it to the connection's ReadFrom: on a plain TCP
// connection the kernel sends it from the page cache (sendfile) and the
// bytes never pass through the process, past the first 512 net/http
// copies itself (KernelBytes counts the rest).
func (bs Bytes) File(w http.ResponseWriter, r *http.Request, f *os.File, size int64) {
	if fastPath(r) {
		if notModified(w, r) {
			return
		}
		h := w.Header()
		h["Accept-Ranges"] = acceptRangesBytes
		h["Content-Length"] = headerValue(w, slotContentLength, strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			// Not io.Copy: it would hand w the file wrapped by
			// os.File.WriteTo, which net cannot sendfile from.
			_, _ = copyInto(w, f) // a failed copy is the connection's; net/http closes it
		}
		return
	}
	r = bs.ranged(r, size)
	http.ServeContent(&errorWriter{ResponseWriter: w, size: int(size), fail: bs.Error}, r, "", time.Time{}, f)
}

// acceptRangesBytes is the Accept-Ranges header value of every whole
// body, shared: a slice with no room to grow, so an append copies it.
var acceptRangesBytes = []string{"bytes"}

// noneMatchFails reports whether the If-None-Match list inm names the
// response's ETag (weak comparison, RFC 9110 §13.1.2) or is "*". A list
// that stops parsing ends the scan, as in ServeContent.
func noneMatchFails(inm string, etag []string) bool {
	own := ""
	if len(etag) > 0 {
		own = strings.TrimPrefix(etag[0], "W/")
	}
	for {
		inm = textproto.TrimString(inm)
		switch {
		case inm == "":
			return false
		case inm[0] == ',':
			inm = inm[1:]
			continue
		case inm[0] == '*':
			return true
		}
		tag, rest, ok := scanETag(inm)
		if !ok {
			return false
		}
		if own != "" && strings.TrimPrefix(tag, "W/") == own {
			return true
		}
		inm = rest
	}
}

// scanETag cuts one entity tag, W/"..." or "...", off the front of s.
func scanETag(s string) (tag, rest string, ok bool) {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s)-start < 2 || s[start] != '"' {
		return "", "", false
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || c >= 0x23 && c <= 0x7e || c >= 0x80:
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// rangeHeader is the Range header h as http.ServeContent should see it
// for a body of size bytes: "" to ignore it (more than maxRanges ranges:
// every part of a multipart/byteranges answer carries its own headers, so
// hundreds of one-byte ranges made a body 100 times the file, and RFC 9110
// lets a server ignore Range; maxRanges <= 0 allows any number),
// and without zero-length suffix ranges ("-0", or any suffix range of an
// empty body), which are unsatisfiable (RFC 9110 §14.1.1) but
// ServeContent answered with a 206 and a malformed Content-Range. When
// only those were asked for, it names a range past the end, so
// ServeContent answers 416 after its precondition checks.
func rangeHeader(h string, size, maxRanges int) string {
	specs, ok := strings.CutPrefix(h, "bytes=")
	if !ok {
		return h // ServeContent rejects or ignores it itself
	}
	parts := strings.Split(specs, ",")
	if maxRanges > 0 && len(parts) > maxRanges {
		return ""
	}
	kept := parts[:0]
	for _, p := range parts {
		// Split as ServeContent does: it trims around the "-" too, so
		// "- 0" is the empty suffix range "-0".
		start, end, _ := strings.Cut(p, "-")
		if textproto.TrimString(start) == "" {
			// A suffix range of an empty body is empty too.
			if n, err := strconv.ParseInt(textproto.TrimString(end), 10, 64); err == nil && (n == 0 || size == 0) {
				continue
			}
		}
		kept = append(kept, p)
	}
	switch {
	case len(kept) == len(parts):
		return h
	case len(kept) == 0:
		return "bytes=" + strconv.Itoa(size) + "-"
	}
	return "bytes=" + strings.Join(kept, ",")
}

// errorWriter hands the error statuses written by http.ServeContent (416,
// 412) to fail, and discards ServeContent's plain-text body; without fail
// it lets both through.
type errorWriter struct {
	http.ResponseWriter
	size   int // of the whole body
	fail   func(w http.ResponseWriter, status int)
	failed bool
}

func (w *errorWriter) WriteHeader(status int) {
	// ServeContent leaves Content-Length out of a whole encoded body (it
	// guards against compressing writers); net/http then counts a GET's
	// bytes but cannot count a HEAD's, and the two differed.
	if h := w.Header(); status == http.StatusOK && h.Get("Content-Length") == "" {
		h.Set("Content-Length", strconv.Itoa(w.size))
	}
	if status >= 400 && !w.failed && w.fail != nil {
		w.failed = true
		w.fail(w.ResponseWriter, status)
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *errorWriter) Write(b []byte) (int, error) {
	if w.failed {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom lets a file's bytes reach the connection's ReadFrom (File).
func (w *errorWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.failed {
		return io.Copy(io.Discard, src)
	}
	return copyInto(w.ResponseWriter, src)
}

// copyInto copies src into w through w's ReadFrom when it has one.
func copyInto(w io.Writer, src io.Reader) (int64, error) {
	if rf, ok := w.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{w}, src)
}

// writerOnly hides every method of a writer but Write, so io.Copy into
// it does not call back into the ReadFrom it is used from.
type writerOnly struct{ io.Writer }

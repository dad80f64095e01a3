//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

// bareFile is one mirrored response the bare server answers with.
type bareFile struct {
	body, gzip []byte
	etag       string
}

// loadMirror reads the mirror in dir into memory, keyed by URL path.
func loadMirror(dir string) (map[string]*bareFile, error) {
	files := map[string]*bareFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		key := "/" + filepath.ToSlash(strings.TrimSuffix(rel, ".gz"))
		f := files[key]
		if f == nil {
			f = &bareFile{}
			files[key] = f
		}
		if strings.HasSuffix(rel, ".gz") {
			f.gzip = data
		} else {
			sum := sha256.Sum256(data)
			f.body, f.etag = data, `"`+hex.EncodeToString(sum[:16])+`"`
		}
		return nil
	})
	return files, err
}

// listenMirror loads the mirror in dir for a bare side, and the loopback
// listener it serves on.
func listenMirror(dir string) (map[string]*bareFile, net.Listener, error) {
	files, err := loadMirror(dir)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	return files, ln, err
}

// startBare serves the mirror in dir from memory with the least a Go
// server can do: an ETag, If-None-Match, Content-Length, gzip when a
// .gz sibling exists; no log, no metrics, no middleware. It calibrates
// the comparison: how near nginx net/http itself gets on this machine.
func startBare(dir string) (base string, stop func(), err error) {
	files, ln, err := listenMirror(dir)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := files[r.URL.Path]
		if f == nil || f.body == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h["Etag"] = []string{f.etag}
		h["Content-Type"] = []string{"application/octet-stream"} // not sniffed
		if inm := r.Header["If-None-Match"]; len(inm) > 0 && inm[0] == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body := f.body
		if f.gzip != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			body = f.gzip
			h["Content-Encoding"] = []string{"gzip"}
		}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// startBareHeaders is startBare sending, with each file, the header
// fields skillserver sent with it (heads, by path; ".gz" added for the
// gzip body), X-Request-Id as it was then, Date net/http's own: the same
// response bytes. Against it, what is left of the gap is the transport's
// and the handlers' work, not net/http's for more header fields.
func startBareHeaders(dir string, heads map[string]http.Header) (base string, stop func(), err error) {
	files, ln, err := listenMirror(dir)
	if err != nil {
		return "", nil, err
	}
	// Each response's fields as header values, built once, as skillserver
	// shares its constant ones.
	fields := map[string]http.Header{}
	for p, h := range heads {
		kept := http.Header{}
		for k, v := range h {
			if k != "Date" {
				kept[k] = v
			}
		}
		fields[p] = kept
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := files[r.URL.Path]
		if f == nil || f.body == nil {
			http.NotFound(w, r)
			return
		}
		key := r.URL.Path
		gz := f.gzip != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip")
		if gz {
			key += ".gz"
		}
		h := w.Header()
		for k, v := range fields[key] {
			h[k] = v
		}
		if inm := r.Header["If-None-Match"]; len(inm) > 0 && inm[0] == h.Get("Etag") {
			delete(h, "Content-Type")
			delete(h, "Content-Length")
			delete(h, "Content-Encoding")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body := f.body
		if gz {
			body = f.gzip
		}
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// startBareFast is startBare on fasthttp instead of net/http: the same
// answers from the same memory, through another Go HTTP/1.1 engine. It
// says how much of the gap to nginx is net/http's own.
func startBareFast(dir string) (base string, stop func(), err error) {
	files, ln, err := listenMirror(dir)
	if err != nil {
		return "", nil, err
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		f := files[string(ctx.Path())]
		if f == nil || f.body == nil {
			ctx.SetStatusCode(http.StatusNotFound)
			return
		}
		ctx.Response.Header.Set("Etag", f.etag)
		ctx.Response.Header.SetContentType("application/octet-stream")
		if string(ctx.Request.Header.Peek("If-None-Match")) == f.etag {
			ctx.SetStatusCode(http.StatusNotModified)
			return
		}
		body := f.body
		if f.gzip != nil && strings.Contains(string(ctx.Request.Header.Peek("Accept-Encoding")), "gzip") {
			body = f.gzip
			ctx.Response.Header.Set("Content-Encoding", "gzip")
		}
		ctx.Response.SetBodyRaw(body)
	}}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Shutdown() }, nil
}

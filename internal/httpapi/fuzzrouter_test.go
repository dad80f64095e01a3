package httpapi

import (
	"bufio"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzRouter sends any method, path, Range, If-None-Match, Host and
// Accept-Encoding to a server over the example tree, parsed the way
// net/http parses requests off the wire: no answer is a 5xx (a recovered
// panic is a 500), and HEAD answers exactly the GET's status and headers,
// without a body.
func FuzzRouter(f *testing.F) {
	s, _ := newTestServer(f, Options{})
	zip := "/api/v1/skills/k8s-deploy/1.2.0/archive.zip"
	for _, seed := range [][6]string{
		{"GET", "/.well-known/agent-skills/index.json", "", "", "a.test", "gzip"},
		{"GET", "/.well-known/agent-skills/index.json", "bytes=0-9", "", "a.test:8080", "gzip;q=0"},
		{"HEAD", zip, "bytes=-0", "", "[::1]:1", ""},
		{"GET", zip, "bytes=0-0,1-1,2-2", "*", "localhost", ""},
		{"GET", zip + "?digest=sha256:00", "bytes=" + strings.Repeat("0-0,", 20) + "1-1", "", "a", ""},
		{"GET", zip, "bytes=999999999999999999999-", `W/"x", "y"`, "a.test", ""},
		{"M-SEARCH", "/skills/v1/pages/all.json", "", "", "127.0.0.1:99999", ""},
		{"DELETE", "/api/v1/skills/k8s-deploy", "", "", "-x", ""},
		{"OPTIONS", "/api/v1/skills?q=review&take=1&skip=99", "bytes=5-", "", "a..b", "br, gzip"},
		{"POST", "/api/v1/skills/check-updates", "", "", "a.test", ""},
		{"GET", "/api/v1/skills/k8s-deploy/latest/..%2f..%2fgo.mod", "", "", "a.test", ""},
		{"GET", "/skills/v1/pages/index.json?a=1;b=2", "", "", "a.test", "*"},
		{"GET", "/api/v1/subagents/technical-support-diagnostician/1.0.0/agent.md", "bytes=-1", "", "a.test", ""},
		{"GET", "/.well-known/skills/code-review/references/checklist.md", "bytes=1-0", "", "a.test", ""},
		{"GET", "/api/v1/blobs/sha256/%zz", "", "", "a.test", ""},
		{"GET", "/ui/skills/k8s-deploy/1.2.0/files/scripts/deploy.sh", "bytes=0-3", "", "a.test", "gzip"},
		{"HEAD", "/ui/skills/k8s-deploy/latest/files/%2e%2e/SKILL.md", "", "", "a.test", ""},
		{"GET", "/ui/skills/k8s-deploy/2.0.0-rc.1/compare/latest", "", "*", "a.test", ""},
		{"GET", "/ui/skills/k8s-deploy/1.0.0/compare/1.0.0", "", "", "a.test", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4], seed[5])
	}
	f.Fuzz(func(t *testing.T, method, target, rangeH, inm, host, encoding string) {
		req := func(method string) *http.Request {
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, host)
			for _, h := range [][2]string{{"Range", rangeH}, {"If-None-Match", inm}, {"Accept-Encoding", encoding}} {
				if h[1] != "" {
					fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
				}
			}
			b.WriteString("\r\n")
			r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(b.String())))
			if err != nil {
				return nil // net/http would have answered 400 itself
			}
			return r
		}
		serve := func(r *http.Request) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, r)
			if rec.Code >= 500 {
				t.Fatalf("%s %s: status %d: %s", r.Method, target, rec.Code, rec.Body)
			}
			return rec
		}
		r := req(method)
		if r == nil {
			return
		}
		serve(r)
		get, head := req("GET"), req("HEAD")
		if get == nil || head == nil {
			return
		}
		g, h := serve(get), serve(head)
		if g.Code != h.Code || h.Body.Len() != 0 {
			t.Fatalf("%s: GET %d, HEAD %d with %d body bytes", target, g.Code, h.Code, h.Body.Len())
		}
		if n := g.Header().Get("Content-Length"); g.Body.Len() > 0 && n != strconv.Itoa(g.Body.Len()) {
			t.Fatalf("%s: GET sent %d bytes with Content-Length %q", target, g.Body.Len(), n)
		}
		gh, hh := g.Header().Clone(), h.Header().Clone()
		for _, k := range []string{"Date", "X-Request-Id"} { // Date may tick, the request ID is new
			gh.Del(k)
			hh.Del(k)
		}
		for _, hdr := range []http.Header{gh, hh} { // and so is a multipart boundary
			if ct, ok := strings.CutPrefix(hdr.Get("Content-Type"), "multipart/byteranges; boundary="); ok && ct != "" {
				hdr.Set("Content-Type", "multipart/byteranges")
			}
		}
		if !maps.EqualFunc(gh, hh, slices.Equal) {
			t.Fatalf("%s: headers differ\nGET  %v\nHEAD %v", target, gh, hh)
		}
	})
}

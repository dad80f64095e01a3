package httpapi

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/feed"
)

// TestExactRoutesAnswerAsTheRouter: the routes served without chi (plain
// paths, GET and HEAD) are derived from its table and answer exactly as
// the router does, with the same middleware; other methods, and paths
// that only look like them, still go through the router.
func TestExactRoutesAnswerAsTheRouter(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	index := feed.DocKey{Kind: feed.DocRFCIndex}.Path()
	if s.exact[http.MethodGet][index] == nil || s.exact[http.MethodHead][index] == nil {
		t.Fatalf("%s is not an exact route: %v", index, s.exact)
	}
	var paths []string
	for p := range s.exact[http.MethodGet] {
		if strings.ContainsAny(p, "{*") {
			t.Errorf("exact route %q has parameters", p)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			for _, headers := range [][]string{nil, {"Accept-Encoding", "gzip"}, {"If-None-Match", "*"}} {
				headers = append(headers, "X-Request-Id", "same-id")
				got := do(t, s, method, p, headers...)
				want := do(t, s.handler, method, p, headers...)
				if got.code != want.code || !bytes.Equal(got.body, want.body) || !sameHeaders(got.header, want.header) {
					t.Errorf("%s %s %v: exact route answered %d %v %q, the router %d %v %q", method, p, headers,
						got.code, got.header, got.body, want.code, want.header, want.body)
				}
			}
		}
	}
	for _, tc := range []struct{ method, target string }{
		{http.MethodPost, index},
		{http.MethodGet, index + "/"},
		{http.MethodGet, strings.Replace(index, "index", "%69ndex", 1)},
	} {
		got, want := do(t, s, tc.method, tc.target), do(t, s.handler, tc.method, tc.target)
		if got.code != want.code || !bytes.Equal(got.body, want.body) {
			t.Errorf("%s %s: %d %q, the router %d %q", tc.method, tc.target, got.code, got.body, want.code, want.body)
		}
	}
}

func sameHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

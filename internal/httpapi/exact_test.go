package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/skill"
	"github.com/skillserver/skillserver/internal/transport"
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

// TestBlobFilesAnswerAsTheRouter: the content-addressed files, found by
// their path's prefix without chi (blobFileOf), answer exactly as the
// router does: every file of every skill, as GET, HEAD, a revalidation
// and a range, and the paths that only look like one.
func TestBlobFilesAnswerAsTheRouter(t *testing.T) {
	s, snap := newTestServer(t, Options{})
	var paths []string
	for _, sk := range snap.Skills {
		v := sk.Latest
		paths = append(paths, feed.ArtifactPath(v.SkillMD, skill.FileName))
		if v.Archive != "" {
			paths = append(paths, feed.ArtifactPath(v.Archive, feed.ArchiveFile))
		}
		for _, res := range v.Resources {
			paths = append(paths, feed.ArtifactPath(res.Digest, res.Path))
		}
	}
	if len(paths) < 4 {
		t.Fatalf("the example tree gave %d files", len(paths))
	}
	for _, p := range paths {
		if _, _, ok := blobFileOf(p); !ok && !strings.Contains(p, "%") {
			t.Errorf("%s is not routed by its prefix", p)
		}
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			for _, headers := range [][]string{nil, {"If-None-Match", "*"}, {"Range", "bytes=1-3"}} {
				headers = append(headers, "X-Request-Id", "same-id")
				got, want := do(t, s, method, p, headers...), do(t, s.handler, method, p, headers...)
				if got.code != want.code || !bytes.Equal(got.body, want.body) || !sameHeaders(got.header, want.header) {
					t.Errorf("%s %s %v: answered %d %v %q, the router %d %v %q", method, p, headers,
						got.code, got.header, got.body, want.code, want.header, want.body)
				}
				if method == http.MethodGet && headers[0] == "X-Request-Id" && got.code != http.StatusOK {
					t.Errorf("GET %s: %d", p, got.code)
				}
			}
		}
	}
	good := paths[0]
	hex, name, _ := blobFileOf(good)

	// The request log names the route's pattern, as chi's route does.
	var lines bytes.Buffer
	logged, _ := newTestServerLog(t, Options{RequestLog: &transport.RequestLog{Out: &lines}}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if got := do(t, logged, http.MethodGet, good); got.code != http.StatusOK {
		t.Fatalf("GET %s: %d", good, got.code)
	}
	if want := `"route":"` + feed.PathBlobFile + `"`; !strings.Contains(lines.String(), want) {
		t.Errorf("request log %q lacks %s", lines.String(), want)
	}
	for _, target := range []string{
		blobPrefix + hex,                               // no file name
		blobPrefix + hex + "/",                         // an empty one
		blobPrefix + strings.ToUpper(hex) + "/" + name, // upper-case hex
		blobPrefix + hex[1:] + "/" + name,              // short
		blobPrefix + "sha256:" + hex + "/" + name,      // the digest's prefix again
		blobPrefix + hex + "/" + name + "/",
		blobPrefix + hex + "/%53KILL.md", // escaped: chi's
		blobPrefix + hex + "/other.md",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			got, want := do(t, s, method, target), do(t, s.handler, method, target)
			if got.code != want.code || !bytes.Equal(got.body, want.body) {
				t.Errorf("%s %s: %d %q, the router %d %q", method, target, got.code, got.body, want.code, want.body)
			}
		}
	}
}

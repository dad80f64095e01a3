package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/skillserver/skillserver/internal/access"
)

func TestCutTokenPrefix(t *testing.T) {
	for _, tc := range []struct {
		target, secret, path, rawPath string
		ok                            bool
	}{
		{"/t/abc-0123456789abcdef/manifest.json", "abc-0123456789abcdef", "/manifest.json", "", true},
		{"/t/abc-0123456789abcdef", "abc-0123456789abcdef", "/", "", true},
		{"/t/abc-0123456789abcdef/", "abc-0123456789abcdef", "/", "", true},
		{"/t/abc-0123456789abcdef/api/v1/skills/x/1.0/a%2Fb.md", "abc-0123456789abcdef", "/api/v1/skills/x/1.0/a/b.md", "/api/v1/skills/x/1.0/a%2Fb.md", true},
		{"/t/ab%2Fc/manifest.json", "ab%2Fc", "/", "", true}, // no valid token: refused
		{"/t//manifest.json", "", "/manifest.json", "", true},
		{"/manifest.json", "", "", "", false},
		{"/tx/abc/manifest.json", "", "", "", false},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		secret, rest, ok := cutTokenPrefix(r.URL)
		if ok != tc.ok || secret != tc.secret {
			t.Errorf("%s: secret %q ok %v, want %q %v", tc.target, secret, ok, tc.secret, tc.ok)
			continue
		}
		if ok && (rest.Path != tc.path || rest.RawPath != tc.rawPath) {
			t.Errorf("%s: rest %q (raw %q), want %q (raw %q)", tc.target, rest.Path, rest.RawPath, tc.path, tc.rawPath)
		}
	}
}

func TestRedactedPath(t *testing.T) {
	s := &Server{opts: Options{ReadTokens: nil}}
	r := httptest.NewRequest("GET", "/t/secret-0123456789ab/manifest.json", nil)
	if got := s.redactedPath(r); got != r.URL.Path {
		t.Errorf("without read tokens the path is logged as is: %q", got)
	}
	s.opts.ReadTokens = staticTokens{}
	for target, want := range map[string]string{
		"/t/secret-0123456789ab/manifest.json": "/t/REDACTED/manifest.json",
		"/t/secret-0123456789ab":               "/t/REDACTED",
		"/manifest.json":                       "/manifest.json",
	} {
		if got := s.redactedPath(httptest.NewRequest("GET", target, nil)); got != want {
			t.Errorf("%s logged as %q, want %q", target, got, want)
		}
	}
}

type staticTokens struct{}

func (staticTokens) Tokens() *access.Set { return nil }

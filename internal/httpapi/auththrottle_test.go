package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/throttle"
)

func TestClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:51234":                "192.0.2.7",
		"[::ffff:192.0.2.7]:51234":       "192.0.2.7",
		"[2001:db8:1:2:aaaa::1]:443":     "2001:db8:1:2::/64",
		"[2001:db8:1:2:bbbb::9]:443":     "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":              "fe80::/64",
		"@":                              "@",
		"not an address":                 "not an address",
		"[2001:db8:1:3::1]:1":            "2001:db8:1:3::/64",
		"127.0.0.1:0":                    "127.0.0.1",
		"[::1]:8080":                     "::/64",
		"203.0.113.9:65535":              "203.0.113.9",
		"[2001:db8:ffff:ffff:1::]:65535": "2001:db8:ffff:ffff::/64",
	} {
		if got := clientKey(addr); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestWrongTokensThrottled: past the allowance, each route that checks a
// token answers 429 with Retry-After and the JSON error body of
// errorTable, to a wrong token and to a right one alike (neither is
// checked), and a request without a token still 401; other addresses are
// not held back.
func TestWrongTokensThrottled(t *testing.T) {
	const admin, read = "admin-token-0123456789", "read-token-0123456789ab"
	set, err := access.Parse(strings.NewReader("all "+read+" *\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, target, good, bad string
	}{
		{"reload", "POST", "/-/reload", "Bearer " + admin, "Bearer wrong-token-0123456789"},
		{"problems", "GET", "/-/problems", "Bearer " + admin, "Bearer wrong-token-0123456789"},
		{"problems, Basic", "GET", "/-/problems", "Basic " + basic("admin", admin), "Basic " + basic("admin", "wrong-token-0123456789")},
		{"read bearer", "GET", "/manifest.json", "Bearer " + read, "Bearer wrong-token-0123456789"},
		{"read path", "GET", "/t/%s/manifest.json", read, "wrong-token-0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestServer(t, Options{AdminToken: admin, ReadTokens: tokenSet{set}, AuthFailures: throttle.New(3, throttle.MaxKeys)})
			s.opts.Reloader = catalogReloader{s.cat.(*catalog.Catalog)}
			send := func(from, auth string) *httptest.ResponseRecorder {
				target := tc.target
				if strings.Contains(target, "%s") {
					target, auth = strings.Replace(target, "%s", auth, 1), ""
				}
				req := httptest.NewRequest(tc.method, target, nil)
				req.RemoteAddr = from
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				return rec
			}
			const guesser, other = "198.51.100.1:4000", "198.51.100.2:4000"
			for i := range 3 {
				if rec := send(guesser, tc.bad); rec.Code != http.StatusForbidden {
					t.Fatalf("wrong token %d: %d, want 403", i+1, rec.Code)
				}
			}
			rec := send("198.51.100.1:4001", tc.bad) // another port of the same host
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "20" {
				t.Fatalf("wrong token 4: %d, Retry-After %q; want 429, 20", rec.Code, rec.Header().Get("Retry-After"))
			}
			var body errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error != "too_many_requests" || !strings.Contains(body.Message, "Retry-After") {
				t.Errorf("429 body %s (%v)", rec.Body, err)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("429 Cache-Control %q", cc)
			}
			// A held address's token is not checked: the right one gets
			// the same 429, so a guesser learns nothing from it.
			if rec := send(guesser, tc.good); rec.Code != http.StatusTooManyRequests {
				t.Errorf("the right token from the held address: %d, want 429 (a 200 tells a guesser it guessed right)", rec.Code)
			}
			if rec := send(other, tc.good); rec.Code != http.StatusOK {
				t.Errorf("the right token from another address: %d, want 200", rec.Code)
			}
			if rec := send(other, tc.bad); rec.Code != http.StatusForbidden {
				t.Errorf("a wrong token from another address: %d, want 403", rec.Code)
			}
			noToken := strings.Replace(tc.target, "/t/%s", "", 1)
			req := httptest.NewRequest(tc.method, noToken, nil)
			req.RemoteAddr = guesser
			rec = httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("no token from the throttled address: %d, want 401", rec.Code)
			}
		})
	}
}

func basic(user, password string) string {
	r := httptest.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// TestClientAddrBehindAProxy: with trust_proxy, wrong tokens count
// against the address the proxy names last in X-Forwarded-For, so one
// guesser behind the proxy holds back only itself; without it, against
// the connection's.
func TestClientAddrBehindAProxy(t *testing.T) {
	const proxy = "192.0.2.1:5000"
	for _, tc := range []struct {
		trust bool
		xff   []string
		want  string
	}{
		{false, []string{"198.51.100.7"}, proxy},
		{true, nil, proxy},
		{true, []string{"198.51.100.7"}, "198.51.100.7:0"},
		{true, []string{"203.0.113.9, 198.51.100.7"}, "198.51.100.7:0"},
		{true, []string{"203.0.113.9", "198.51.100.7 "}, "198.51.100.7:0"},
		{true, []string{"2001:db8::1"}, "[2001:db8::1]:0"},
		{true, []string{"unknown"}, proxy},
	} {
		s := &Server{opts: Options{TrustProxy: tc.trust}}
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = proxy
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := s.clientAddr(r); got != tc.want {
			t.Errorf("trust %v, X-Forwarded-For %q: %q, want %q", tc.trust, tc.xff, got, tc.want)
		}
	}
	lim := throttle.New(1, throttle.MaxKeys)
	s := &Server{opts: Options{TrustProxy: true, AuthFailures: lim}}
	guess := func(client string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = proxy
		r.Header.Set("X-Forwarded-For", client)
		s.refuseWrongToken(httptest.NewRecorder(), r, errForbidden)
	}
	guess("198.51.100.7")
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = proxy
	r.Header.Set("X-Forwarded-For", "198.51.100.8")
	if s.throttled(httptest.NewRecorder(), r) {
		t.Error("another client behind the same proxy is held back by one guesser's failure")
	}
}

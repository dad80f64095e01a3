package check

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Secrets of the redirect tests: neither may reach the second origin.
const (
	bearerSecret = "bearer-sekret-4711"
	pathSecret   = "path-sekret-0815"
)

// leakRecorder records, of each request it sees, whether it carried an
// Authorization header or either secret anywhere (URL or header).
type leakRecorder struct {
	mu       sync.Mutex
	requests int
	leaks    []string
}

func (l *leakRecorder) record(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	if a := r.Header.Get("Authorization"); a != "" {
		l.leaks = append(l.leaks, r.Method+" "+r.URL.String()+": Authorization: "+a)
	}
	seen := r.URL.String()
	for k, vs := range r.Header {
		seen += "\n" + k + ": " + strings.Join(vs, ", ")
	}
	for _, s := range []string{bearerSecret, pathSecret} {
		if strings.Contains(seen, s) {
			l.leaks = append(l.leaks, r.Method+" "+r.URL.String()+" carries "+s+":"+seen)
		}
	}
}

func (l *leakRecorder) result() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests, l.leaks
}

// crossOriginFinding is the report's finding for a redirect away from the
// feed's origin, if any.
func crossOriginFinding(r *Report) *Finding {
	for i, f := range r.Findings {
		if strings.Contains(f.Message, "another origin") {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestRedirectToAnotherPort: a feed on one port redirects every request
// to a server on another port of the same host. An authenticated check
// carries neither its bearer token nor its path token (in the URL, or in
// a Referer) there, and reports the redirect as an error; an
// unauthenticated check follows it.
func TestRedirectToAnotherPort(t *testing.T) {
	var rec leakRecorder
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		if r.URL.Path == "/.well-known/agent-skills/index.json" {
			w.Header().Set("Content-Type", "application/json")
			w.Write(index(""))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(second.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The path without the path token: whatever reaches the second
		// server is what check carried there.
		p := r.URL.Path
		if rest, ok := strings.CutPrefix(p, "/t/"+pathSecret); ok {
			p = rest
		}
		http.Redirect(w, r, second.URL+p, http.StatusFound)
	}))
	t.Cleanup(first.Close)

	tests := []struct {
		name   string
		opts   Options
		authed bool
	}{
		{"bearer token", Options{URL: first.URL, Token: bearerSecret}, true},
		{"path token", Options{URL: first.URL + "/t/" + pathSecret}, true},
		{"no credentials", Options{URL: first.URL}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, earlier := rec.result()
			r, err := Run(t.Context(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			n, leaks := rec.result()
			for _, l := range leaks[len(earlier):] {
				t.Errorf("the second origin saw a credential: %s", l)
			}
			f := crossOriginFinding(r)
			switch {
			case tt.authed && (f == nil || f.Severity != Error || f.Rule != RuleFetch || !strings.Contains(f.Message, second.URL) || r.OK):
				t.Errorf("ok %v, findings %+v: want a fetch error naming the redirect to %s, another origin", r.OK, r.Findings, second.URL)
			case !tt.authed && (f != nil || n == before):
				t.Errorf("findings %+v, %d requests on the second origin: want the redirects followed", r.Findings, n-before)
			}
			var text strings.Builder
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), pathSecret) || strings.Contains(text.String(), bearerSecret) {
				t.Errorf("the report shows a secret:\n%s", text.String())
			}
			t.Logf("the report:\n%s", text.String())
		})
	}
}

// sniffListener answers TLS and plain HTTP on one port: a connection
// whose first byte starts a TLS handshake is served over TLS.
type sniffListener struct {
	net.Listener
	config *tls.Config
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (l sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	first, err := br.Peek(1)
	c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, r: br}
	if err == nil && first[0] == 0x16 { // a TLS handshake record
		return tls.Server(pc, l.config), nil
	}
	return pc, nil
}

// TestRedirectToPlainHTTP: an https feed redirects to http on the same
// host and port. The bearer token does not go out in clear text, and the
// report names the redirect.
func TestRedirectToPlainHTTP(t *testing.T) {
	// httptest's TLS server lends its certificate (valid for 127.0.0.1)
	// and a client trusting it.
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)

	var rec leakRecorder
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			http.Redirect(w, r, "http://"+r.Host+r.URL.Path, http.StatusMovedPermanently)
			return
		}
		rec.record(r)
		http.NotFound(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sniffListener{Listener: ln, config: &tls.Config{Certificates: ts.TLS.Certificates, NextProtos: []string{"http/1.1"}}})
	t.Cleanup(func() { srv.Close() })

	base := "https://" + ln.Addr().String()
	r, err := Run(t.Context(), Options{URL: base, Token: bearerSecret, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	_, leaks := rec.result()
	for _, l := range leaks {
		t.Errorf("plain http saw a credential: %s", l)
	}
	plain := "http://" + ln.Addr().String()
	if f := crossOriginFinding(r); f == nil || f.Severity != Error || !strings.Contains(f.Message, plain) || r.OK {
		t.Errorf("ok %v, findings %+v: want an error naming the redirect to %s, another origin", r.OK, r.Findings, plain)
	}
}

// TestSameOrigin: the origin is the scheme, host and port, with the
// scheme's default port filled in.
func TestSameOrigin(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"https://h.example/x", "https://h.example:443/y", true},
		{"http://h.example/x", "http://H.EXAMPLE:80/y", true},
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/t/y", true},
		{"https://h.example/x", "http://h.example/x", false},
		{"http://h.example:8080/x", "http://h.example:8081/x", false},
		{"http://h.example/x", "http://sub.h.example/x", false},
		{"http://[::1]:80/x", "http://[::1]/y", true},
	}
	for _, tt := range tests {
		if got := sameOrigin(mustParse(t, tt.a), mustParse(t, tt.b)); got != tt.same {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

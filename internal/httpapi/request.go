package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/skillserver/skillserver/internal/catalog"
)

// param returns a decoded path parameter. chi matches on the escaped path
// when the request has one, so its parameters are escaped then.
func param(r *http.Request, key string) (string, bool) {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v, true
	}
	u, err := url.PathUnescape(v)
	return u, err == nil
}

// jsonFile strips ".json" from the {file} parameter.
func jsonFile(r *http.Request) (string, bool) {
	f, ok := param(r, "file")
	base, found := strings.CutSuffix(f, ".json")
	return base, ok && found && base != ""
}

// validHost reports whether host may go into a base URL: a DNS name
// (labels of letters, digits and inner hyphens, and an optional final
// dot) or an IP literal, with an
// optional port 1-65535. Anything else in Host is refused, since it would
// end up in every absolute URL of the response.
func validHost(host string) bool {
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		name, port = host[:i], host[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] < '1' || port[0] > '9' {
			return false
		}
	}
	if inner, ok := strings.CutPrefix(name, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		a, err := netip.ParseAddr(inner)
		return ok && err == nil && a.Is6() && a.Zone() == ""
	}
	if name == "" || len(name) > 253 {
		return false
	}
	// A fully qualified name ends in the root's empty label, as in
	// "skills.example.com.": clients send what they were given.
	for label := range strings.SplitSeq(strings.TrimSuffix(name, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// baseURL is the public base for absolute URLs in this response.
func (s *Server) baseURL(r *http.Request) (string, bool) {
	if s.opts.BaseURL != "" {
		return s.opts.BaseURL, true
	}
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if s.opts.TrustProxy {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	if host == "" {
		// HTTP/1.0 needs no Host: name the address the client reached.
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host = a.String()
		}
	}
	if last := s.lastBase.Load(); last != nil && last.scheme == scheme && last.host == host {
		return last.url, true
	}
	if !validHost(host) {
		return "", false
	}
	b := &derivedBase{scheme: scheme, host: host, url: scheme + "://" + strings.ToLower(host)}
	s.lastBase.Store(b)
	return b.url, true
}

func firstValue(h string) string {
	first, _, _ := strings.Cut(h, ",")
	return strings.TrimSpace(first)
}

// snapshotFor returns the current snapshotFor, or answers 503 and returns nil
// before the first scan finished.
func (s *Server) snapshotFor(w http.ResponseWriter, r *http.Request) *catalog.Snapshot {
	snap := s.cat.Current()
	if snap == nil {
		s.fail(w, r, errNotReady)
	}
	return snap
}

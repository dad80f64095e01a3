package httpapi

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// throttled answers 429 with Retry-After, and reports true, when the
// request's client address has sent too many wrong tokens
// (Options.AuthFailures): its token is then not checked at all, right or
// wrong, so a guesser learns nothing more than one guess an allowance
// lets through. Called before a token is checked; a request with no
// token is no guess and is never throttled. A client that sends the right
// token never spends its address's allowance, so it is throttled back only
// when it shares its address with a guesser (a NAT, a proxy:
// docs/operations.md, "Guessing tokens").
func (s *Server) throttled(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.AuthFailures == nil {
		return false
	}
	after, held := s.opts.AuthFailures.Held(clientKey(s.clientAddr(r)), time.Now())
	if held {
		s.tooManyFailures(w, r, after)
	}
	return held
}

// tooManyFailures is the 429 of a held address.
func (s *Server) tooManyFailures(w http.ResponseWriter, r *http.Request, after time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatInt(int64((after+time.Second-1)/time.Second), 10))
	s.fail(w, r, errTooManyFailures)
}

// refuseWrongToken answers a request whose token was checked and is
// wrong: with err (403), counting the failure against its client
// address; one that finds the allowance spent (a race with another
// request of the address) gets held's 429.
func (s *Server) refuseWrongToken(w http.ResponseWriter, r *http.Request, err error) {
	if s.opts.AuthFailures != nil {
		if after, ok := s.opts.AuthFailures.Fail(clientKey(s.clientAddr(r)), time.Now()); !ok {
			s.tooManyFailures(w, r, after)
			return
		}
	}
	s.fail(w, r, err)
}

// clientAddr is the address of the request's client: the connection's,
// or with trust_proxy the last X-Forwarded-For entry, which the proxy in
// front added (the entries before it are the client's own word). Without
// it, every client behind a proxy would share the proxy's allowance, and
// one guesser would hold them all back.
func (s *Server) clientAddr(r *http.Request) string {
	if !s.opts.TrustProxy {
		return r.RemoteAddr
	}
	xff := r.Header.Values("X-Forwarded-For")
	if len(xff) == 0 {
		return r.RemoteAddr
	}
	last := xff[len(xff)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	a, err := netip.ParseAddr(strings.TrimSpace(last))
	if err != nil {
		return r.RemoteAddr // not an address: the proxy's own word is the connection
	}
	return netip.AddrPortFrom(a, 0).String()
}

// clientKey is what failures are counted by: a client address
// (clientAddr) without its port, and for IPv6 its /64, the block one
// host is given.
func clientKey(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr // not host:port (a test's, a Unix socket's): as is
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

package httpapi

import (
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// AuthLimiter counts the failed authentications of each client address
// (throttle.Limiter): Fail records one, and reports false, with how long
// to wait, once the address has failed too often.
type AuthLimiter interface {
	Fail(key string, now time.Time) (retryAfter time.Duration, ok bool)
}

var errTooManyFailures = errors.New("too many requests: too many wrong tokens from this address; retry after the seconds of Retry-After")

// refuseWrongToken answers a request whose token was checked and is
// wrong: with err (403), or, once its client address has sent too many
// wrong tokens (Options.AuthFailures), 429 with Retry-After. Only a token
// that was checked and is wrong counts: a request with no token is no
// guess, and a right token is never refused, from any address. A
// guesser from a throttled address thus still tells a right token (200)
// from a wrong one (429) at whatever rate it sends: the limit slows a
// client that heeds 429, and the secret's length is what keeps a
// guesser out (docs/operations.md, "Private feeds").
func (s *Server) refuseWrongToken(w http.ResponseWriter, r *http.Request, err error) {
	if s.opts.AuthFailures != nil {
		if after, ok := s.opts.AuthFailures.Fail(clientKey(r.RemoteAddr), time.Now()); !ok {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((after+time.Second-1)/time.Second), 10))
			err = errTooManyFailures
		}
	}
	s.fail(w, r, err)
}

// clientKey is what failures are counted by: the connection's address
// (not X-Forwarded-For, which a client can set), without its port, and
// for IPv6 its /64, the block one host is given.
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

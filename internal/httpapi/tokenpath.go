package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/skillserver/skillserver/internal/feed"
)

// TokenPrefix starts the path form of a read token: /t/<token>/<route>,
// for clients that can send no header (the skills CLI).
const TokenPrefix = feed.PathTokenPrefix

// cutTokenPrefix splits /t/<token>/<rest> into the token and the URL of
// rest. A token is made of URL-unreserved characters only
// (internal/access), so a segment holding an escape is no token: it
// comes back as such a secret, which matches none.
func cutTokenPrefix(u *url.URL) (secret string, rest *url.URL, ok bool) {
	raw, found := strings.CutPrefix(u.EscapedPath(), TokenPrefix)
	if !found {
		return "", nil, false
	}
	secret, _, _ = strings.Cut(raw, "/")
	rest = new(url.URL)
	*rest = *u
	switch {
	case strings.Contains(secret, "%"):
		rest.Path, rest.RawPath = "/", ""
	case u.RawPath == "":
		rest.Path = u.Path[len(TokenPrefix)+len(secret):]
	default:
		rest.RawPath = u.RawPath[len(TokenPrefix)+len(secret):]
		rest.Path, _ = url.PathUnescape(rest.RawPath)
	}
	if rest.Path == "" {
		rest.Path, rest.RawPath = "/", ""
	}
	return secret, rest, true
}

// redactedPath is r's path as logged: a path token replaced.
func (s *Server) redactedPath(r *http.Request) string {
	p := r.URL.Path
	if s.opts.ReadTokens == nil {
		return p
	}
	rest, ok := strings.CutPrefix(p, TokenPrefix)
	if !ok {
		return p
	}
	_, after, found := strings.Cut(rest, "/")
	if !found {
		return TokenPrefix + "REDACTED"
	}
	return TokenPrefix + "REDACTED/" + after
}

// bearerToken is the token of an "Authorization: Bearer <token>" header.
// The scheme is case-insensitive (RFC 9110 §11.1).
func bearerToken(h string) (string, bool) {
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimLeft(token, " ")
	return token, strings.EqualFold(scheme, "Bearer") && token != ""
}

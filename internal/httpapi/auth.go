package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/skillserver/skillserver/internal/access"
	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/transport"
)

// openRoutes answer without a read token: probes, and the admin routes,
// which have their own token.
var openRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/-/reload": true, feed.PathUIProblems: true}

// grant is what a request's read token lets it see.
type grant struct {
	token  *access.Token
	prefix string // "/t/<token>" for the path form, else ""
}

type grantKey struct{}

// authenticate enforces the read tokens, when configured. A token comes
// as a bearer header or as the /t/<token>/ path prefix, which is cut off
// before routing and put back in every link of the response. Authorized
// responses are private to their reader: shared caches must not keep
// them, and no Referer carries a path token elsewhere.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if s.opts.ReadTokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, rest, pathForm := cutTokenPrefix(r.URL)
		if pathForm && openRoutes[rest.Path] {
			r2 := *r
			r2.URL = rest
			r = &r2
		}
		// ClawHub's discovery document names only where the API is; the
		// clawhub CLI fetches it at the host's root without a token
		// before it sends its configured one. Under a path token it is
		// the token's (its apiBase carries the token).
		// The pages' embedded script and icon are the program's own,
		// the same for everyone; the page a browser without a token
		// gets loads them.
		if openRoutes[r.URL.Path] || !pathForm && (r.URL.Path == feed.PathClawHubDiscovery || pageAsset(r.URL.Path)) {
			next.ServeHTTP(w, r)
			return
		}
		if !pathForm {
			var ok bool
			if secret, ok = bearerToken(r.Header.Get("Authorization")); !ok {
				secret = "" // another scheme carries no read token
			}
		}
		if secret == "" {
			reason := "missing"
			if discoveryProbe(r, pathForm) {
				reason = "probe"
			}
			s.refuse(w, r, reason, errNoReadToken)
			return
		}
		if s.throttled(w, r) {
			if s.opts.Observer != nil {
				s.opts.Observer.ObserveRefusal("throttled")
			}
			return
		}
		tok, ok := s.opts.ReadTokens.Tokens().Lookup(secret)
		if !ok {
			s.refuse(w, r, "unknown", errBadReadToken)
			return
		}
		transport.SetToken(w, tok.Name)
		g := grant{token: tok}
		if pathForm {
			g.prefix = TokenPrefix + secret
			r2 := *r
			r2.URL = rest
			r = &r2
		}
		h := w.Header()
		h.Add("Vary", "Authorization")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(&privateWriter{ResponseWriter: w}, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

// discoveryProbes are the documents a client looks for at the bare host
// before, or besides, the feed URL it was given: the skills CLI (1.7.4),
// given https://host/t/<token>/..., also fetches both RFC indexes at
// https://host/ without the token, on every add and update.
var discoveryProbes = map[string]bool{
	feed.DocKey{Kind: feed.DocRFCIndex}.Path():    true,
	feed.DocKey{Kind: feed.DocLegacyIndex}.Path(): true,
}

// discoveryProbe reports whether a request that carries no token is such
// a probe: a GET or HEAD of a discovery index at the host's root, with no
// Authorization header of any scheme. It is refused all the same; it is
// counted apart (reason "probe") so that "missing" counts the refusals
// an operator should look at.
func discoveryProbe(r *http.Request, pathForm bool) bool {
	return !pathForm && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.Header.Get("Authorization") == "" && discoveryProbes[r.URL.Path]
}

// pageAsset reports whether p is the path of an embedded page asset.
func pageAsset(p string) bool {
	file, ok := strings.CutPrefix(p, strings.TrimSuffix(feed.PathUIAsset, "{file}"))
	return ok && file != "" && !strings.Contains(file, "/")
}

// refuse answers 401 (no token: reason "missing" or "probe") or 403 (an
// unknown one, counted against its address: refuseWrongToken) and counts
// it. A browser without a token gets a page that says how to open the
// private feed; every other client the JSON error.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, reason string, err error) {
	if s.opts.Observer != nil {
		s.opts.Observer.ObserveRefusal(reason)
	}
	if reason != "unknown" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillserver"`)
		if snap := s.cat.Current(); snap != nil && prefersHTML(r) {
			s.failUnauthorizedPage(w, r, snap.Feed())
			return
		}
		s.fail(w, r, err)
		return
	}
	s.refuseWrongToken(w, r, err)
}

// viewOf is the feed f as the request's read token sees it.
func viewOf(r *http.Request, f *feed.Feed) *feed.Feed { return readerView(r).Of(f) }

// readerView is how the request's read token sees a snapshot (view), for
// the catalogue's lookups; the zero View without one.
func readerView(r *http.Request) catalog.View {
	g, ok := r.Context().Value(grantKey{}).(grant)
	if !ok {
		return catalog.View{}
	}
	return catalog.View{Scope: g.token.Scope(), Prefix: g.prefix, Allow: g.token.Allows}
}

// tokenPrefix is the path prefix of the request's token ("" for none).
func tokenPrefix(r *http.Request) string {
	g, _ := r.Context().Value(grantKey{}).(grant)
	return g.prefix
}

// privateWriter turns a public Cache-Control into a private one: what a
// token let a client read must not be kept by shared caches.
type privateWriter struct {
	http.ResponseWriter
	done bool
}

func (w *privateWriter) private() {
	if w.done {
		return
	}
	w.done = true
	h := w.Header()
	cc := h.Get("Cache-Control")
	if rest, ok := strings.CutPrefix(cc, "public"); ok {
		h.Set("Cache-Control", "private"+rest)
	} else if cc == "" {
		// A path-form request has no Authorization header to keep shared
		// caches away (RFC 9111 §3.5): say it.
		h.Set("Cache-Control", "private")
	}
}

func (w *privateWriter) WriteHeader(status int) {
	w.private()
	w.ResponseWriter.WriteHeader(status)
}

func (w *privateWriter) Write(b []byte) (int, error) {
	w.private()
	return w.ResponseWriter.Write(b)
}

func (w *privateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

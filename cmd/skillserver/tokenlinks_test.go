package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"golang.org/x/net/html"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestPathTokenLinksFollow: every URL the server hands out under a path
// token keeps the prefix, so a client that follows it needs no header:
// the Link header and the text of /, the API catalog's anchors and
// hrefs, the OpenAPI description's server URL, the agent card's URL,
// the source of find's hits, and the links, forms and assets of the
// HTML catalogue, of a skill's page and of the not-found page. Each
// answers 200 without Authorization. On an open feed the same URLs
// carry no prefix and answer too.
func TestPathTokenLinksFollow(t *testing.T) {
	skills, agents := exampleTree(t)
	private, _ := startPrivate(t)
	open := startServer(t, "--skills", skills, "--agents", agents)
	for _, tc := range []struct {
		name   string
		ts     *testServer
		prefix string
	}{
		{"private feed, path token", private, "/t/" + fixture.AllSecret},
		{"open feed", open, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.ts.URL + tc.prefix
			found := handedOut(t, base)
			for _, want := range []string{"link", "text of /", "api-catalog", "openapi servers", "agent card", "find", "catalogue page", "skill page", "not-found page"} {
				if !slices.ContainsFunc(found, func(u foundURL) bool { return u.where == want }) {
					t.Errorf("no URL found in the %s", want)
				}
			}
			for _, u := range found {
				if !strings.HasPrefix(u.url, base+"/") {
					t.Errorf("%s hands out %s, which is not under %s/", u.where, u.url, base)
				}
				if tc.prefix == "" && strings.Contains(u.url, "/t/") {
					t.Errorf("%s hands out %s: a path token on an open feed", u.where, u.url)
				}
				// The default client sends no Authorization header.
				if resp, body := fixture.Fetch(t, http.MethodGet, u.url, "", ""); resp.StatusCode != http.StatusOK {
					t.Errorf("%s hands out %s, which answers %d: %s", u.where, u.url, resp.StatusCode, body)
				}
			}
		})
	}
}

type foundURL struct{ where, url string }

// handedOut collects, resolved to absolute URLs, the URLs that the
// responses a client starting from base+"/" gets name.
func handedOut(t *testing.T, base string) []foundURL {
	t.Helper()
	var out []foundURL
	add := func(where string, from *url.URL, ref string) {
		u, err := from.Parse(ref)
		if err != nil {
			t.Errorf("%s: %q is no URL: %v", where, ref, err)
			return
		}
		u.Fragment = ""
		out = append(out, foundURL{where, u.String()})
	}
	get := func(u, accept string, want int) (*url.URL, *http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, body := fixture.Send(t, req)
		if resp.StatusCode != want {
			t.Fatalf("GET %s (Accept %q): %d, want %d: %s", u, accept, resp.StatusCode, want, body)
		}
		return req.URL, resp, body
	}

	// / for a program: its Link header and its line of text.
	from, resp, body := get(base+"/", "", http.StatusOK)
	for _, m := range linkTarget.FindAllStringSubmatch(resp.Header.Get("Link"), -1) {
		add("link", from, m[1])
	}
	if _, ref, ok := strings.Cut(strings.TrimSpace(string(body)), " is at "); ok {
		ref, _, _ = strings.Cut(ref, " ")
		add("text of /", from, ref)
	}

	// The API catalog: every anchor and href.
	from, _, body = get(base+"/.well-known/api-catalog", "", http.StatusOK)
	for _, key := range []string{"anchor", "href"} {
		for _, ref := range jsonStrings(t, body, key) {
			add("api-catalog", from, ref)
		}
	}

	// The OpenAPI description: its server URL, relative to where it is
	// served, with one of its GET paths.
	from, _, body = get(base+"/openapi.yaml", "", http.StatusOK)
	var spec struct {
		Servers []struct{ URL string } `yaml:"servers"`
	}
	if err := yaml.Unmarshal(body, &spec); err != nil {
		t.Fatal(err)
	}
	for _, s := range spec.Servers {
		server, err := from.Parse(s.URL)
		if err != nil {
			t.Fatalf("servers url %q: %v", s.URL, err)
		}
		add("openapi servers", server, strings.TrimSuffix(server.Path, "/")+"/api/v1/info")
	}

	// The agent card's URL.
	from, _, body = get(base+"/.well-known/agent-card.json", "", http.StatusOK)
	var card struct{ URL string }
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	add("agent card", from, card.URL)

	// The skills CLI's find: each hit's source is the feed's URL.
	from, _, body = get(base+"/api/search?q=review", "", http.StatusOK)
	for _, src := range jsonStrings(t, body, "source") {
		add("find", from, src+"/")
	}

	// The HTML catalogue, a skill's page and the not-found page: every link, form and asset.
	for _, p := range []struct {
		where, path string
		status      int
	}{{"catalogue page", "/", http.StatusOK}, {"skill page", "/ui/skills/k8s-deploy", http.StatusOK}, {"not-found page", "/ui/skills/no-such-skill", http.StatusNotFound}} {
		from, _, body = get(base+p.path, "text/html", p.status)
		doc, err := html.Parse(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			for _, a := range n.Attr {
				if (a.Key == "href" || a.Key == "src" || a.Key == "action") && !strings.HasPrefix(a.Val, "#") {
					add(p.where, from, a.Val)
				}
			}
		}
	}
	return out
}

// linkTarget is the target of one link of an RFC 8288 Link header.
var linkTarget = regexp.MustCompile(`<([^>]*)>`)

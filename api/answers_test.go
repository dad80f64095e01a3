package api_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/config"
	"github.com/skillserver/skillserver/internal/feed"
	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/httpapi"
	"github.com/skillserver/skillserver/internal/metrics"
	"github.com/skillserver/skillserver/internal/page"
)

// TestOpenAPIOperationsAnswer requests every documented operation, with
// its parameters' examples, from a server holding the example tree and
// from one still starting. Each answer's status must be documented for
// that operation, with its content type, its headers, and a body valid
// against the referenced schema. GETs must answer 200, and HEAD, 304, 206
// and 416 are tried where documented; other operations are sent bare.
// Every path is also asked with a method it does not document: 405.
func TestOpenAPIOperationsAnswer(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	schemas := loadSchemas(t)
	log := slog.New(slog.DiscardHandler)
	opts := httpapi.Options{BaseURL: "https://skills.example.com", Build: httpapi.BuildInfo{Version: "v0.0.0-test", GoVersion: runtime.Version()},
		Metrics: metrics.New(metrics.Build{Version: "v0.0.0-test"}).Handler(),
		// The read API's bounds as configured by default (a zero field is off).
		MaxSearchResults: config.Default[int]("max_search_results"), MaxUpdateChecks: config.Default[int]("max_update_checks"),
		MaxBodyBytes: config.Default[int]("max_body_bytes"), MaxQueryBytes: config.Default[int]("max_query_bytes")}

	skills, agents := fixture.ExampleTree(t, "..")
	// The agent card speaks for the server: name and version come from
	// configuration and the build, as in cmd/skillserver.
	server := feed.ServerInfo{Name: "skillserver", Description: "Contract test server.", Version: "v0.0.0-test"}
	cat := catalog.New(catalog.Source{SkillsDir: skills, AgentsDir: agents, Server: server}, log)
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	withAdmin := opts
	withAdmin.AdminToken, withAdmin.Reloader = adminToken, reloader{cat}
	ready := httpapi.NewServer(cat, withAdmin, log)
	ready.SetReady(true)
	starting := httpapi.NewServer(catalog.New(catalog.Source{SkillsDir: skills}, log), opts, log)

	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		ops := doc.operations(t, path)
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			for method, op := range ops {
				target := examplePath(t, path, doc.parameters(t, path, op))
				if path == feed.PathUIAsset {
					target = page.AssetHrefs()[0] // its name holds its digest
				}
				c := responseChecker{t: t, doc: doc, schemas: schemas, op: op}
				if method == http.MethodGet && path != feed.PathUIProblems {
					checkGet(t, c, ready, target)
				} else {
					// A bare request (no credentials, no body): whatever
					// it answers must be documented.
					c.check(ready, method, target)
				}
				// Before the first scan: whatever it answers must be documented.
				c.check(starting, method, target)
			}
			checkMethodNotAllowed(t, doc, schemas, ready, path)
		})
	}

	// Admin reload, with and without the right token.
	reload, ok := doc.operations(t, "/-/reload")[http.MethodPost]
	if !ok {
		t.Fatal("POST /-/reload is not documented")
	}
	c := responseChecker{t: t, doc: doc, schemas: schemas, op: reload}
	for _, tt := range []struct {
		auth string
		want int
	}{
		{"Bearer " + adminToken, http.StatusOK},
		{"Bearer wrong", http.StatusForbidden},
		{"", http.StatusUnauthorized},
	} {
		if r := c.check(ready, http.MethodPost, "/-/reload", "Authorization", tt.auth); r.Code != tt.want {
			t.Errorf("POST /-/reload with Authorization %q = %d, want %d", tt.auth, r.Code, tt.want)
		}
	}

	// The problems page, with the admin token in either form, a wrong one
	// and none.
	problems, ok := doc.operations(t, feed.PathUIProblems)[http.MethodGet]
	if !ok {
		t.Fatal("GET /-/problems is not documented")
	}
	c = responseChecker{t: t, doc: doc, schemas: schemas, op: problems}
	for _, tt := range []struct {
		auth string
		want int
	}{
		{"Bearer " + adminToken, http.StatusOK},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+adminToken)), http.StatusOK},
		{"Bearer wrong", http.StatusForbidden},
		{"Basic " + base64.StdEncoding.EncodeToString([]byte("admin:wrong")), http.StatusForbidden},
		{"", http.StatusUnauthorized},
	} {
		if r := c.check(ready, http.MethodGet, feed.PathUIProblems, "Authorization", tt.auth); r.Code != tt.want {
			t.Errorf("GET /-/problems with Authorization %q = %d, want %d", tt.auth, r.Code, tt.want)
		}
	}

	checkSearchPaging(t, doc, schemas, ready)
	checkUpdatesBodies(t, doc, schemas, ready)
	checkAgentCards(t, ready)
}

// checkAgentCards fetches the agent card at both its paths: the same
// bytes, valid against the A2A schema itself.
func checkAgentCards(t *testing.T, h http.Handler) {
	t.Helper()
	card := serve(h, http.MethodGet, "/.well-known/agent-card.json")
	old := serve(h, http.MethodGet, "/.well-known/agent.json")
	if card.Code != http.StatusOK || old.Code != http.StatusOK || card.Body.String() != old.Body.String() {
		t.Errorf("agent-card.json (%d) and agent.json (%d) differ:\n%s\n%s", card.Code, old.Code, card.Body, old.Body)
	}
	body, err := decodeJSON(card.Body.Bytes())
	if err != nil {
		t.Fatalf("agent card: %v", err)
	}
	if err := a2aAgentCard(t).Validate(body); err != nil {
		t.Errorf("the served agent card is not an A2A v0.3.0 AgentCard:\n%v\n%s", err, card.Body)
	}
}

// checkSearchPaging asks the search routes with paging parameters, good
// and bad: every answer documented, bad values 400, X-Total-Count the
// total before paging.
func checkSearchPaging(t *testing.T, doc *openAPIDoc, schemas schemaSet, h http.Handler) {
	t.Helper()
	for _, path := range []string{"/api/v1/skills", "/api/v1/subagents"} {
		op, ok := doc.operations(t, path)[http.MethodGet]
		if !ok {
			t.Fatalf("GET %s is not documented", path)
		}
		c := responseChecker{t: t, doc: doc, schemas: schemas, op: op}
		all := c.check(h, http.MethodGet, path)
		total, err := strconv.Atoi(all.Header().Get("X-Total-Count"))
		if all.Code != http.StatusOK || err != nil || total == 0 {
			t.Fatalf("GET %s = %d, X-Total-Count %q: want 200 and a positive count", path, all.Code, all.Header().Get("X-Total-Count"))
		}
		for _, tt := range []struct {
			query string
			want  int
			n     int // results expected on a 200; -1 for "any"
		}{
			{"?take=1", http.StatusOK, 1},
			{"?take=0", http.StatusOK, 0},
			{"?skip=" + strconv.Itoa(total), http.StatusOK, 0},
			{"?take=1000", http.StatusOK, min(total, 100)},
			{"?q=zzzz-no-such-thing", http.StatusOK, -1},
			{"?skip=-1", http.StatusBadRequest, 0},
			{"?take=-1", http.StatusBadRequest, 0},
			{"?take=ten", http.StatusBadRequest, 0},
		} {
			r := c.check(h, http.MethodGet, path+tt.query)
			if r.Code != tt.want {
				t.Errorf("GET %s%s = %d, want %d", path, tt.query, r.Code, tt.want)
				continue
			}
			if r.Code != http.StatusOK {
				continue
			}
			if got := r.Header().Get("X-Total-Count"); tt.n >= 0 && got != strconv.Itoa(total) {
				t.Errorf("GET %s%s: X-Total-Count %s, want %d (the total before paging)", path, tt.query, got, total)
			}
			body, err := decodeJSON(r.Body.Bytes())
			if n := len(asArray(body)); err != nil || tt.n >= 0 && n != tt.n {
				t.Errorf("GET %s%s: %d results (%v), want %d", path, tt.query, n, err, tt.n)
			}
		}
	}
}

func asArray(v any) []any {
	a, _ := v.([]any)
	return a
}

// checkUpdatesBodies posts real bodies to check-updates: the valid
// request examples answer 200, too many items or the wrong shape 400.
func checkUpdatesBodies(t *testing.T, doc *openAPIDoc, schemas schemaSet, h http.Handler) {
	t.Helper()
	const path = "/api/v1/skills/check-updates"
	op, ok := doc.operations(t, path)[http.MethodPost]
	if !ok {
		t.Fatalf("POST %s is not documented", path)
	}
	c := responseChecker{t: t, doc: doc, schemas: schemas, op: op}
	type post struct {
		file string
		body []byte // without file
		want int
	}
	var posts []post
	for _, f := range exampleFiles(t, "valid", "check-updates-request") {
		posts = append(posts, post{file: f, want: http.StatusOK})
	}
	for _, name := range []string{"object-not-array", "version-is-number", "digest-malformed"} {
		posts = append(posts, post{file: filepath.Join(exampleDir, "invalid", "check-updates-request", name+".json"), want: http.StatusBadRequest})
	}
	// One item more than the default max_update_checks: valid by the
	// schema (the bound is configurable), refused by this server.
	over := "[" + strings.TrimSuffix(strings.Repeat(`{"name":"k8s-deploy","version":"1.0.0"},`, 101), ",") + "]"
	posts = append(posts, post{file: "101 items", body: []byte(over), want: http.StatusBadRequest})
	for _, p := range posts {
		b := p.body
		if b == nil {
			var err error
			if b, err = os.ReadFile(p.file); err != nil {
				t.Fatal(err)
			}
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		r := c.checkRequest(h, req)
		if r.Code != p.want {
			t.Errorf("POST %s with %s = %d, want %d\n%s", path, p.file, r.Code, p.want, r.Body.Bytes())
			continue
		}
		if r.Code != http.StatusOK {
			continue
		}
		sent, _ := decodeJSON(b)
		got, _ := decodeJSON(r.Body.Bytes())
		if len(asArray(got)) != len(asArray(sent)) {
			t.Errorf("POST %s with %s: %d answers for %d items", path, p.file, len(asArray(got)), len(asArray(sent)))
		}
	}
}

const adminToken = "test-admin-token"

// reloader lets the admin endpoint rescan the test catalogue.
type reloader struct{ cat *catalog.Catalog }

func (r reloader) ReloadNow(ctx context.Context) (*catalog.Snapshot, error) { return r.cat.Reload(ctx) }

// checkGet requests a GET operation plainly, with HEAD, conditionally and
// with ranges where the operation documents them.
func checkGet(t *testing.T, c responseChecker, h http.Handler, target string) {
	t.Helper()
	r := c.check(h, http.MethodGet, target)
	if r.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200", target, r.Code)
	}
	head := c.check(h, http.MethodHead, target)
	if head.Code != r.Code || head.Body.Len() != 0 || head.Header().Get("Content-Type") != r.Header().Get("Content-Type") {
		t.Errorf("HEAD %s = %d with %d body bytes and type %q; GET gave %d, %q",
			target, head.Code, head.Body.Len(), head.Header().Get("Content-Type"), r.Code, r.Header().Get("Content-Type"))
	}
	if etag := r.Header().Get("ETag"); etag != "" && c.documents(http.StatusNotModified) {
		if r := c.check(h, http.MethodGet, target, "If-None-Match", etag); r.Code != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match: %d, want 304", target, r.Code)
		}
	}
	if c.documents(http.StatusPartialContent) {
		if r := c.check(h, http.MethodGet, target, "Range", "bytes=0-0"); r.Code != http.StatusPartialContent {
			t.Errorf("GET %s with Range bytes=0-0: %d, want 206", target, r.Code)
		}
	}
	if c.documents(http.StatusRequestedRangeNotSatisfiable) {
		if r := c.check(h, http.MethodGet, target, "Range", "bytes=999999999-"); r.Code != http.StatusRequestedRangeNotSatisfiable {
			t.Errorf("GET %s with a Range past the end: %d, want 416", target, r.Code)
		}
	}
}

// checkMethodNotAllowed asks a path with a method it does not document:
// 405, with an Allow header listing exactly the documented methods of
// every path template the request matches. Templates can overlap:
// /api/v1/skills/check-updates (POST) is also /api/v1/skills/{name}
// (GET, HEAD) for a skill named check-updates, and Allow lists both.
func checkMethodNotAllowed(t *testing.T, doc *openAPIDoc, schemas schemaSet, h http.Handler, path string) {
	t.Helper()
	ops := doc.operations(t, path)
	var anyOp operation
	for _, op := range ops {
		anyOp = op
		break
	}
	target := examplePath(t, path, doc.parameters(t, path, anyOp))
	var allowed []string
	targetPath, _, _ := strings.Cut(target, "?")
	for p := range doc.Paths {
		if !templateRegexp(p).MatchString(targetPath) {
			continue
		}
		for m := range doc.operations(t, p) {
			allowed = append(allowed, m)
			if m == http.MethodGet {
				allowed = append(allowed, http.MethodHead)
			}
		}
	}
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	var probe string
	for _, m := range []string{http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodGet} {
		if !slices.Contains(allowed, m) {
			probe = m
			break
		}
	}
	c := responseChecker{t: t, doc: doc, schemas: schemas, op: anyOp}
	r := c.checkWith(h, probe, target, doc.Components.Responses["MethodNotAllowed"])
	var allow []string
	for _, m := range strings.Split(r.Header().Get("Allow"), ",") {
		allow = append(allow, strings.TrimSpace(m))
	}
	slices.Sort(allow)
	if r.Code != http.StatusMethodNotAllowed || !slices.Equal(allow, allowed) {
		t.Errorf("%s %s = %d, Allow %q; want 405 allowing %q", probe, target, r.Code, allow, allowed)
	}
}

// templateRegexp matches the request paths a documented path template
// stands for: {path} (the catch-all) takes one or more segments, any
// other parameter part of one segment.
func templateRegexp(template string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range templateParam.FindAllStringSubmatchIndex(template, -1) {
		b.WriteString(regexp.QuoteMeta(template[last:m[0]]))
		if template[m[2]:m[3]] == "path" {
			b.WriteString(".+")
		} else {
			b.WriteString("[^/]+")
		}
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(template[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// examplePath fills a path template with its parameters' examples.
func examplePath(t *testing.T, path string, params []parameter) string {
	t.Helper()
	values := make(map[string]string)
	query := url.Values{}
	for _, p := range params {
		switch {
		case p.In == "path":
			values[p.Name] = fmt.Sprint(p.Example)
		case p.In == "query" && p.Required && p.Example != nil:
			query.Set(p.Name, fmt.Sprint(p.Example)) // the ClawHub routes name their item in the query
		}
	}
	target := templateParam.ReplaceAllStringFunc(path, func(m string) string {
		v, ok := values[m[1:len(m)-1]]
		if !ok || v == "<nil>" {
			t.Fatalf("%s: no example for %s", path, m)
		}
		segs := strings.Split(v, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		return strings.Join(segs, "/")
	})
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	return target
}

type responseChecker struct {
	t       *testing.T
	doc     *openAPIDoc
	schemas schemaSet
	op      operation
}

func (c responseChecker) documents(status int) bool {
	_, ok := c.op.Responses[strconv.Itoa(status)]
	return ok
}

// check sends a request and checks the answer against the operation's
// documented response for its status.
func (c responseChecker) check(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	c.t.Helper()
	return c.checkRequest(h, newRequest(method, target, header...))
}

// checkRequest sends req and checks the answer like check.
func (c responseChecker) checkRequest(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	c.t.Helper()
	r := httptest.NewRecorder()
	h.ServeHTTP(r, req)
	method, target := req.Method, req.URL.RequestURI()
	want, ok := c.doc.response(c.op, r.Code)
	if !ok {
		c.t.Errorf("%s %s answered %d, which the operation does not document (or its $ref does not resolve)", method, target, r.Code)
		return r
	}
	c.compare(method, target, r, want)
	return r
}

func (c responseChecker) checkWith(h http.Handler, method, target string, want response, header ...string) *httptest.ResponseRecorder {
	c.t.Helper()
	r := serve(h, method, target, header...)
	c.compare(method, target, r, want)
	return r
}

func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(method, target, header...))
	return rec
}

// newRequest is a bodiless request with header's name/value pairs set.
func newRequest(method, target string, header ...string) *http.Request {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// compare checks r against a documented response: headers present,
// content type listed, and a JSON body valid against its schema file.
func (c responseChecker) compare(method, target string, r *httptest.ResponseRecorder, want response) {
	c.t.Helper()
	where := fmt.Sprintf("%s %s (%d)", method, target, r.Code)
	for name := range want.Headers {
		if r.Header().Get(name) == "" {
			c.t.Errorf("%s: documented header %s is missing", where, name)
		}
	}
	if len(want.Content) == 0 {
		if r.Body.Len() != 0 {
			c.t.Errorf("%s: documented without content, got %d bytes", where, r.Body.Len())
		}
		return
	}
	mediaType, _, err := mime.ParseMediaType(r.Header().Get("Content-Type"))
	if err != nil {
		c.t.Errorf("%s: Content-Type %q: %v", where, r.Header().Get("Content-Type"), err)
		return
	}
	content, ok := want.Content[mediaType]
	if !ok {
		content, ok = want.Content["*/*"]
	}
	if !ok {
		c.t.Errorf("%s: Content-Type %s is not documented", where, mediaType)
		return
	}
	if method == http.MethodHead || mediaType != "application/json" || r.Code == http.StatusPartialContent {
		return
	}
	file, ok := strings.CutPrefix(content.Schema.Ref, "./schemas/")
	kind, isSchema := strings.CutSuffix(file, ".schema.json")
	sch, found := c.schemas[kind]
	if !ok || !isSchema || !found {
		c.t.Errorf("%s: JSON response schema %q is not a ./schemas/*.schema.json file", where, content.Schema.Ref)
		return
	}
	body, err := decodeJSON(r.Body.Bytes())
	if err != nil {
		c.t.Errorf("%s: body is not JSON: %v", where, err)
		return
	}
	if err := sch.Validate(body); err != nil {
		c.t.Errorf("%s: body does not match %s:\n%v\n%s", where, file, err, r.Body.Bytes())
	}
}

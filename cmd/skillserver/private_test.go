package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/check"
	"github.com/skillserver/skillserver/internal/fixture"

	"github.com/skillserver/skillserver/internal/check/checktest"
)

// startPrivate runs the example tree as a private feed, with args.
func startPrivate(t *testing.T, args ...string) (*testServer, string) {
	t.Helper()
	private, file := fixture.PrivateArgs(t, "../..")
	return startServer(t, append(private, args...)...), file
}

// privateSurfaces is a request on every surface of the feed.
var privateSurfaces = []struct{ method, path, body string }{
	{"GET", "/.well-known/agent-skills/index.json", ""},
	{"GET", "/skill/code-review/.well-known/agent-skills/index.json", ""},
	{"GET", "/.well-known/skills/index.json", ""},
	{"GET", "/.well-known/skills/code-review/SKILL.md", ""},
	{"GET", "/.well-known/agent-skills/code-review/SKILL.md", ""},
	{"GET", "/manifest.json", ""},
	{"GET", "/skills/v1/index.json", ""},
	{"GET", "/skills/v1/pages/all.json", ""},
	{"GET", "/skills/v1/code-review/index.json", ""},
	{"GET", "/subagents/v1/index.json", ""},
	{"GET", "/api/v1/skills?q=review", ""},
	{"GET", "/api/v1/subagents", ""},
	{"GET", "/api/v1/skills/code-review", ""},
	{"GET", "/api/v1/skills/code-review/latest", ""},
	{"GET", "/api/v1/skills/code-review/latest/resources", ""},
	{"GET", "/api/v1/skills/k8s-deploy/1.2.0/SKILL.md", ""},
	{"GET", "/api/v1/skills/k8s-deploy/1.2.0/archive.zip", ""},
	{"GET", "/api/v1/skills/k8s-deploy/1.2.0/scripts/deploy.sh", ""},
	{"POST", "/api/v1/skills/check-updates", `[{"name":"code-review","version":"0"}]`},
	{"GET", "/api/v1/blobs/sha256/" + strings.Repeat("0", 64), ""},
	{"GET", "/.well-known/agent-card.json", ""},
	{"GET", "/.well-known/agent.json", ""},
	{"GET", "/api/v1/info", ""},
	{"GET", "/health", ""},
	{"GET", "/metrics", ""},
	{"GET", "/no/such/route", ""},
}

// TestPrivateFeedRefusesWithoutToken: every surface answers 401 without
// a token and 403 with a wrong one, in either form; the probes answer.
func TestPrivateFeedRefusesWithoutToken(t *testing.T) {
	// 78 wrong tokens from one address: past auth_failures_per_minute,
	// which TestAuthFailuresAreThrottled tests.
	ts, _ := startPrivate(t, "--auth-failures-per-minute", "0")
	for _, s := range privateSurfaces {
		for _, tc := range []struct {
			name, prefix, auth string
			want               int
		}{
			{"none", "", "", http.StatusUnauthorized},
			{"other scheme", "", "Basic " + fixture.AllSecret, http.StatusUnauthorized},
			{"wrong bearer", "", "Bearer wrong-secret-0123456789", http.StatusForbidden},
			{"wrong path token", "/t/wrong-secret-0123456789", "", http.StatusForbidden},
			{"escaped path token", "/t/all%2Dsecret-0123456789abcdef", "", http.StatusForbidden},
		} {
			resp, body := fixture.Fetch(t, s.method, ts.URL+tc.prefix+s.path, tc.auth, s.body)
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s (%s): %d, want %d", s.method, s.path, tc.name, resp.StatusCode, tc.want)
				continue
			}
			var e struct{ Error, Message string }
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || e.Message == "" {
				t.Errorf("%s %s (%s): body %q is not the JSON error", s.method, s.path, tc.name, body)
			}
			challenge := resp.Header.Get("WWW-Authenticate")
			if tc.want == http.StatusUnauthorized && challenge != `Bearer realm="skillserver"` {
				t.Errorf("%s %s (%s): WWW-Authenticate %q", s.method, s.path, tc.name, challenge)
			}
			if strings.Contains(string(body), "secret-0123") {
				t.Errorf("%s %s (%s): the error body holds the token: %s", s.method, s.path, tc.name, body)
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if resp, _ := fixture.Fetch(t, "GET", ts.URL+p, "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("%s without a token: %d, want 200", p, resp.StatusCode)
		}
	}
	// The refusals are counted by reason: the tokenless GETs of the two
	// RFC indexes at the root, what the skills CLI probes, apart.
	_, metrics := fixture.Fetch(t, "GET", ts.URL+"/metrics", "Bearer "+fixture.AllSecret, "")
	for _, want := range []string{`skillserver_http_auth_refusals_total{reason="missing"} 50`, `skillserver_http_auth_refusals_total{reason="probe"} 2`, `skillserver_http_auth_refusals_total{reason="unknown"} 78`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	fixture.AssertNoSecret(t, ts)
}

// TestPrivateFeedBearerAndPathForms: both forms read the whole feed, the
// path form's documents keep the token in every URL and href, and every
// authenticated answer is private.
func TestPrivateFeedBearerAndPathForms(t *testing.T) {
	ts, _ := startPrivate(t)
	for _, s := range privateSurfaces[:len(privateSurfaces)-1] { // not the 404 route
		for _, tc := range []struct{ name, prefix, auth string }{
			{"bearer", "", "Bearer " + fixture.AllSecret},
			{"lower-case scheme", "", "bearer " + fixture.AllSecret},
			{"path", "/t/" + fixture.AllSecret, ""},
		} {
			resp, body := fixture.Fetch(t, s.method, ts.URL+tc.prefix+s.path, tc.auth, s.body)
			want := http.StatusOK
			if strings.Contains(s.path, "/blobs/") {
				want = http.StatusNotFound // no such blob, but past the token
			}
			if resp.StatusCode != want {
				t.Errorf("%s %s (%s): %d, want %d: %s", s.method, s.path, tc.name, resp.StatusCode, want, body)
				continue
			}
			h := resp.Header
			if cc := h.Get("Cache-Control"); strings.Contains(cc, "public") || !(strings.HasPrefix(cc, "private") || cc == "no-store") {
				t.Errorf("%s %s (%s): Cache-Control %q, want private", s.method, s.path, tc.name, cc)
			}
			if !slices.Contains(h.Values("Vary"), "Authorization") || h.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("%s %s (%s): Vary %q, Referrer-Policy %q", s.method, s.path, tc.name, h.Values("Vary"), h.Get("Referrer-Policy"))
			}
		}
	}

	// Under the path prefix, every absolute URL and href keeps it, and
	// the pinned artifacts it names answer, privately.
	prefix := "/t/" + fixture.AllSecret
	idx := fixture.GetIndex(t, ts.URL+prefix, "")
	if len(idx.Skills) != 5 {
		t.Fatalf("index lists %d skills, want 5", len(idx.Skills))
	}
	for _, s := range idx.Skills {
		if !strings.HasPrefix(s.URL, ts.URL+prefix+"/api/v1/blobs/sha256/") {
			t.Errorf("%s: url %q lost the path token", s.Name, s.URL)
		}
		resp, b := fixture.Fetch(t, "GET", s.URL, "", "")
		if resp.StatusCode != http.StatusOK || fixture.SHA(b) != s.Digest {
			t.Errorf("%s: GET %s: %d, digest %s", s.Name, s.URL, resp.StatusCode, fixture.SHA(b))
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "private, max-age=31536000, immutable" {
			t.Errorf("%s: pinned Cache-Control %q", s.Name, cc)
		}
	}
	for _, p := range []string{"/manifest.json", "/skills/v1/index.json", "/skills/v1/pages/all.json", "/skills/v1/k8s-deploy/index.json",
		"/subagents/v1/pages/all.json", "/api/v1/skills", "/api/v1/skills/k8s-deploy", "/api/v1/skills/support-triage/latest"} {
		_, body := fixture.Fetch(t, "GET", ts.URL+prefix+p, "", "")
		hrefs := jsonStrings(t, body, "href")
		if len(hrefs) == 0 {
			t.Errorf("%s: no href", p)
		}
		for _, h := range hrefs {
			if !strings.HasPrefix(h, prefix+"/") {
				t.Errorf("%s: href %q lost the path token", p, h)
			}
			if resp, _ := fixture.Fetch(t, "GET", ts.URL+h, "", ""); resp.StatusCode != http.StatusOK {
				t.Errorf("%s: href %s answers %d", p, h, resp.StatusCode)
			}
		}
	}
	// The same documents with a bearer token carry no prefix.
	_, body := fixture.Fetch(t, "GET", ts.URL+"/manifest.json", "Bearer "+fixture.AllSecret, "")
	for _, h := range jsonStrings(t, body, "href") {
		if strings.HasPrefix(h, "/t/") {
			t.Errorf("bearer manifest href %q has a path token", h)
		}
	}
	log := ts.Logged(t)
	if !strings.Contains(log, `"path":"/t/REDACTED/manifest.json"`) || !strings.Contains(log, `"token":"all"`) {
		t.Errorf("the request log names neither the redacted path nor the token's name:\n%s", log)
	}
	fixture.AssertNoSecret(t, ts)
}

// jsonStrings collects the string values of key anywhere in a document.
func jsonStrings(t *testing.T, body []byte, key string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == key {
					out = append(out, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	slices.Sort(out)
	return out
}

// TestPrivateFeedScopedToken: a scoped token sees only its items, on every
// surface, and everything else is 404.
func TestPrivateFeedScopedToken(t *testing.T) {
	ts, _ := startPrivate(t)
	team := "Bearer " + fixture.TeamSecret
	all := fixture.GetIndex(t, ts.URL, "Bearer "+fixture.AllSecret)
	idx := fixture.GetIndex(t, ts.URL, team)
	var names []string
	for _, s := range idx.Skills {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "code-review,k8s-deploy" {
		t.Fatalf("scoped index lists %s", got)
	}
	for _, tc := range []struct{ path, key, want string }{
		{"/.well-known/skills/index.json", "name", "code-review,k8s-deploy"},
		{"/skills/v1/pages/all.json", "name", "code-review,k8s-deploy"},
		{"/subagents/v1/pages/all.json", "name", "changelog-reviewer"},
		{"/api/v1/skills", "name", "code-review,k8s-deploy"},
		{"/api/search?q=", "name", "code-review,k8s-deploy"},
		{"/.well-known/agent-card.json", "id", "code_review,k8s_deploy"},
	} {
		if got := strings.Join(jsonStrings(t, get200(t, ts.URL+tc.path, team), tc.key), ","); got != tc.want {
			t.Errorf("scoped %s lists %s, want %s", tc.path, got, tc.want)
		}
	}
	var info struct{ Skills, SkillVersions int }
	if err := json.Unmarshal(get200(t, ts.URL+"/api/v1/info", team), &info); err != nil || info.Skills != 2 || info.SkillVersions != 4 {
		t.Errorf("scoped info counts %+v (%v), want 2 skills, 4 versions", info, err)
	}
	_, body := fixture.Fetch(t, "POST", ts.URL+"/api/v1/skills/check-updates", team, `[{"name":"release-notes","version":"0"},{"name":"code-review","version":"0"}]`)
	var checks []struct {
		Name  string
		Known bool
	}
	if err := json.Unmarshal(body, &checks); err != nil || len(checks) != 2 || checks[0].Known || !checks[1].Known {
		t.Errorf("scoped check-updates: %s", body)
	}
	// Everything of other items is 404, as if it did not exist.
	for _, s := range all.Skills {
		if s.Name == "code-review" || s.Name == "k8s-deploy" {
			continue
		}
		out := []string{s.URL, ts.URL + "/api/v1/blobs/sha256/" + strings.TrimPrefix(s.Digest, "sha256:"),
			ts.URL + "/skill/" + s.Name + "/.well-known/agent-skills/index.json", ts.URL + "/skills/v1/" + s.Name + "/index.json",
			ts.URL + "/api/v1/skills/" + s.Name, ts.URL + "/api/v1/skills/" + s.Name + "/latest",
			ts.URL + "/.well-known/skills/" + s.Name + "/SKILL.md", ts.URL + "/.well-known/agent-skills/" + s.Name + "/SKILL.md"}
		for _, u := range out {
			if resp, _ := fixture.Fetch(t, "GET", u, team, ""); resp.StatusCode != http.StatusNotFound {
				t.Errorf("scoped GET %s: %d, want 404", u, resp.StatusCode)
			}
			if resp, _ := fixture.Fetch(t, "GET", u, "Bearer "+fixture.AllSecret, ""); resp.StatusCode != http.StatusOK {
				t.Errorf("unscoped GET %s: %d, want 200", u, resp.StatusCode)
			}
		}
	}
	for _, u := range []string{"/subagents/v1/technical-support-diagnostician/index.json", "/api/v1/subagents/technical-support-diagnostician"} {
		if resp, _ := fixture.Fetch(t, "GET", ts.URL+u, team, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("scoped GET %s: %d, want 404", u, resp.StatusCode)
		}
	}
	// Its own blobs answer.
	for _, s := range idx.Skills {
		u := ts.URL + "/api/v1/blobs/sha256/" + strings.TrimPrefix(s.Digest, "sha256:")
		if resp, b := fixture.Fetch(t, "GET", u, team, ""); resp.StatusCode != http.StatusOK || fixture.SHA(b) != s.Digest {
			t.Errorf("scoped GET %s: %d", u, resp.StatusCode)
		}
	}
	fixture.AssertNoSecret(t, ts)
}

func get200(t *testing.T, u, auth string) []byte {
	t.Helper()
	resp, body := fixture.Fetch(t, "GET", u, auth, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	return body
}

// TestPrivateFeedTokenFileReload: rewriting the file adds and removes
// tokens without a restart; a bad file keeps the tokens in force.
func TestPrivateFeedTokenFileReload(t *testing.T) {
	ts, file := startPrivate(t)
	status := func(secret string) func() int {
		return func() int {
			resp, _ := fixture.Fetch(t, "GET", ts.URL+"/manifest.json", "Bearer "+secret, "")
			return resp.StatusCode
		}
	}
	fixture.WriteTokens(t, file, "new "+fixture.NewSecret+" *\n")
	fixture.Eventually(t, 10*time.Second, "the new token works", func() error {
		if c := status(fixture.NewSecret)(); c != http.StatusOK {
			return fmt.Errorf("new token: %d", c)
		}
		return nil
	})
	if c := status(fixture.AllSecret)(); c != http.StatusForbidden {
		t.Errorf("removed token: %d, want 403", c)
	}
	fixture.WriteTokens(t, file, "new "+fixture.NewSecret+" *\nbroken\n")
	fixture.Eventually(t, 10*time.Second, "the bad file is reported", func() error {
		if !strings.Contains(ts.Stderr.String(), file+":2: want NAME SECRET") {
			return fmt.Errorf("no error naming line 2")
		}
		return nil
	})
	if c := status(fixture.NewSecret)(); c != http.StatusOK {
		t.Errorf("after a bad reload the previous token answers %d, want 200", c)
	}
	fixture.AssertNoSecret(t, ts)
}

// TestPrivateFeedSIGHUPReloadsTokens: with the file watch off, SIGHUP
// re-reads the token file.
func TestPrivateFeedSIGHUPReloadsTokens(t *testing.T) {
	skills, _ := exampleTree(t)
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\n")
	ts := startServer(t, "--skills", skills, "--read-tokens-file", file, "--watch=false")
	fixture.WriteTokens(t, file, "new "+fixture.NewSecret+" *\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 10*time.Second, "SIGHUP loads the new token", func() error {
		if resp, _ := fixture.Fetch(t, "GET", ts.URL+"/manifest.json", "Bearer "+fixture.NewSecret, ""); resp.StatusCode != http.StatusOK {
			return fmt.Errorf("new token: %d", resp.StatusCode)
		}
		return nil
	})
	if resp, _ := fixture.Fetch(t, "GET", ts.URL+"/manifest.json", "Bearer "+fixture.AllSecret, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("removed token: %d, want 403", resp.StatusCode)
	}
	fixture.AssertNoSecret(t, ts)
}

// TestPrivateFeedRetentionKeepsScope: after a reload replaced an
// out-of-scope skill, its old pinned URL still answers the tokens that
// see it (retention) and stays 404 for a scoped token.
func TestPrivateFeedRetentionKeepsScope(t *testing.T) {
	skills, agents := fixture.ExampleTree(t, "../..")
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\nteam "+fixture.TeamSecret+" code-*\n")
	ts := startServer(t, "--skills", skills, "--agents", agents, "--read-tokens-file", file, "--watch-debounce", "10ms")
	var old string
	for _, s := range fixture.GetIndex(t, ts.URL, "Bearer "+fixture.AllSecret).Skills {
		if s.Name == "release-notes" {
			old = s.URL
		}
	}
	mustWrite(t, filepath.Join(skills, "release-notes", "SKILL.md"), fixture.SkillDoc("release-notes", ""))
	fixture.Eventually(t, 10*time.Second, "the edit is published", func() error {
		for _, s := range fixture.GetIndex(t, ts.URL, "Bearer "+fixture.AllSecret).Skills {
			if s.Name == "release-notes" && s.URL == old {
				return fmt.Errorf("still the old version")
			}
		}
		return nil
	})
	if resp, _ := fixture.Fetch(t, "GET", old, "Bearer "+fixture.AllSecret, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("retained pinned URL for the full token: %d, want 200", resp.StatusCode)
	}
	if resp, _ := fixture.Fetch(t, "GET", old, "Bearer "+fixture.TeamSecret, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("retained pinned URL of an out-of-scope skill for a scoped token: %d, want 404", resp.StatusCode)
	}
}

// TestPrivateFeedBadTokenFileAtStartup: a malformed line stops startup
// with an error naming the line.
func TestPrivateFeedBadTokenFileAtStartup(t *testing.T) {
	skills, _ := exampleTree(t)
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "ok "+fixture.AllSecret+" *\nshort abc *\n")
	var stderr fixture.SyncBuffer
	code := runMain(t.Context(), []string{"serve", "--listen", "127.0.0.1:0", "--skills", skills, "--read-tokens-file", file},
		func(string) string { return "" }, io.Discard, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), file+":2: token \"short\"") || strings.Contains(stderr.String(), fixture.AllSecret) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

// TestSyncPrivateFeedWithBearer: the netclaw-like client syncs a private
// feed with its key as a bearer token, and fails without it.
func TestSyncPrivateFeedWithBearer(t *testing.T) {
	ts, _ := startPrivate(t)
	anon := check.New(ts.URL)
	if _, err := anon.SyncSkills(t.Context()); err == nil {
		t.Fatal("a sync without the key succeeded")
	}
	for _, tc := range []struct {
		token          string
		skills, agents int
	}{{fixture.AllSecret, 5, 2}, {fixture.TeamSecret, 2, 1}} {
		c := check.New(ts.URL)
		c.Token = tc.token
		checktest.SyncPass(t, c)
		if len(c.Skills) != tc.skills || len(c.Agents) != tc.agents {
			t.Errorf("synced %d skills, %d agents; want %d, %d", len(c.Skills), len(c.Agents), tc.skills, tc.agents)
		}
	}
	fixture.AssertNoSecret(t, ts)
}

// TestPrivateFeedMetricsListenerIsOpen: /metrics on its own listener needs
// no read token (that listener is kept off the public network), while on
// the main listener it does.
func TestPrivateFeedMetricsListenerIsOpen(t *testing.T) {
	skills, _ := exampleTree(t)
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\n")
	addr := fixture.FreePort(t)
	ts := startServer(t, "--skills", skills, "--read-tokens-file", file, "--metrics-listen", addr)
	if resp, body := fixture.Fetch(t, "GET", "http://"+addr+"/metrics", "", ""); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "skillserver_build_info") {
		t.Errorf("metrics listener without a token: %d", resp.StatusCode)
	}
	if resp, _ := fixture.Fetch(t, "GET", ts.URL+"/api/v1/info", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("main listener without a token: %d, want 401", resp.StatusCode)
	}
}

// TestPrivateFeedMetricsNeedTheWholeTree: /metrics on the main listener
// counts the whole tree, so a scoped token gets 404 there, as for
// anything outside its scope; a token of every item reads them. Before,
// the team token read 3 skills and 2 problems where /health told it of
// its own items only.
func TestPrivateFeedMetricsNeedTheWholeTree(t *testing.T) {
	ts, _ := startPrivate(t)
	for _, tc := range []struct {
		name, prefix, auth string
		want               int
	}{
		{"scoped bearer", "", "Bearer " + fixture.TeamSecret, http.StatusNotFound},
		{"scoped path token", "/t/" + fixture.TeamSecret, "", http.StatusNotFound},
		{"whole-tree bearer", "", "Bearer " + fixture.AllSecret, http.StatusOK},
		{"whole-tree path token", "/t/" + fixture.AllSecret, "", http.StatusOK},
	} {
		resp, body := fixture.Fetch(t, "GET", ts.URL+tc.prefix+"/metrics", tc.auth, "")
		if resp.StatusCode != tc.want {
			t.Errorf("%s: /metrics answered %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if leaked := strings.Contains(string(body), "skillserver_snapshot"); leaked != (tc.want == http.StatusOK) {
			t.Errorf("%s: the body holds the metrics: %v, want %v", tc.name, leaked, tc.want == http.StatusOK)
		}
		if tc.want == http.StatusNotFound {
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil || e.Error != "not_found" {
				t.Errorf("%s: body %.200q is not the not_found error", tc.name, body)
			}
		}
	}
}

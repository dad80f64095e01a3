package metrics

import (
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/httpapi"
)

func TestRequestMetricsUseRoutePatterns(t *testing.T) {
	m := New(Build{Version: "1.2.3"})
	cat := catalog.New(catalog.Source{SkillsDir: "../../testdata/skills"}, slog.New(slog.DiscardHandler))
	snap, err := cat.Reload(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := snap.Counts()
	m.ObserveReload(Reload{Published: &Published{Generation: c.Generation, Skills: c.Skills, Agents: c.Agents,
		SkillVersions: c.SkillVersions, AgentVersions: c.AgentVersions, Errors: c.Errors, Warnings: c.Warnings,
		Bytes: c.Bytes, Fingerprint: c.Fingerprint}})
	s := httpapi.NewServer(cat, httpapi.Options{Observer: m, Metrics: m.Handler()}, slog.New(slog.DiscardHandler))
	for _, p := range []string{
		"/api/v1/skills/k8s-deploy/1.2.0/SKILL.md",
		"/api/v1/skills/code-review/1.0.0/SKILL.md",
		"/api/v1/skills/nope/1.0.0/SKILL.md",
		"/no/such/path",
	} {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	route := "/api/v1/skills/{name}/{version}/SKILL.md"
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues(route, "GET", "200")); got != 2 {
		t.Errorf("200s on %s = %v, want 2", route, got)
	}
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues(route, "GET", "404")); got != 1 {
		t.Errorf("404s on %s = %v, want 1", route, got)
	}
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues("unmatched", "GET", "404")); got != 1 {
		t.Errorf("unmatched 404s = %v, want 1", got)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, raw := range []string{"k8s-deploy", "code-review", "/no/such/path", "sha256:"} {
		if strings.Contains(body, raw) {
			t.Errorf("exposition carries a raw path, name or digest: %q", raw)
		}
	}
	for _, want := range []string{
		`skillserver_build_info{commit="",goversion=`, `skillserver_snapshot_skills 5`, `skillserver_snapshot_generation 1`,
		`skillserver_reload_total{result="success"} 1`, `skillserver_reload_total{result="failure"} 0`,
		`skillserver_snapshot_versions{kind="skill"} 7`, `skillserver_scan_problems{severity="error"} 0`,
		`skillserver_snapshot_content_info{fingerprint="` + cat.Current().Fingerprint() + `"} 1`,
		"go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

func TestReloadFailureKeepsSnapshotFigures(t *testing.T) {
	m := New(Build{})
	m.ObserveReload(Reload{Duration: time.Millisecond})
	if got := testutil.ToFloat64(m.reloads.WithLabelValues("failure")); got != 1 {
		t.Errorf("failures = %v", got)
	}
	if got := testutil.ToFloat64(m.generation); got != 0 {
		t.Errorf("generation moved on a failed reload: %v", got)
	}
}

func TestLintClean(t *testing.T) {
	problems, err := testutil.GatherAndLint(New(Build{Version: "x"}).Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestReloadWatchdogMetrics(t *testing.T) {
	m := New(Build{})
	if got := testutil.ToFloat64(m.reloadLastOK); got != 0 {
		t.Errorf("last success before any reload = %v, want 0", got)
	}
	before := float64(time.Now().UnixNano()) / 1e9
	m.ObserveReload(Reload{Published: &Published{Generation: 1}})
	after := float64(time.Now().UnixNano()) / 1e9
	if got := testutil.ToFloat64(m.reloadLastOK); got < before || got > after {
		t.Errorf("last success = %v, want between %v and %v", got, before, after)
	}
	ok := testutil.ToFloat64(m.reloadLastOK)
	m.ObserveReload(Reload{})
	if got := testutil.ToFloat64(m.reloadLastOK); got != ok {
		t.Errorf("a failed reload moved the last success to %v", got)
	}
	m.ObserveReloadsInProgress(2)
	m.ObserveReloadAbandoned()
	if got := testutil.ToFloat64(m.reloadsRunning); got != 2 {
		t.Errorf("in progress = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.reloadAbandoned); got != 1 {
		t.Errorf("abandoned = %v, want 1", got)
	}
}

// Any token is a valid method; before, each invented one added a series
// for good (20,000 of them took /metrics from 135 KB to 32 MB).
func TestInventedMethodsShareOneSeries(t *testing.T) {
	m := New(Build{Version: "1.2.3"})
	cat := catalog.New(catalog.Source{SkillsDir: "../../testdata/skills"}, slog.New(slog.DiscardHandler))
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := httpapi.NewServer(cat, httpapi.Options{Observer: m}, slog.New(slog.DiscardHandler))
	for i := range 1000 {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("M"+strconv.Itoa(i), "/healthz", nil))
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("X"+strconv.Itoa(i), "/no/"+strconv.Itoa(i), nil))
	}
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	// "other" 405s (chi matches no route for them), and GET /healthz.
	if n := testutil.CollectAndCount(m.httpRequests); n > 3 {
		t.Errorf("%d request series after 2,000 requests with invented methods; want at most 3", n)
	}
	if n := testutil.CollectAndCount(m.httpDuration); n > 3 {
		t.Errorf("%d duration series after 2,000 requests with invented methods; want at most 3", n)
	}
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues("unmatched", "other", "405")); got != 2000 {
		t.Errorf(`"other" 405s = %v, want 2000`, got)
	}
}
func TestCodeLabel(t *testing.T) {
	for code, want := range map[int]string{200: "200", 404: "404", 499: "499", 599: "5xx", 299: "2xx", 0: "other", 1000: "other"} {
		if got := codeLabel(code); got != want {
			t.Errorf("codeLabel(%d) = %q, want %q", code, got, want)
		}
	}
}

// TestForRouteCountsAsObserveRequest: the pre-bound observer of a route
// adds to the same series, with the same folded labels, as
// ObserveRequest.
func TestForRouteCountsAsObserveRequest(t *testing.T) {
	bound, direct := New(Build{Version: "1"}), New(Build{Version: "1"})
	route := "/api/v1/skills/{name}/{version}/SKILL.md"
	observe := bound.ForRoute(route)
	for _, r := range []struct {
		method string
		code   int
	}{{"GET", 200}, {"GET", 200}, {"HEAD", 304}, {"BREW", 200}, {"GET", 799}, {"GET", 1500}, {"GET", -1}, {"GET", 499}} {
		observe(r.method, r.code, time.Millisecond)
		direct.ObserveRequest(route, r.method, r.code, time.Millisecond)
	}
	for _, c := range []struct {
		name string
		b, d prometheus.Collector
	}{{"skillserver_http_requests_total", bound.httpRequests, direct.httpRequests}, {"skillserver_http_request_duration_seconds", bound.httpDuration, direct.httpDuration}} {
		b, err := testutil.CollectAndFormat(c.b, expfmt.TypeTextPlain, c.name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := testutil.CollectAndFormat(c.d, expfmt.TypeTextPlain, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(d) {
			t.Errorf("%s: ForRoute gave\n%s\nObserveRequest gave\n%s", c.name, b, d)
		}
		if !strings.Contains(string(b), `method="other"`) || !strings.Contains(string(b), `route="`+route+`"`) {
			t.Errorf("%s: no folded method or no route label in\n%s", c.name, b)
		}
	}
}

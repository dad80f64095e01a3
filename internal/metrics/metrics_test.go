package metrics

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/skillserver/skillserver/internal/catalog"
	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/httpapi"
)

func TestRequestMetricsUseRoutePatterns(t *testing.T) {
	m := New(Build{Version: "1.2.3"})
	cat := catalog.New(catalog.Source{SkillsDir: "../../testdata/skills"}, slog.New(slog.DiscardHandler), catalog.Options{OnReload: m.ObserveReload})
	if _, err := cat.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
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
	m.ObserveReload(catalog.ReloadResult{Err: errors.New("root gone"), Duration: time.Millisecond})
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
	m.ObserveReload(catalog.ReloadResult{Snapshot: &catalog.Snapshot{Generation: 1, Store: content.NewBuilder().Store()}})
	after := float64(time.Now().UnixNano()) / 1e9
	if got := testutil.ToFloat64(m.reloadLastOK); got < before || got > after {
		t.Errorf("last success = %v, want between %v and %v", got, before, after)
	}
	ok := testutil.ToFloat64(m.reloadLastOK)
	m.ObserveReload(catalog.ReloadResult{Err: errors.New("root gone")})
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

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// The Prometheus test scrapes the real server with a real Prometheus,
// lints its exposition with promtool and loads deploy/prometheus-rules.yaml
// against it. It needs Debian's prometheus package, so it only runs when
// asked:
//
//	SKILLSERVER_PROMETHEUS_TEST=1 go test -run Prometheus ./e2e/
//
// .ci/run installs prometheus and sets SKILLSERVER_PROMETHEUS_TEST=1.

const promJob = "skillserver" // the job name deploy/prometheus-rules.yaml selects

func requirePrometheusTest(t *testing.T) (prom, promtool string) {
	t.Helper()
	if os.Getenv("SKILLSERVER_PROMETHEUS_TEST") != "1" {
		t.Skip("scrapes the server with a real Prometheus; enable with SKILLSERVER_PROMETHEUS_TEST=1 (needs prometheus and promtool: apt-get install prometheus; .ci/run does)")
	}
	var err error
	if prom, err = exec.LookPath("prometheus"); err != nil {
		t.Fatalf("SKILLSERVER_PROMETHEUS_TEST=1 but prometheus is not on PATH (apt-get install prometheus): %v", err)
	}
	if promtool, err = exec.LookPath("promtool"); err != nil {
		t.Fatalf("SKILLSERVER_PROMETHEUS_TEST=1 but promtool is not on PATH (apt-get install prometheus): %v", err)
	}
	return prom, promtool
}

// promtoolRun runs promtool with args and stdin, failing the test unless
// it exits 0.
func promtoolRun(t *testing.T, promtool string, stdin []byte, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// promSample is one element of a Prometheus instant-query vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

func (s promSample) value() string { v, _ := s.Value[1].(string); return v }

// promGet GETs a Prometheus API path and decodes its data field into v.
func promGet(base, path string, v any) error {
	resp, err := http.Get(base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("GET %s: status %d: %w: %s", path, resp.StatusCode, err, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", path, env.Status, env.Error)
	}
	return json.Unmarshal(env.Data, v)
}

func promQuery(base, query string) ([]promSample, error) {
	var data struct {
		ResultType string       `json:"resultType"`
		Result     []promSample `json:"result"`
	}
	if err := promGet(base, "/api/v1/query?query="+url.QueryEscape(query), &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %q, want vector", query, data.ResultType)
	}
	return data.Result, nil
}

// TestPrometheusScrape runs the server on the example tree and a real
// Prometheus that scrapes it every second with deploy/prometheus-rules.yaml
// loaded, and checks what an operator's dashboards and alerts rely on.
func TestPrometheusScrape(t *testing.T) {
	prom, promtool := requirePrometheusTest(t)
	rules, err := filepath.Abs("../deploy/prometheus-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	promtoolRun(t, promtool, nil, "check", "rules", rules)
	promtoolRun(t, promtool, nil, "test", "rules", strings.TrimSuffix(rules, ".yaml")+".test.yaml")

	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	// Traffic on a parameterised route and on no route at all: their
	// series must be labelled by pattern, never by the raw path.
	if r, _ := ts.Get(t, "/api/v1/skills/k8s-deploy/1.2.0/archive.zip"); r.StatusCode != http.StatusOK {
		t.Fatalf("archive: status %d", r.StatusCode)
	}
	if r, _ := ts.Get(t, "/no/such/path"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("/no/such/path: status %d", r.StatusCode)
	}
	if r, _ := ts.Get(t, "/readyz"); r.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: status %d", r.StatusCode)
	}

	// promtool lints the exposition (names, units, HELP, counter
	// suffixes). It reports nothing today, Go and process collectors
	// included, so any output at all is a regression.
	resp, exposition := ts.Get(t, "/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d", resp.StatusCode)
	}
	if out := promtoolRun(t, promtool, exposition, "check", "metrics"); strings.TrimSpace(out) != "" {
		t.Errorf("promtool check metrics complained:\n%s", out)
	}

	dir := t.TempDir()
	target := strings.TrimPrefix(ts.URL, "http://")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: %s
    static_configs:
      - targets: [%q]
`, rules, promJob, target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	promtoolRun(t, promtool, nil, "check", "config", cfgFile)

	addr := fixture.FreePort(t)
	promURL := "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	promLog := &fixture.SyncBuffer{}
	cmd := exec.CommandContext(ctx, prom,
		"--config.file="+cfgFile,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = promLog, promLog
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog)
		}
	})

	// Poll until Prometheus has scraped the server and evaluated the
	// rules, or 60s have passed; report what was still missing.
	fixture.Eventually(t, 60*time.Second, "Prometheus at "+promURL+" scrapes "+target+" and evaluates the rules", func() error {
		if cmd.ProcessState != nil {
			t.Fatalf("prometheus exited: %s", cmd.ProcessState)
		}
		if missing := promMissing(promURL); len(missing) > 0 {
			return fmt.Errorf("still lacks:\n  %s", strings.Join(missing, "\n  "))
		}
		return nil
	})

	// Every route label is a pattern. Only the requests above and
	// Prometheus's own scrapes have happened, so this is the whole set.
	series, err := promQuery(promURL, fmt.Sprintf(`skillserver_http_requests_total{job=%q}`, promJob))
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, s := range series {
		route := s.Metric["route"]
		routes = append(routes, route)
		if (route != "unmatched" && !strings.HasPrefix(route, "/")) || strings.Contains(route, "k8s-deploy") || strings.Contains(route, "/no/such") {
			t.Errorf("route label %q is not a route pattern", route)
		}
	}
	for _, want := range []string{"/api/v1/skills/{name}/{version}/archive.zip", "/readyz", "/metrics", "unmatched"} {
		if !slices.Contains(routes, want) {
			t.Errorf("no skillserver_http_requests_total series with route=%q; routes: %q", want, routes)
		}
	}

	// The example tree is healthy, so no example alert may be pending or
	// firing.
	var alerts struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	if err := promGet(promURL, "/api/v1/alerts", &alerts); err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts.Alerts {
		t.Errorf("alert %s is %s on a healthy server: %v", a.Labels["alertname"], a.State, a.Labels)
	}

	// Every skillserver_ metric the rules use is one the server exports.
	scraped, err := promLabelValues(promURL, "__name__")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range metricNameRE.FindAllString(string(text), -1) {
		if !slices.Contains(scraped, name) {
			t.Errorf("%s uses %s, which Prometheus did not scrape from the server", filepath.Base(rules), name)
		}
	}
}

// promMissing lists what Prometheus does not show yet: the target up, the
// example tree's 5 skills, request series, and every rule evaluated.
func promMissing(base string) []string {
	var missing []string
	check := func(query, want string) {
		res, err := promQuery(base, query)
		switch {
		case err != nil:
			missing = append(missing, fmt.Sprintf("%s: %v", query, err))
		case len(res) != 1 || res[0].value() != want:
			missing = append(missing, fmt.Sprintf("%s = %v, want one sample of %s", query, res, want))
		}
	}
	check(fmt.Sprintf(`up{job=%q}`, promJob), "1")
	check(fmt.Sprintf(`skillserver_snapshot_skills{job=%q}`, promJob), "5")
	check(fmt.Sprintf(`count(skillserver_http_requests_total{job=%q,route=~".*[{].*"})`, promJob), "1")

	var rules struct {
		Groups []struct {
			Rules []struct {
				Name   string `json:"name"`
				Health string `json:"health"`
				Error  string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := promGet(base, "/api/v1/rules", &rules); err != nil {
		return append(missing, "rules: "+err.Error())
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" {
				missing = append(missing, fmt.Sprintf("rule %s: health %q %s", r.Name, r.Health, r.Error))
			}
		}
	}
	if n == 0 {
		missing = append(missing, "rules: none loaded")
	}
	return missing
}

func promLabelValues(base, label string) ([]string, error) {
	var values []string
	err := promGet(base, "/api/v1/label/"+label+"/values", &values)
	return values, err
}

// metricNameRE finds skillserver metric names in text; a histogram's
// series suffixes are part of the match.
var metricNameRE = regexp.MustCompile(`\bskillserver_[a-z_]*[a-z]\b`)
